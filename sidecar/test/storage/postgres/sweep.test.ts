/**
 * Sweeping a fleet's replay table (PostgresReplayStore `sweepRound`): one sweeping statement at a time. While another
 * sidecar's statement holds the sweep lock, a sidecar skips the round and removes nothing; once it is free, the expired
 * entries go and the live ones stay. And what a sweep costs: among 200,000 consumed rows, batches of statements that find the expired rows through
 * the expiry index, never a scan of the table (EXPLAIN of the very statements the sweep ran).
 */
import { PostgresReplayStore, SWEEP_LOCK } from "../../../src/storage/postgres/replay-store.js";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../../src/storage/postgres/migrations.js";
import { createTestDatabase, postgresUnavailable, testPool, type TestDatabase } from "../../../../test/support/postgres.js";

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
        // Another sidecar of the fleet is sweeping: its statement holds the lock in its transaction.
        const sweeping = await other.connect();
        await sweeping.query("BEGIN");
        await sweeping.query("SELECT pg_advisory_xact_lock(hashtext($1))", [SWEEP_LOCK]);
        try {
          expect(await Promise.all([store.sweepRound(), store.sweepRound()])).toEqual([null, null]);
          expect(await store.sweep()).toBe(0);
          expect(await store.read("expired-0")).not.toBeNull();
        } finally {
          await sweeping.query("COMMIT");
          sweeping.release();
        }
        expect(await store.sweepRound()).toBe(20);
        expect(await store.read("expired-0")).toBeNull();
        expect(await store.read("live")).toMatchObject({ state: "reserved" });
        expect(await store.read("consumed")).toMatchObject({ state: "consumed" });
        // The lock was released with its statement: the next round sweeps (nothing left).
        expect(await store.sweepRound()).toBe(0);
      } finally {
        await other.end();
      }
    });

    it("among 200,000 consumed rows, sweeps in batches of statements that scan the expiry index, never the table", async () => {
      await database.pool.query("TRUNCATE writ_replay");
      const now = Date.now();
      const seed = (prefix: string, state: string, count: number, expiresAt: number | null) =>
        database.pool.query(
          `INSERT INTO writ_replay (fingerprint, state, token, created_at, updated_at, expires_at)
           SELECT convert_to($1 || i, 'UTF8'), $2, 'token-' || i, $3, $3, $4 FROM generate_series(1, $5::int) AS i`,
          [prefix, state, now - 600_000, expiresAt, count],
        );
      await seed("consumed-", "consumed", 200_000, null);
      await seed("expired-", "reserved", 1_100, now - 1_000);
      await seed("failed-", "failed", 100, now - 500);
      await seed("live-", "reserved", 10, now + 300_000);
      await database.pool.query("ANALYZE writ_replay");

      const deletes: Array<{ readonly text: string; readonly values: unknown[]; rows?: number }> = [];
      const recording = new Proxy(database.pool, {
        get: (target, name) =>
          name === "query"
            ? async (config: pg.QueryConfig) => {
                const result = await target.query(config);
                if (config.text.includes("DELETE FROM"))
                  deletes.push({ text: config.text, values: config.values ?? [], rows: (result.rows[0] as { removed: number }).removed });
                return result;
              }
            : Reflect.get(target, name),
      });
      const store = new PostgresReplayStore(recording);
      expect(await store.sweepRound()).toBe(1_200);
      // Each batch its own statement: no transaction, no row lock, lasts longer than one batch.
      expect(deletes.map((d) => d.rows)).toEqual([500, 500, 200]);
      expect(new Set(deletes.map((d) => d.text)).size).toBe(1);
      const { rows } = await database.pool.query<{ state: string; n: string }>(
        "SELECT state, count(*) AS n FROM writ_replay GROUP BY state ORDER BY state",
      );
      expect(rows.map((r) => [r.state, Number(r.n)])).toEqual([
        ["consumed", 200_000],
        ["reserved", 10],
      ]);

      const statement = deletes[0]!;
      // The plan the statement gets with its value (a custom plan), and the generic plan a prepared statement ends up with.
      const custom = await database.pool.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
        `EXPLAIN (FORMAT JSON) ${statement.text}`,
        statement.values,
      );
      const client = await database.pool.connect();
      let generic: PlanNode;
      try {
        await client.query("SET plan_cache_mode = force_generic_plan");
        await client.query(`PREPARE sweep_batch(bigint, text) AS ${statement.text}`);
        generic = (
          await client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
            `EXPLAIN (FORMAT JSON) EXECUTE sweep_batch(${Number(statement.values[0])}, '${SWEEP_LOCK}')`,
          )
        ).rows[0]!["QUERY PLAN"][0].Plan;
        await client.query("DEALLOCATE sweep_batch");
        await client.query("RESET plan_cache_mode");
      } finally {
        client.release();
      }
      for (const [which, plan] of [
        ["custom", custom.rows[0]!["QUERY PLAN"][0].Plan],
        ["generic", generic],
      ] as const) {
        const nodes = flatten(plan);
        const shown = `${which}: ${nodes.map((n) => `${n["Node Type"]} ${n["Index Name"] ?? ""}`.trim()).join(", ")}`;
        // Every read of the table goes through an index: the batch through the expiry index, the rows to delete through
        // it or the primary key (the planner's choice, by how many have expired); nothing reads the table whole.
        const reads = nodes.filter((n) => n["Relation Name"] === "writ_replay" && n["Node Type"] !== "ModifyTable");
        expect(reads.length, shown).toBeGreaterThanOrEqual(2);
        for (const read of reads) {
          expect(read["Node Type"], shown).toMatch(/^(Index Scan|Index Only Scan|Bitmap Heap Scan)$/);
          if (read["Node Type"] !== "Bitmap Heap Scan")
            expect(["writ_replay_expiring", "writ_replay_pkey"], shown).toContain(read["Index Name"]);
        }
        expect(
          nodes.filter((n) => n["Node Type"] === "Seq Scan"),
          shown,
        ).toEqual([]);
        expect(
          nodes.some((n) => n["Node Type"] === "Limit" && flatten(n).some((inner) => inner["Index Name"] === "writ_replay_expiring")),
          shown,
        ).toBe(true);
      }
    });
  });
}

interface PlanNode {
  readonly "Node Type": string;
  readonly "Relation Name"?: string;
  readonly "Index Name"?: string;
  readonly Plans?: readonly PlanNode[];
}

function flatten(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(flatten)];
}
