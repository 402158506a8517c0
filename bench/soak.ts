/**
 * Soak benchmark (`npm run bench:soak`, i.e. `tsx bench/soak.ts`). Not a test: it prints numbers, and PASS or FAIL
 * against the soak's targets (docs/benchmarks.md, "Soak").
 *
 * What it measures: whether a sidecar's latency and responsiveness depend on how much history its store holds. For each
 * engine (LMDB, PostgreSQL), the same run on a store of BENCH_SOAK_DECISIONS decisions and on one of BENCH_SOAK_SMALL,
 * one after the other:
 *   - the built sidecar (`sidecar/dist/main.js`: run `npm run build` first) on the seeded store, with decisions'
 *     retention on and the replay sweep and the retention prune every 20 and 25 s, so a 60 s run spans at least two
 *     sweeps and a retention run, each with work to do (bench/soak/seed.ts `arm`: entries expiring during the run, and
 *     decisions just past the retention, written before it starts);
 *   - `POST /evaluate` of the shipped payments.transfer@1.2.0 at 50 connections, unique executionIds, by `wrk`
 *     (bench/sidecar/wrk.ts; needs the Debian package: `apt-get install wrk`), the sidecar pinned to one core and the load
 *     generator with the probes to another (taskset);
 *   - beside it (bench/soak/probes.ts): `/health` every 50 ms, `/metrics` every second for the largest event-loop delay
 *     (`writ_event_loop_delay_max_seconds`, else prom-client's `writ_nodejs_eventloop_lag_max_seconds`), whole-log
 *     exports (`GET /audit/export`, read by curl and dropped) one after another, so one runs all the time whatever the
 *     log's length, a tail export from the latest checkpoint every
 *     second, and audit queries in a loop (decisions with and without filters, one decision, stats, the log's state, an
 *     inclusion proof);
 *   - beside it too, the disk's own floor: a durable 4 KB write (write and fdatasync) to a file beside the stores every
 *     20 ms, timed, so a stall of the disk shows as one, whatever the sidecar does;
 *   - before the load, on the quiet sidecar: the tail export from the latest checkpoint (about 2 KB);
 *   - after, the store opened again: what the sweeps and the retention run removed.
 * It prints p50, p99, p99.9 and max of `/evaluate`, the slowest `/health`, the largest event-loop delay, the exports'
 * durations and sizes, the queries' latencies, the disk probe, the sidecar's CPU per request and its disk reads (major
 * page faults, from /proc), how long its event loop waited for its core (the kernel's run-queue wait: a loop delay it
 * did not cause), the PostgreSQL server's CPU per request, for both stores, the ratios, and each target.
 *
 * Seeding (bench/soak/seed.ts, decisions.ts): through the store's own write path in bulk, not HTTP: the sidecar's own
 * backend (opened as the sidecar opens it), its replay store's `consume` with the decision's record as the Authorizer
 * makes it, thousands in flight; the record log sequenced and checkpointed (signed) as it goes. Decisions are real
 * attestations of the shipped policy (one per valid test case, signed by the store's key) with the executionId,
 * fingerprint and time changed per decision: THEIR SIGNATURES DO NOT VERIFY, and nothing in the soak verifies them.
 * They are dated evenly over the past BENCH_SOAK_SPAN_DAYS. Progress, the rate and the size per decision are printed.
 * A seeded large store is kept under BENCH_SOAK_DIR and reused by later runs (each run adds its load's decisions to
 * it); the small one is seeded afresh each time.
 *
 * Settings (environment):
 *   BENCH_SOAK_DECISIONS  decisions in the large store (default 10,000,000)
 *   BENCH_SOAK_SMALL      decisions in the store it is compared with (default 10,000)
 *   BENCH_SOAK_ENGINE     lmdb | postgres | both (default both)
 *   BENCH_SOAK_DURATION   seconds of measured load (default 60); BENCH_SOAK_WARMUP seconds before it (default 3)
 *   BENCH_SOAK_CONNECTIONS  (default 50)
 *   BENCH_SOAK_RATE       requests/s to pace the load at (Poisson arrivals, bench/sidecar/wrk.ts); unset or 0: as fast as the
 *                         sidecar answers, so it runs saturated and a request waits behind the others' queue
 *   BENCH_SOAK_DIR        where stores, the policies root and sidecar logs live (default /work/soak-data). LMDB takes
 *                         about 1.4 KB of disk per decision, PostgreSQL about 3.6 KB (in its own data directory): 14 and
 *                         36 GB at 10 million. Seeding is refused when the disk lacks the room; with both engines at
 *                         10 million on a disk of less than 60 GB free, set BENCH_SOAK_KEEP=0
 *   BENCH_SOAK_KEEP=0     remove each engine's large store after its run (it is kept by default, for the next run)
 *   BENCH_SOAK_RESEED=1   seed the large store again even when a finished one is kept
 *   BENCH_SOAK_SEED_ONLY=1  seed (or find) the stores and stop: to time the seeding
 *   BENCH_SOAK_SWEEP_MS, BENCH_SOAK_PRUNE_MS  the sweep and prune intervals (default 20,000 and 25,000)
 *   BENCH_SOAK_DUE, BENCH_SOAK_EXPIRING  decisions due for retention and entries expiring, per run (1,000 and 3,000)
 *   BENCH_SOAK_EXPORTS    whole-log exports beside the load: `loop` (one after another, the default), `once`, `off`
 *   BENCH_SOAK_CPUS       `<sidecar cpus>:<load cpus>` for taskset (default 0:1 with two cores or more), or `off`
 *   BENCH_SOAK_DATABASE_CPUS  cores the PostgreSQL server's processes are moved to for each run when it runs on this
 *                         host (a taskset list; default the load's cores), or `off`: a fleet's database is on hosts of
 *                         its own, and on the sidecar's core it takes the sidecar's turns (bench/soak/database-server.ts)
 *   BENCH_SOAK_NODE_ARGS  node's flags for the sidecar, space-separated (`--cpu-prof --cpu-prof-dir=/tmp/prof`)
 *   BENCH_SOAK_SPAN_DAYS  how far back seeded decisions reach (default 365)
 *   BENCH_SOAK_COMPRESSION=on  LMDB stores seeded and run with SERVICE_AUDIT_COMPRESSION on (kept as `lmdb-<n>-compressed`)
 *   WRIT_TEST_POSTGRES_URL  the PostgreSQL server (default postgresql://postgres@127.0.0.1:5432/postgres); each store
 *                         gets a database of its own, `writ_soak_<decisions>`, schema through the sidecar's migrations
 *   BENCH_PG_DATABASE_PREFIX  what those databases are named with first, instead of `writ_` (`h5_` makes `h5_soak_<n>`):
 *                         runs side by side on one server must not share a database
 *   BENCH_SOAK_REFERENCE  seconds of the same load and probes without the export after the measured load (default 15;
 *                         0: none): the export's share of the sidecar's core and disk reads is the difference
 */
import { execFileSync } from "node:child_process";
import { arch, cpus, platform } from "node:os";
import { loadCases } from "./sidecar/policy-cases.js";
import { prepare, printSize } from "./soak/prepare.js";
import { printReport } from "./soak/report.js";
import { runOnce, type RunResult } from "./soak/run.js";
import { soakSettings } from "./soak/settings.js";
import { preparePolicies, removeStore, storeOf, storeSize } from "./soak/store.js";

async function main(): Promise<void> {
  const settings = soakSettings();
  // The probes measure latencies in this process: it runs on the load cores, away from the sidecar.
  if (settings.cpus !== null) execFileSync("taskset", ["-a", "-c", "-p", settings.cpus.load, String(process.pid)], { stdio: "ignore" });
  console.log(`node ${process.version}, ${platform()} ${arch()}, ${cpus().length} × ${cpus()[0]?.model.trim() ?? "unknown CPU"}`);
  console.log(
    `soak: ${settings.engines.join(" and ")}, ${settings.small.toLocaleString("en-US")} against ${settings.decisions.toLocaleString("en-US")} decisions; ` +
      `${settings.durationSeconds} s at ${settings.connections} connections${settings.rate === null ? ", unpaced" : `, paced at ${settings.rate} req/s`} after ${settings.warmupSeconds} s of warm-up; sweep every ${settings.sweepIntervalMs / 1000} s, prune every ${settings.pruneIntervalMs / 1000} s; stores in ${settings.root}`,
  );
  await preparePolicies(settings);
  const signalSets = (await loadCases()).valid.map((c) => c.signals);
  const tag = Date.now().toString(36);
  for (const engine of settings.engines) {
    console.log(`\n${engine}:`);
    const small = storeOf(settings, engine, settings.small);
    const large = storeOf(settings, engine, settings.decisions);
    const preparedSmall = await prepare(settings, small, true);
    const preparedLarge = await prepare(settings, large, false);
    if (preparedLarge.seeded === null) printSize(await storeSize(large), large.decisions);
    if (settings.seedOnly) continue;
    const results: RunResult[] = [];
    for (const [store, prepared] of [
      [small, preparedSmall],
      [large, preparedLarge],
    ] as const) {
      results.push(await runOnce(settings, store, prepared.manifest, signalSets, tag));
    }
    printReport(engine === "lmdb" ? "LMDB" : "PostgreSQL", results[0]!, results[1]!, settings.rate !== null);
    if (!settings.keep) await removeStore(settings, large);
  }
}

await main();
