/**
 * What the record log's outside-candidates trigger (sidecar storage/postgres/outside-log.ts) costs the database per
 * decision on the hot path (`tsx bench/fleet/outside-trigger.ts`). Not a test: it prints numbers.
 *
 * Decisions are consumed through the replay store as a sidecar with the record log on consumes them (one claim statement
 * inserts the replay row, the record and its pending row), in blocks that alternate between the trigger on
 * `writ_audit_records` dropped, present, and replaced by an empty trigger function (the floor of any statement-level
 * trigger with a transition table). Two measures, because a shared machine makes either alone unreliable:
 *
 * - the executor time of each claim statement: every one is first run under `EXPLAIN (ANALYZE, TIMING OFF)` in a
 *   transaction rolled back, then for real; the low percentiles are what the statement costs when not preempted;
 * - the CPU time of the PostgreSQL backends serving the store (from /proc; other clients of the server do not count)
 *   per decision, without the explaining: the denominator of the trigger's share.
 *
 * Two shapes: one claim at a time (one statement each) and 64 outstanding (grouped statements, as under load).
 * PostgreSQL: WRIT_TEST_POSTGRES_URL (default postgresql://postgres@127.0.0.1:5432/postgres), on this machine.
 * Environment: BENCH_BLOCKS (10 per variant), BENCH_DECISIONS (2,000 per block).
 */
import { executionFingerprint } from "@writ/runtime";
import { PostgresReplayStore } from "../../sidecar/src/storage/postgres/replay-store.js";
import pg from "pg";
import { MIGRATIONS, migrate } from "../../sidecar/src/storage/postgres/migrations.js";
import { at, decision } from "../../sidecar/test/audit/support.js";
import { createTestDatabase } from "../../test/support/postgres.js";
import { processCpuSeconds } from "../sidecar/load.js";

const BLOCKS = Number(process.env["BENCH_BLOCKS"] ?? 10);
const DECISIONS = Number(process.env["BENCH_DECISIONS"] ?? 2_000);
const TRIGGER = "writ_audit_records_outside_log";
/** The trigger as migration 5 creates it (migrations/0005-audit-trail-at-volume.sql). */
const CREATE = MIGRATIONS.flatMap((m) => m.statements).find((s) => s.startsWith(`CREATE TRIGGER ${TRIGGER} `))!;
const VARIANTS = {
  without: null,
  with: CREATE,
  empty: CREATE.replace(`EXECUTE FUNCTION ${TRIGGER}()`, "EXECUTE FUNCTION bench_empty_trigger()"),
} as const;
type Variant = keyof typeof VARIANTS;
const APPLICATION = "writ-outside-trigger-bench";
/** The CPU of processes `pids` together, µs. */
function cpuOf(pids: readonly number[]): number {
  return pids.reduce((us, pid) => us + processCpuSeconds(pid) * 1e6, 0);
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/** A pool whose claim statements are explained first when `explaining()`, their executor times pushed to `onTime`. */
function benchPool(url: string, explaining: () => boolean, onTime: (us: number) => void): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 10, idleTimeoutMillis: 0, application_name: APPLICATION });
  pool.on("connect", (client) => {
    const original = client.query.bind(client) as unknown as (config: unknown, values?: unknown) => Promise<pg.QueryResult>;
    const query = async (config: unknown, values: unknown): Promise<pg.QueryResult> => {
      const text = typeof config === "string" ? config : (config as { text: string }).text;
      if (explaining() && text.includes("INSERT INTO writ_replay")) {
        await original("BEGIN");
        try {
          const { rows } = await original(
            `EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ${text}`,
            typeof config === "string" ? values : (config as { values: unknown }).values,
          );
          onTime((rows[0] as { "QUERY PLAN": [{ "Execution Time": number }] })["QUERY PLAN"][0]["Execution Time"] * 1_000);
        } finally {
          await original("ROLLBACK");
        }
      }
      return original(config, values);
    };
    (client as unknown as { query: unknown }).query = (config: unknown, values?: unknown, callback?: unknown) => {
      const done = typeof values === "function" ? values : callback;
      const result = query(config, typeof values === "function" ? undefined : values);
      if (typeof done !== "function") return result;
      result.then(
        (r) => (done as (e: unknown, r: unknown) => void)(null, r),
        (e: unknown) => (done as (e: unknown) => void)(e),
      );
      return undefined;
    };
  });
  return pool;
}

let serial = 0;

async function block(store: PostgresReplayStore, outstanding: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next++ < DECISIONS) {
      const executionId = `bench-${serial++}`;
      const body = decision({ executionId, recordedAt: at(serial) });
      const result = await store.consume(executionFingerprint(executionId), {
        now: Date.parse(body.recordedAt),
        record: { kind: "decision", body },
      });
      if (!result.ok) throw new Error(`consume refused: ${JSON.stringify(result)}`);
    }
  };
  await Promise.all(Array.from({ length: outstanding }, worker));
}

async function main(): Promise<void> {
  const database = await createTestDatabase();
  const url = (database.pool.options as { connectionString: string }).connectionString;
  await migrate(database.pool);
  await database.pool.query("CREATE FUNCTION bench_empty_trigger() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$");
  let explaining = false;
  let times: number[] = [];
  const pool = benchPool(
    url,
    () => explaining,
    (us) => times.push(us),
  );
  try {
    // Every connection of the pool open first, so the backends measured are the ones that serve the blocks.
    await Promise.all(Array.from({ length: 10 }, () => pool.query("SELECT pg_sleep(0.05)")));
    const { rows } = await pool.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [APPLICATION]);
    const pids = rows.map((r) => r.pid);
    const server = (await pool.query<{ server_version: string }>("SHOW server_version")).rows[0]!.server_version;
    console.log(`PostgreSQL ${server}; ${BLOCKS} blocks × ${DECISIONS} decisions per variant and shape, alternating`);
    for (const outstanding of [1, 64]) {
      const store = new PostgresReplayStore(pool, { recordLog: { logId: "bench" }, claimStatements: outstanding === 1 ? 1 : 4 });
      const executor: Record<Variant, number[]> = { without: [], with: [], empty: [] };
      const cpu: number[] = [];
      let statements = 0;
      for (let b = 0; b < BLOCKS; b++) {
        const order = Object.keys(VARIANTS) as Variant[];
        for (const variant of b % 2 === 0 ? order : order.reverse()) {
          await database.pool.query(`DROP TRIGGER IF EXISTS ${TRIGGER} ON writ_audit_records`);
          if (VARIANTS[variant] !== null) await database.pool.query(VARIANTS[variant]);
          // The record log's sequencing keeps the pending set small; here, each block starts with it empty.
          await database.pool.query("TRUNCATE writ_audit_log_pending");
          times = [];
          explaining = true;
          await block(store, outstanding);
          explaining = false;
          executor[variant].push(...times.map((us) => (us * times.length) / DECISIONS));
          if (variant === "without") {
            statements += times.length;
            const before = cpuOf(pids);
            await block(store, outstanding);
            cpu.push((cpuOf(pids) - before) / DECISIONS);
          }
        }
      }
      const perDecision = (variant: Variant, p: number): number => percentile(executor[variant], p);
      const denominator = percentile(cpu, 0.5);
      console.log(
        `\n${outstanding} outstanding: ${(statements / (BLOCKS * DECISIONS)).toFixed(3)} statements per decision; server CPU per decision ${denominator.toFixed(0)} µs (median of ${cpu.length} blocks, no trigger)`,
      );
      for (const p of [0.1, 0.25, 0.5]) {
        const base = perDecision("without", p);
        const line = (["with", "empty"] as const)
          .map(
            (v) => `${v} +${(perDecision(v, p) - base).toFixed(1)} µs (${(((perDecision(v, p) - base) / denominator) * 100).toFixed(1)}%)`,
          )
          .join(", ");
        console.log(`  p${p * 100} executor time per decision: without ${base.toFixed(1)} µs; ${line}`);
      }
      await store.close();
    }
  } finally {
    await pool.end();
    await database.drop();
  }
}

await main();
