import { afterAll, describe, expect, it } from "vitest";
import { StoreUnavailableError, type TransitionRecord } from "@writ/runtime";
import { migrate } from "../../../src/storage/postgres/migrations.js";
import { PostgresReplayStore } from "../../../src/storage/postgres/replay-store.js";
import { RECORDS_TABLE, REPLAY_TABLE } from "../../../src/storage/postgres/tables.js";
import { T0, decisionRecord, into, ok, replayStoreContract } from "@writ/runtime/testing";
import { createTestDatabase, postgresUnavailable, testPool } from "../../../../test/support/postgres.js";
import pg from "pg";

const unavailable = await postgresUnavailable();

if (unavailable !== null) {
  describe.skip(`PostgresReplayStore: ${unavailable}`, () => {
    it("runs the replay store contract on PostgreSQL", () => undefined);
  });
} else {
  const database = await createTestDatabase();
  await migrate(database.pool);
  afterAll(() => database.drop());
  /** Each test starts from empty tables (the migrated schema, the sidecar's own). */
  const emptied = async (): Promise<void> => void (await database.pool.query(`TRUNCATE ${REPLAY_TABLE}, ${RECORDS_TABLE}`));

  replayStoreContract("PostgresReplayStore", async () => {
    await emptied();
    return {
      store: new PostgresReplayStore(database.pool),
      dispose: emptied,
      records: async () => {
        const { rows } = await database.pool.query<{ kind: TransitionRecord["kind"]; body: string }>(
          `SELECT kind, body FROM ${RECORDS_TABLE}`,
        );
        return rows.map(({ kind, body }) => ({ kind, body: JSON.parse(body) }) as TransitionRecord);
      },
    };
  });

  describe("PostgresReplayStore", () => {
    it("two stores on one table (two sidecars of a fleet): each fingerprint is won exactly once", async () => {
      await emptied();
      const other = testPool((database.pool.options as { connectionString: string }).connectionString);
      try {
        const a = new PostgresReplayStore(database.pool);
        const b = new PostgresReplayStore(other);
        const fingerprints = Array.from({ length: 100 }, (_, i) => `fp-${i}`);
        const results = await Promise.all(
          fingerprints.flatMap((fp) => [
            a.consume(fp, { now: T0 }),
            b.consume(fp, { now: T0 }),
            a.reserve(fp, { now: T0 }),
            b.reserve(fp, { now: T0 }),
          ]),
        );
        for (let i = 0; i < fingerprints.length; i++) expect(results.slice(i * 4, i * 4 + 4).filter((r) => r.ok)).toHaveLength(1);
        const token = await into(a, "pending", "pending_override");
        const resolutions = await Promise.all(
          Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b).resolveOverride("pending", token, true, { now: T0 + 5 })),
        );
        expect(resolutions.filter((r) => r.ok)).toHaveLength(1);
        ok(resolutions.find((r) => r.ok)!);
      } finally {
        await other.end();
      }
    });

    it("a transition whose record cannot be inserted is not committed either (one statement)", async () => {
      await emptied();
      const store = new PostgresReplayStore(database.pool);
      ok(await store.consume("fp-1", { now: T0, record: decisionRecord("exec-dup") }));
      // A second decision record for the same execution breaks the records table's key: the whole statement fails.
      await expect(store.consume("fp-2", { now: T0, record: decisionRecord("exec-dup") })).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(await store.read("fp-2")).toBeNull();
      ok(await store.consume("fp-2", { now: T0 }));
    });

    it("claims made together share statements: 300 concurrent consumes of 100 fingerprints, one winner and one record each", async () => {
      await emptied();
      let statements = 0;
      const counting = new Proxy(database.pool, {
        get: (target, name) =>
          name === "query" ? (...args: Parameters<pg.Pool["query"]>) => (statements++, target.query(...args)) : Reflect.get(target, name),
      });
      // One statement at a time: the 300 claims, made in one tick, go as three statements of 100, one after the other.
      const store = new PostgresReplayStore(counting, { claimStatements: 1 });
      const claims = Array.from({ length: 300 }, (_, i) => ({
        fp: `fp-${Math.floor(i / 3)}`,
        executionId: `exec-${Math.floor(i / 3)}`,
        i,
      }));
      const results = await Promise.all(claims.map((c) => store.consume(c.fp, { now: T0, record: decisionRecord(c.executionId) })));
      const winners = claims.filter((_, i) => results[i]!.ok);
      expect(winners.map((w) => w.fp).sort()).toEqual(Array.from({ length: 100 }, (_, i) => `fp-${i}`).sort());
      // Of the three claims of a fingerprint, the first submitted won, in one statement with the others or before them.
      expect(winners.map((w) => w.i)).toEqual(Array.from({ length: 100 }, (_, i) => 3 * i));
      expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.reason === "conflict" && r.entry?.state === "consumed")).toBe(true);
      const { rows } = await database.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${RECORDS_TABLE}`);
      expect(Number(rows[0]!.n)).toBe(100);
      // 300 claims and 200 reads of the losers' entries, in far fewer than 500 statements.
      expect(statements).toBeLessThan(250);
    });

    it("a claim the server refuses for its data fails alone: the other claims of its statement commit", async () => {
      await emptied();
      const store = new PostgresReplayStore(database.pool, { claimStatements: 1 });
      ok(await store.consume("fp-first", { now: T0, record: decisionRecord("exec-taken") }));
      const ids = Array.from({ length: 20 }, (_, i) => (i === 7 ? "exec-taken" : `exec-${i}`));
      const results = await Promise.allSettled(ids.map((id, i) => store.consume(`fp-${i}`, { now: T0, record: decisionRecord(id) })));
      expect(results.map((r) => r.status)).toEqual(ids.map((id) => (id === "exec-taken" ? "rejected" : "fulfilled")));
      expect((results[7] as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
      expect(await store.read("fp-7")).toBeNull();
      for (const i of [0, 6, 8, 19]) expect(await store.read(`fp-${i}`)).toMatchObject({ state: "consumed" });
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
