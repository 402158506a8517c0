import { afterAll, describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../src/replay/errors.js";
import { PostgresReplayStore } from "../../src/replay/postgres-store.js";
import { T0, into, ok, replayStoreContract } from "./contract.js";
import { createTestDatabase, postgresUnavailable, testPool } from "./postgres.js";
import pg from "pg";

const unavailable = await postgresUnavailable();

if (unavailable !== null) {
  describe.skip(`PostgresReplayStore: ${unavailable}`, () => {
    it("runs the replay store contract on PostgreSQL", () => undefined);
  });
} else {
  const database = await createTestDatabase();
  afterAll(() => database.drop());
  let tables = 0;

  replayStoreContract("PostgresReplayStore", async () => {
    const table = `replay_${(tables += 1)}`;
    await PostgresReplayStore.migrate(database.pool, { table });
    return { store: new PostgresReplayStore(database.pool, { table }), dispose: async () => void (await database.pool.query(`DROP TABLE ${table}`)) };
  });

  describe("PostgresReplayStore", () => {
    it("two stores on one table (two sidecars of a fleet): each fingerprint is won exactly once", async () => {
      await PostgresReplayStore.migrate(database.pool, { table: "fleet" });
      const other = testPool((database.pool.options as { connectionString: string }).connectionString);
      try {
        const a = new PostgresReplayStore(database.pool, { table: "fleet" });
        const b = new PostgresReplayStore(other, { table: "fleet" });
        const fingerprints = Array.from({ length: 100 }, (_, i) => `fp-${i}`);
        const results = await Promise.all(fingerprints.flatMap((fp) => [a.consume(fp, { now: T0 }), b.consume(fp, { now: T0 }), a.reserve(fp, { now: T0 }), b.reserve(fp, { now: T0 })]));
        for (let i = 0; i < fingerprints.length; i++) expect(results.slice(i * 4, i * 4 + 4).filter((r) => r.ok)).toHaveLength(1);
        const token = await into(a, "pending", "pending_override");
        const resolutions = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b).resolveOverride("pending", token, true, { now: T0 + 5 })));
        expect(resolutions.filter((r) => r.ok)).toHaveLength(1);
        ok(resolutions.find((r) => r.ok)!);
      } finally {
        await other.end();
      }
    });

    it("a database it cannot reach is StoreUnavailableError (503 at the HTTP edge), never a result", async () => {
      const nowhere = new pg.Pool({ connectionString: "postgresql://postgres@127.0.0.1:1/none", connectionTimeoutMillis: 1_000 });
      try {
        const store = new PostgresReplayStore(nowhere);
        await expect(store.consume("fp", { now: T0 })).rejects.toBeInstanceOf(StoreUnavailableError);
      } finally {
        await nowhere.end();
      }
    });
  });
}
