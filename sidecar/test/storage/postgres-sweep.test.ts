/**
 * Sweeping a fleet's replay table (storage/postgres/sweep.ts): one sidecar at a time. While another sidecar holds the
 * sweep lock, a sidecar skips the round and removes nothing; once it is free, the expired entries go and the live ones
 * stay.
 */
import { PostgresReplayStore } from "@writ/runtime/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../src/storage/postgres/migrations.js";
import { SWEEP_LOCK, sweepOnce } from "../../src/storage/postgres/sweep.js";
import { createTestDatabase, postgresUnavailable, testPool, type TestDatabase } from "../../../test/support/postgres.js";

const unavailable = await postgresUnavailable();

if (unavailable !== null) {
  describe.skip(`sweeping a fleet's replay table: ${unavailable}`, () => {
    it("sweeps one sidecar at a time", () => undefined);
  });
} else {
  describe("sweeping a fleet's replay table", () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createTestDatabase();
      await migrate(database.pool);
    });
    afterAll(() => database?.drop());

    it("skips the round while another sidecar sweeps, then removes exactly the expired entries", async () => {
      const other = testPool((database.pool.options as { connectionString: string }).connectionString);
      const store = new PostgresReplayStore(database.pool);
      const now = Date.now();
      try {
        for (let i = 0; i < 20; i++) expect((await store.reserve(`expired-${i}`, { now: now - 600_000, ttlMs: 1_000 })).ok).toBe(true);
        expect((await store.reserve("live", { now, ttlMs: 300_000 })).ok).toBe(true);
        expect((await store.consume("consumed", { now: now - 600_000 })).ok).toBe(true);
        // Another sidecar of the fleet is sweeping: it holds the lock on a session of its own.
        const sweeping = await other.connect();
        await sweeping.query("SELECT pg_advisory_lock(hashtext($1))", [SWEEP_LOCK]);
        try {
          expect(await Promise.all([sweepOnce(database.pool, store), sweepOnce(database.pool, store)])).toEqual([null, null]);
          expect(await store.read("expired-0")).not.toBeNull();
        } finally {
          await sweeping.query("SELECT pg_advisory_unlock(hashtext($1))", [SWEEP_LOCK]);
          sweeping.release();
        }
        expect(await sweepOnce(database.pool, store)).toBe(20);
        expect(await store.read("expired-0")).toBeNull();
        expect(await store.read("live")).toMatchObject({ state: "reserved" });
        expect(await store.read("consumed")).toMatchObject({ state: "consumed" });
        // The lock was released: the next round sweeps (nothing left).
        expect(await sweepOnce(database.pool, store)).toBe(0);
      } finally {
        await other.end();
      }
    });
  });
}
