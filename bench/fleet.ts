/**
 * Fleet benchmark (`npm run bench:fleet`, i.e. `tsx bench/fleet.ts`). Not a test: it prints numbers.
 *
 * One run loads, in turn, with the same load generator (autocannon, in this process) and the same requests (`POST
 * /evaluate`, a unique executionId each, on the shipped payments.transfer@1.2.0, bundle signature required, audit on):
 *   - `lmdb`: one built sidecar on the embedded LMDB store (the default);
 *   - `pg`: one built sidecar on PostgreSQL (`SERVICE_STORE=postgres`, a fresh database of its own);
 *   - `pg×2`: two built sidecars on one fresh PostgreSQL database, the connections split between them (at 1
 *     connection: one connection to each, so two in all);
 *   - `pg floor`: the database's own floor (bench/fleet/postgres-floor.ts), one committed single-row INSERT per request
 *     through the same client library and pool size, and nothing else.
 * At 1 and at 50 connections, rounds alternate the four so drifting load on the shared machine hits all alike; the
 * figures are medians over the rounds. Goals: at 50 connections one sidecar on PostgreSQL reaches at least
 * 70% of the LMDB sidecar's req/s; at one connection its p50 is at most the floor's plus 0.5 ms.
 *
 * PostgreSQL: WRIT_TEST_POSTGRES_URL (default postgresql://postgres@127.0.0.1:5432/postgres, as the tests); the
 * benchmark creates its databases there and drops them. Environment: BENCH_ROUNDS (3), BENCH_DURATION (5 s),
 * BENCH_WARMUP (1 s).
 */
import { arch, cpus, platform } from "node:os";
import { DEFAULT_DATABASE } from "../sidecar/src/storage/postgres/config.js";
import { createTestDatabase, type TestDatabase } from "../test/support/postgres.js";
import { startPostgresFloor } from "./fleet/postgres-floor.js";
import type { Floor } from "./sidecar/floor.js";
import { loadSettings, runLoad, summarize, type LoadResult, type Summary } from "./sidecar/load.js";
import { loadCases, type Signals } from "./sidecar/policy-cases.js";
import { checkWrit, startWrit, type Writ } from "./sidecar/writ.js";

const { rounds: ROUNDS, duration: DURATION, warmup: WARMUP } = loadSettings();
const GOAL_THROUGHPUT = 0.7;
const GOAL_P50_OVER_FLOOR_MS = 0.5;
const CONNECTIONS = [1, 50] as const;

interface Contender {
  readonly name: string;
  readonly urls: readonly string[];
  readonly headers: Readonly<Record<string, string>>;
  readonly body: (i: number, run: number) => string;
}

const connectionString = (database: TestDatabase): string => (database.pool.options as { connectionString: string }).connectionString;

async function main(): Promise<void> {
  const cases = await loadCases();
  const sets: readonly Signals[] = cases.valid.map((c) => c.signals);
  const databases: TestDatabase[] = [];
  const sidecars: Writ[] = [];
  let floor: Floor | null = null;
  try {
    const onPostgres = async (database: TestDatabase): Promise<Writ> => {
      const writ = await startWrit({ env: { SERVICE_STORE: "postgres", SERVICE_DATABASE_URL: connectionString(database) } });
      sidecars.push(writ);
      return writ;
    };
    for (let i = 0; i < 3; i++) databases.push(await createTestDatabase());
    const [single, shared, floorDatabase] = databases as [TestDatabase, TestDatabase, TestDatabase];
    const lmdb = await startWrit();
    sidecars.push(lmdb);
    const pg = await onPostgres(single);
    // Started together, as a fleet starts: one applies the schema while the other waits for it.
    const pair = await Promise.all([onPostgres(shared), onPostgres(shared)]);
    floor = await startPostgresFloor(connectionString(floorDatabase));
    const server = await (async () => {
      const client = await single.pool.connect();
      try {
        const { rows } = await client.query<{ version: string; sync: string }>(
          "SELECT current_setting('server_version') AS version, current_setting('synchronous_commit') AS sync",
        );
        return rows[0]!;
      } finally {
        client.release();
      }
    })();
    console.log(
      `node ${process.version}, ${platform()} ${arch()}, ${cpus().length} × ${cpus()[0]?.model.trim() ?? "unknown CPU"}; load generator, sidecars and PostgreSQL share the machine`,
    );
    console.log(
      `PostgreSQL ${server.version} on the same machine, synchronous_commit ${server.sync}; sidecar pool ${DEFAULT_DATABASE.poolSize} connections each (the default)`,
    );
    console.log(`${ROUNDS} rounds × (${WARMUP} s warm-up + ${DURATION} s) per contender and connection count, alternating\n`);

    const evaluate = (writs: readonly Writ[], name: string): Contender => ({
      name,
      urls: writs.map((w) => w.evaluateUrl),
      headers: writs[0]!.headers,
      body: (i, run) => JSON.stringify(writs[0]!.evaluateBody(sets[i % sets.length]!, `fleet-bench-${run}-${i}`)),
    });
    const f = floor;
    const contenders: readonly Contender[] = [
      evaluate([lmdb], "lmdb"),
      evaluate([pg], "pg"),
      evaluate(pair, "pg×2"),
      { name: "pg floor", urls: [f.url], headers: { "content-type": "application/json" }, body: (i) => `{"i":${i}}` },
    ];
    // Every sidecar decides the test file's signal sets as it says, before anything is timed.
    for (const [name, writs] of [
      ["lmdb", [lmdb]],
      ["pg", [pg]],
      ["pg×2", pair],
    ] as const) {
      for (const [i, writ] of writs.entries()) await checkWrit(writ, cases.valid, `check-${name}-${i}`);
    }

    const results = new Map<string, LoadResult[]>();
    let run = 0;
    for (const connections of CONNECTIONS) {
      for (let round = 0; round < ROUNDS; round++) {
        for (const c of contenders) {
          run += 1;
          const runId = run;
          const result = await runLoad({
            url: c.urls,
            connections,
            durationSeconds: DURATION,
            warmupSeconds: WARMUP,
            headers: c.headers,
            makeBody: (i) => c.body(i, runId),
            expectStatus: 200,
          });
          const key = `${c.name}@${connections}`;
          results.set(key, [...(results.get(key) ?? []), result]);
          process.stdout.write(
            `  round ${round + 1} ${c.name.padEnd(9)} ${String(connections).padStart(2)} conn: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(3)} ms, p99 ${result.p99Ms.toFixed(3)} ms\n`,
          );
        }
      }
    }

    const s = (name: string, connections: number): Summary => summarize(results.get(`${name}@${connections}`)!);
    const ms = (v: number) => `${v.toFixed(3)} ms`;
    console.log(`\n${"contender".padEnd(30)}${"req/s".padStart(10)}${"p50".padStart(12)}${"p99".padStart(12)}`);
    for (const connections of CONNECTIONS) {
      for (const c of contenders) {
        const x = s(c.name, connections);
        const label = `${c.name} @ ${connections} connection${connections > 1 ? "s" : ""}${c.urls.length > 1 && connections === 1 ? " each" : ""}`;
        console.log(`${label.padEnd(30)}${x.rps.toFixed(0).padStart(10)}${ms(x.p50).padStart(12)}${ms(x.p99).padStart(12)}`);
      }
    }
    const verdict = (ok: boolean) => (ok ? "met" : "MISSED");
    const [lmdb50, pg50, pair50, floor50] = ["lmdb", "pg", "pg×2", "pg floor"].map((n) => s(n, 50)) as [Summary, Summary, Summary, Summary];
    const [lmdb1, pg1, , floor1] = ["lmdb", "pg", "pg×2", "pg floor"].map((n) => s(n, 1)) as [Summary, Summary, Summary, Summary];
    console.log("\nratios (medians of the same run):");
    console.log(
      `  50 connections: pg req/s / lmdb req/s = ${(pg50.rps / lmdb50.rps).toFixed(2)}× (goal ≥ ${GOAL_THROUGHPUT}×: ${verdict(pg50.rps / lmdb50.rps >= GOAL_THROUGHPUT)})`,
    );
    console.log(
      `  1 connection:   pg p50 - pg floor p50 = ${(pg1.p50 - floor1.p50).toFixed(3)} ms (goal ≤ ${GOAL_P50_OVER_FLOOR_MS} ms: ${verdict(pg1.p50 - floor1.p50 <= GOAL_P50_OVER_FLOOR_MS)})`,
    );
    console.log(
      `  50 connections: pg×2 req/s / pg req/s = ${(pair50.rps / pg50.rps).toFixed(2)}×; pg req/s / pg floor req/s = ${(pg50.rps / floor50.rps).toFixed(2)}×`,
    );
    console.log(`  1 connection:   pg p50 / lmdb p50 = ${(pg1.p50 / lmdb1.p50).toFixed(2)}×`);
    console.log(
      "  note: every sidecar answer is an Ed25519-signed, self-verified attestation whose replay entry and audit record are committed before it is sent; the floor only inserts a row",
    );
  } finally {
    await Promise.all([...sidecars.map((w) => w.stop()), floor?.stop()]);
    for (const database of databases) await database.drop();
  }
}

await main();
