/**
 * Instructions per decision (`npm run bench:instructions`, i.e. `tsx bench/instructions.ts`). Not a test: it prints
 * numbers. It answers "does the sidecar as it is cost more per `POST /evaluate` than it did at BENCH_BASELINE?" by
 * counting, with valgrind's callgrind, the instructions the sidecar process executes per request: all its threads, and
 * its main thread (the event loop, which bounds a sidecar's throughput) on its own.
 *
 * The two sidecars: this checkout's build (`npm run build` first; whatever the working tree held when it was built,
 * copied at the start with `wire` and `runtime`'s builds, so a rebuild meanwhile changes nothing), or with
 * BENCH_CURRENT (a git ref) that commit built; and the sidecar at BENCH_BASELINE (a git ref, default 3e7b8d4). A ref is
 * built in a scratch directory by bench/sidecar/baseline.ts. Each serves, as the sidecar benchmark's writ does
 * (bench/sidecar/writ.ts), the shipped payments.transfer@1.2.0 compiled and signed with a fresh key, bundle signatures
 * required, the default LMDB store and audit record log on, in a fresh data dir, on a port in 47100–47199; the normal
 * JIT and GC, no node flags.
 *
 * Method: zero and dump (the other way, the difference of two runs of different lengths, was not needed). The node
 * process runs under `valgrind --tool=callgrind --smc-check=all-non-file --vgdb=yes --separate-threads=yes`,
 * collecting from the start. Once it listens it must decide the policy's valid test signal sets as the test file says;
 * then it takes BENCH_WARMUP requests; then callgrind's `zero` command, BENCH_REQUESTS requests, and its `dump`
 * command: the dump's `totals:` (summed over the threads' files, and thread 1's alone) divided by BENCH_REQUESTS are
 * the figures. The commands go through vgdb as `callgrind_control -z` / `-d` send them, but with `--max-invoke-ms=0`
 * (see `control`). Requests: `POST /evaluate` with a unique executionId each, cycling through the valid signal sets,
 * from this process over 10 keep-alive connections, every answer required to be 200: as fast as they are answered
 * (10 at a time), or with BENCH_RATE on a fixed schedule. Before zeroing and before dumping the script waits SETTLE_MS,
 * so that what a request leaves behind (the record log's sequencing, lmdb-js's flushes) falls on the same side of
 * both ends. Then a few idle windows (zero, BENCH_IDLE_S seconds without requests, dump) give the rate the sidecar's
 * wall-clock timers cost, and the main thread's figure is printed without it as well.
 *
 * What makes the counts vary (measured with this script: valgrind 3.19, node 20, 2 CPUs shared with a soak test):
 * - V8 keeps compiling for ~10,000 requests: TurboFan on its worker threads costs up to 0.25 M instructions per
 *   request after 4,000 and still a few percent after 8,000; the main thread's count falls by 5% from 4,000 to
 *   10,000 requests as optimized code arrives. Hence the long warm-up.
 * - A major collection (concurrent marking and sweeping, on worker threads, ~150 M instructions) comes every few
 *   thousand requests; it and TurboFan make the all-threads count of a 2,000-request window vary by ±10%, while the
 *   main thread's varies by ~1%.
 * - Callgrind counts instructions, not time, but the sidecar's work depends on the wall clock: its timers (the record
 *   log's sequencer every 200 ms, housekeeping, probes, event-loop sampling: 1.5–3 M instructions a second when idle)
 *   and V8's time-based heuristics (heap sizing, concurrent marking). Under valgrind a request takes ~50× as long as
 *   natively, so these weigh more than at full speed, and more again when other load slows valgrind down: with
 *   12,000-request windows the all-threads count went from 1.97 M to 2.26 M per request as a busy machine stretched
 *   a window from 150 s to 316 s. BENCH_RATE (requests a second, sent on schedule) fixes the requests per wall second
 *   so that load no longer changes the mix, as long as the sidecar keeps up (runs that fall behind are flagged).
 * Compare the main thread's figures first, and run baseline and current on a machine whose load does not change much
 * meanwhile (they alternate, so a drift hits both).
 *
 * Signing threads (docs/sidecar.md, "Signing threads"): the current sidecar signs on the event loop
 * (SERVICE_SIGNING_THREADS=0), as every baseline does. With BENCH_SIGNING_THREADS=N (1 or more) no baseline is
 * built: this checkout's build with SERVICE_SIGNING_THREADS=0 is the baseline, and the same build with N threads the
 * current, so the main thread's figures show what left the event loop (the all-threads figures include the threads').
 *
 * Environment: BENCH_BASELINE (git ref, default 3e7b8d4), BENCH_CURRENT (git ref; default: this checkout's build),
 * BENCH_RUNS (runs per sidecar, alternating, each a fresh process and data dir; default 3), BENCH_WARMUP (requests,
 * default 10000), BENCH_REQUESTS (counted requests, default 5000), BENCH_RATE (counted requests a second; default 0:
 * as fast as answered), BENCH_IDLE_S (seconds per idle window, default 4; 0 for none). About 25 minutes with the
 * defaults on an otherwise idle 2-CPU machine. Everything it writes is under scratch directories in the OS temp dir,
 * removed at the end (or on SIGINT/SIGTERM) with the builds.
 */
import { execFile, execFileSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, rm, symlink } from "node:fs/promises";
import { Agent } from "node:http";
import { arch, cpus, platform, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { API_KEY, cleanUpAndExit, countDuring, freePort, live, post, startUnderCallgrind, type Count } from "./callgrind.js";
import { buildBaseline, type Baseline } from "./sidecar/baseline.js";
import { loadCases, type Signals, type ValidCase } from "./sidecar/policy-cases.js";
import { policiesRoot } from "./sidecar/writ.js";

const REPO = fileURLToPath(new URL("../", import.meta.url));
const CURRENT_MAIN = join(REPO, "sidecar", "dist", "main.js");
/** The workspaces the built sidecar runs on (`runtime` and `wire` are imported from their own `dist`). */
const BUILT = ["wire", "runtime", "sidecar"] as const;
const CONNECTIONS = 10;
/** Long enough for a few sequencing rounds (200 ms each) and lmdb-js's flushes. */
const SETTLE_MS = 3_000;
/** Idle windows per run: their median is the idle rate (one may hold a late compilation or a collection). */
const IDLE_WINDOWS = 3;

const execFileAsync = promisify(execFile);

function setting(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer ≥ ${min}, not \`${raw}\``);
  return value;
}

const BASELINE_REF = process.env["BENCH_BASELINE"] || "3e7b8d4";
const CURRENT_REF = process.env["BENCH_CURRENT"] || null;
const RUNS = setting("BENCH_RUNS", 3, 1);
const WARMUP = setting("BENCH_WARMUP", 10_000, 0);
const REQUESTS = setting("BENCH_REQUESTS", 5_000, 1);
const RATE = setting("BENCH_RATE", 0, 0);
const IDLE_S = setting("BENCH_IDLE_S", 4, 0);
const SIGNING_THREADS = setting("BENCH_SIGNING_THREADS", 0, 0);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const EXPECTED = { approve: "approved", escalate: "pending_override", reject: "rejected" } as const;

/** How a batch of requests went: its wall time, and the most waiting for an answer at once. */
interface Sent {
  readonly seconds: number;
  readonly maxInFlight: number;
}

/**
 * Sends `count` `POST /evaluate`s over CONNECTIONS keep-alive connections, every answer required to be 200: with
 * `rate` 0 as fast as they are answered, CONNECTIONS at a time; else `rate` a second on a fixed schedule.
 */
async function evaluate(url: string, sets: readonly Signals[], count: number, idPrefix: string, rate = 0): Promise<Sent> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const target = new URL(`${url}/evaluate`);
  const t0 = performance.now();
  let inFlight = 0;
  let maxInFlight = 0;
  const send = async (i: number) => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const body = JSON.stringify({
      executionId: `${idPrefix}-${i}`,
      policyId: "payments.transfer",
      policyVersion: "1.2.0",
      verifiedSignals: sets[i % sets.length],
    });
    const { status, text } = await post(agent, target, body);
    inFlight -= 1;
    if (status !== 200) throw new Error(`POST ${target.href} answered ${status} to request ${idPrefix}-${i}: ${text.slice(0, 300)}`);
  };
  try {
    if (rate === 0) {
      let next = 0;
      const worker = async () => {
        while (next < count) await send(next++);
      };
      await Promise.all(Array.from({ length: CONNECTIONS }, worker));
    } else {
      const sent: Promise<void>[] = [];
      for (let i = 0; i < count; i++) {
        const wait = t0 + (i * 1000) / rate - performance.now();
        if (wait > 0) await sleep(wait);
        const request = send(i);
        request.catch(() => undefined); // awaited below; a failure must not go unhandled meanwhile
        sent.push(request);
      }
      await Promise.all(sent);
    }
  } finally {
    agent.destroy();
  }
  return { seconds: (performance.now() - t0) / 1000, maxInFlight };
}

/** The sidecar must decide each valid case as the policy's test file says before anything is counted. */
async function checkVerdicts(url: string, cases: readonly ValidCase[]): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (const [i, c] of cases.entries()) {
      const body = JSON.stringify({
        executionId: `agreement-${i}`,
        policyId: "payments.transfer",
        policyVersion: "1.2.0",
        verifiedSignals: c.signals,
      });
      const { status, text } = await post(agent, new URL(`${url}/evaluate`), body);
      const answer = status === 200 ? (JSON.parse(text) as { status?: unknown }).status : undefined;
      if (answer !== EXPECTED[c.verdict])
        throw new Error(`${url} answers ${status} ${text.slice(0, 200)} for \`${c.name}\`, expected ${EXPECTED[c.verdict]}`);
    }
  } finally {
    agent.destroy();
  }
}

interface RunResult {
  /** Instructions per counted request. */
  readonly perRequest: Count;
  /** Instructions per second without requests (the timers), median of the idle windows. */
  readonly idlePerSecond: Count;
  readonly window: Sent;
  readonly startSeconds: number;
}

function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function measure(
  main: string,
  scratch: string,
  run: string,
  policies: string,
  ports: Set<number>,
  cases: readonly ValidCase[],
  signingThreads: number,
): Promise<RunResult> {
  const dir = join(scratch, run);
  await mkdir(dir, { recursive: true });
  const port = await freePort(ports);
  const started = performance.now();
  const sidecar = await startUnderCallgrind(main, dir, {
    SERVICE_API_KEY: API_KEY,
    SERVICE_POLICIES_ROOT: policies,
    SERVICE_BUNDLE_KEYS: join(scratch, "bundle-key.pub"),
    SERVICE_DATA_DIR: join(dir, "data"),
    SERVICE_PORT: String(port),
    SERVICE_B_PORT: "off",
    SERVICE_LOG_LEVEL: "warn",
    SERVICE_SIGNING_THREADS: String(signingThreads),
  });
  try {
    const startSeconds = (performance.now() - started) / 1000;
    const sets = cases.map((c) => c.signals);
    await checkVerdicts(sidecar.url, cases);
    await evaluate(sidecar.url, sets, WARMUP, `${run}-warmup`);
    await sleep(SETTLE_MS);
    let window: Sent = { seconds: 0, maxInFlight: 0 };
    const total = await countDuring(sidecar, async () => {
      window = await evaluate(sidecar.url, sets, REQUESTS, `${run}-counted`, RATE);
      await sleep(SETTLE_MS);
    });
    const idle: Count[] = [];
    for (let i = 0; IDLE_S > 0 && i < IDLE_WINDOWS; i++) idle.push(await countDuring(sidecar, () => sleep(IDLE_S * 1000)));
    return {
      perRequest: { all: total.all / REQUESTS, main: total.main / REQUESTS },
      idlePerSecond: { all: median(idle.map((c) => c.all)) / IDLE_S || 0, main: median(idle.map((c) => c.main)) / IDLE_S || 0 },
      window,
      startSeconds,
    };
  } finally {
    await sidecar.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const M = (instructions: number) => `${(instructions / 1e6).toFixed(3)} M`;

/** What the main thread's timers cost per counted request: its idle rate over the window and the settling after it. */
function mainIdlePerRequest(r: RunResult): number {
  return (r.idlePerSecond.main * (r.window.seconds + SETTLE_MS / 1000)) / REQUESTS;
}

/** A scheduled window the sidecar did not keep up with: it took over 2% longer than its schedule. */
function fellBehind(r: RunResult): boolean {
  return RATE > 0 && r.window.seconds > (REQUESTS / RATE) * 1.02 + 1;
}

/** Prints the median of `values` with its range, and returns the median. */
function describe(name: string, values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = median(sorted);
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  const spread = ((sorted.at(-1)! - sorted[0]!) / mean) * 100;
  console.log(
    `    ${name.padEnd(9)} ${M(middle)}  (median of ${sorted.length}; min ${M(sorted[0]!)}, max ${M(sorted.at(-1)!)}, spread ${spread.toFixed(2)}% of the mean)`,
  );
  return middle;
}

function git(...args: string[]): string {
  return execFileSync("git", args, { cwd: REPO, encoding: "utf8" }).trim();
}

/**
 * A copy of this checkout's build (`wire`, `runtime` and `sidecar`'s `dist`) with the installed packages linked in,
 * laid out as baseline.ts lays out a baseline: every run measures the same build even if `npm run build` runs meanwhile.
 */
async function snapshotCurrent(scratch: string): Promise<string> {
  const dir = join(scratch, "current");
  const modules = join(dir, "node_modules");
  await mkdir(join(modules, "@writ"), { recursive: true });
  for (const workspace of BUILT) {
    await mkdir(join(dir, workspace));
    await cp(join(REPO, workspace, "package.json"), join(dir, workspace, "package.json"));
    await cp(join(REPO, workspace, "dist"), join(dir, workspace, "dist"), { recursive: true });
    if (existsSync(join(REPO, workspace, "node_modules")))
      await symlink(join(REPO, workspace, "node_modules"), join(dir, workspace, "node_modules"));
    await symlink(join(dir, workspace), join(modules, "@writ", workspace));
  }
  for (const entry of await readdir(join(REPO, "node_modules"))) {
    if (entry === "@writ" || entry === ".bin" || entry.startsWith(".package-lock")) continue;
    await symlink(join(REPO, "node_modules", entry), join(modules, entry));
  }
  return join(dir, "sidecar", "dist", "main.js");
}

/** Builds `ref` with baseline.ts, its directory removed on a signal too. */
async function build(ref: string, what: string): Promise<Baseline> {
  console.log(`building the ${what} sidecar at ${ref} ...`);
  const built = await buildBaseline(ref);
  live.dirs.add(join(built.main, "..", "..", ".."));
  return built;
}

async function main(): Promise<void> {
  if (CURRENT_REF === null && !existsSync(CURRENT_MAIN)) throw new Error(`${CURRENT_MAIN} is missing: run \`npm run build\` first`);
  await execFileAsync("valgrind", ["--version"]).catch(() => {
    throw new Error("valgrind is not installed (valgrind and its vgdb are needed: apt-get install valgrind)");
  });
  process.once("SIGINT", cleanUpAndExit);
  process.once("SIGTERM", cleanUpAndExit);
  const cases = (await loadCases()).valid;
  const scratch = await mkdtemp(join(tmpdir(), "writ-bench-instructions-"));
  live.dirs.add(scratch);
  const builds: Baseline[] = [];
  try {
    // One compiled, signed bundle served by every run (the runs do not write to it).
    const policies = await policiesRoot(scratch);
    let baseline: { readonly main: string; readonly name: string } | null = null;
    let current: string;
    let currentName: string;
    if (SIGNING_THREADS > 0) {
      if (CURRENT_REF !== null) throw new Error("BENCH_SIGNING_THREADS compares this checkout's build with itself: unset BENCH_CURRENT");
      current = await snapshotCurrent(scratch);
      currentName = `this checkout's build with SERVICE_SIGNING_THREADS=${SIGNING_THREADS} (HEAD ${git("rev-parse", "--short=12", "HEAD")})`;
      baseline = { main: current, name: "the same build with SERVICE_SIGNING_THREADS=0" };
    } else if (CURRENT_REF === null) {
      const changed = git("status", "--porcelain", "--", ...BUILT.map((w) => `${w}/src`))
        .split("\n")
        .filter((line) => line !== "").length;
      const builtAt = new Date(statSync(CURRENT_MAIN).mtimeMs).toISOString();
      current = await snapshotCurrent(scratch);
      currentName = `this checkout's build (sidecar/dist/main.js of ${builtAt}; HEAD ${git("rev-parse", "--short=12", "HEAD")}, ${changed} files changed under ${BUILT.map((w) => `${w}/src`).join(", ")})`;
    } else {
      const built = await build(CURRENT_REF, "current");
      builds.push(built);
      current = built.main;
      currentName = `${built.commit.slice(0, 12)} (${CURRENT_REF})`;
    }
    if (baseline === null) {
      const built = await build(BASELINE_REF, "baseline");
      builds.push(built);
      baseline = { main: built.main, name: `${built.commit.slice(0, 12)} (${BASELINE_REF})` };
    }
    console.log(`baseline: ${baseline.name}; current: ${currentName}`);
    console.log(
      `node ${process.version}, ${platform()} ${arch()}, ${cpus().length} × ${cpus()[0]?.model.trim() ?? "unknown CPU"}; valgrind callgrind, zero/dump by vgdb`,
    );
    const pace = RATE === 0 ? `as fast as answered, ${CONNECTIONS} at a time` : `at ${RATE}/s over ${CONNECTIONS} connections`;
    console.log(
      `${RUNS} runs per sidecar, alternating; each a fresh process and data dir: ${cases.length} checked verdicts, ${WARMUP} warm-up requests (${CONNECTIONS} at a time), ` +
        `${REQUESTS} counted ${pace}, then ${IDLE_S > 0 ? `${IDLE_WINDOWS} idle windows of ${IDLE_S} s` : "no idle window"}\n`,
    );
    console.log("instructions per request: all threads | main thread | main thread less its idle rate over the window");
    const ports = new Set<number>();
    const results = { baseline: [] as RunResult[], current: [] as RunResult[] };
    for (let run = 1; run <= RUNS; run++) {
      for (const [name, main, threads] of [
        ["baseline", baseline.main, 0],
        ["current", current, SIGNING_THREADS],
      ] as const) {
        const r = await measure(main, scratch, `${name}-${run}`, policies, ports, cases, threads);
        results[name].push(r);
        console.log(
          `  run ${run} ${name.padEnd(8)} ${M(r.perRequest.all)} | ${M(r.perRequest.main)} | ${M(r.perRequest.main - mainIdlePerRequest(r))}  ` +
            `(idle ${M(r.idlePerSecond.all)}/s, main ${M(r.idlePerSecond.main)}/s; started in ${r.startSeconds.toFixed(0)} s; counted window ${r.window.seconds.toFixed(0)} s, at most ${r.window.maxInFlight} in flight)` +
            (fellBehind(r) ? ` FELL BEHIND BENCH_RATE=${RATE}: not comparable` : ""),
        );
      }
    }
    const figures = [
      ["all threads", (r: RunResult) => r.perRequest.all],
      ["main thread", (r: RunResult) => r.perRequest.main],
      ["main thread less idle", (r: RunResult) => r.perRequest.main - mainIdlePerRequest(r)],
    ] as const;
    const ratios: string[] = [];
    for (const [label, figure] of figures) {
      console.log(`\n  ${label}, instructions per request:`);
      const b = describe("baseline", results.baseline.map(figure));
      const c = describe("current", results.current.map(figure));
      ratios.push(`${label} ${(c / b).toFixed(4)}`);
    }
    console.log(`\nratio current / baseline (medians of ${RUNS} runs each): ${ratios.join("; ")}`);
    const behind = [...results.baseline, ...results.current].filter(fellBehind).length;
    if (behind > 0) console.log(`WARNING: ${behind} runs fell behind BENCH_RATE=${RATE}: lower it, or run on a quieter machine`);
  } finally {
    for (const built of builds) await built.remove();
    await rm(scratch, { recursive: true, force: true });
  }
}

await main();
