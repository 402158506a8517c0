/**
 * The per-host mode of the sidecar benchmark (`BENCH_MODE=host npm run bench:sidecar`; docs/benchmarks.md, "Per
 * host"): for each N of BENCH_CORES (default `1,2`, none above the machine's cores), writ and Cerbos are each given
 * the same N cores (`taskset -c 0-<N-1>`, every thread of the server: writ's signing threads and LMDB's writer too)
 * and loaded in alternating rounds at BENCH_CONNECTIONS (default 50) by BENCH_LOAD (`wrk`, the default, or
 * `autocannon` in this process) on BENCH_LOAD_CORES (a `taskset -c` list; default the cores no server has, or every
 * core when none is left: sharing them, as a host's other work would). writ runs twice: with SERVICE_SIGNING_THREADS=auto, which follows
 * the cores it was given (docs/sidecar.md, "Signing threads"), or BENCH_SIGNING_THREADS when set (a count, to measure
 * threads where `auto` gives none; BENCH_WRIT_PROCESSES=N runs it as N processes instead, SERVICE_PROCESSES, on one
 * data dir), and with 0 (the event loop signs). BENCH_WRIT_POSTGRES (a server's URL) runs both on PostgreSQL, a
 * database each. Prints each server's
 * median req/s and p50 for each N, writ / Cerbos for each N, each server's N-core / 1-core ratio, and (with wrk)
 * writ's CPU a request in its event loop and in its other threads, from which docs/benchmarks.md scales to more cores.
 * Req/s mean something only on a quiet machine.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { checkAgreement, startCerbos, type Cerbos } from "./cerbos.js";
import { loopSchedule, median, processCpuSeconds, runLoad, summarize, threadCpuSeconds, type LoadResult, type Summary } from "./load.js";
import { pinServersAndLoad } from "./pinning.js";
import type { PolicyCases, Signals } from "./policy-cases.js";
import { checkWrit, startWrit, type Writ } from "./writ.js";
import { ID_SLOT, runWrk } from "./wrk.js";

interface HostSettings {
  readonly rounds: number;
  readonly duration: number;
  readonly warmup: number;
}

const SERVERS = ["writ", "writ-loop", "cerbos"] as const;
type Server = (typeof SERVERS)[number];

/** One server's endpoint: where to POST, with which headers, and the body of request `i` with the unique `id`. */
interface Target {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  body(id: string, i: number): object;
  /**
   * writ's processes whose main thread serves requests (`loops`) and the process they run under (`pid`: one of them,
   * or their supervisor), whose CPU a wrk run splits (the event loops', the others'); null for Cerbos.
   */
  readonly processes: Pick<Writ, "loops" | "pid"> | null;
}

/**
 * CPU a response took in the server's main thread (node's event loop) and in all its other threads, µs; the share of
 * the run's wall time the loop ran, and waited, ready, for a core.
 */
interface ThreadCost {
  readonly loopUs: number;
  readonly othersUs: number;
  readonly loopBusy: number;
  readonly loopWaiting: number;
}

/**
 * The CPU seconds of the `loops` processes, their main threads' (an event loop each) apart from every other thread's
 * (`pid`'s whole CPU among them when it is not a loop), and the loops' time run and waiting for a core, summed.
 */
function processesCpu({ loops, pid }: Pick<Writ, "loops" | "pid">) {
  const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
  const cpu = loops.map(threadCpuSeconds);
  const schedule = loops.map(loopSchedule);
  return {
    main: sum(cpu.map((c) => c.main)),
    others: sum(cpu.map((c) => c.others)) + (loops.includes(pid) ? 0 : processCpuSeconds(pid)),
    ran: sum(schedule.map((c) => c.ran)),
    waited: sum(schedule.map((c) => c.waited)),
    loops: loops.length,
  };
}

/** A warm-up and a measured run of wrk against `target` (wrk on this process's cores), and writ's CPU split by thread. */
async function wrkLoad(
  target: Target,
  bodies: number,
  connections: number,
  settings: HostSettings,
  prefix: string,
  dir: string,
): Promise<{ result: LoadResult; threads: ThreadCost | null }> {
  const run = {
    url: target.url,
    headers: target.headers,
    bodies: Array.from({ length: bodies }, (_, i) => JSON.stringify(target.body(ID_SLOT, i))),
    connections,
    scriptFile: join(dir, `${prefix}.lua`),
    cpus: null,
    rate: null,
  };
  if (settings.warmup > 0) await runWrk({ ...run, seconds: settings.warmup, prefix: `${prefix}-warm-` });
  const before = target.processes === null ? null : processesCpu(target.processes);
  const r = await runWrk({ ...run, seconds: settings.duration, prefix: `${prefix}-` });
  const after = target.processes === null ? null : processesCpu(target.processes);
  const errors = Object.values(r.socketErrors).reduce((a, b) => a + b, 0);
  if (r.non2xx > 0 || errors > 0 || r.requests === 0) {
    throw new Error(`wrk against ${target.url}: ${r.requests} requests, ${r.non2xx} answered 400 or above, ${errors} socket errors`);
  }
  const perRequest = (seconds: number) => (seconds * 1e6) / r.requests;
  const threads =
    before === null || after === null
      ? null
      : {
          loopUs: perRequest(after.main - before.main),
          othersUs: perRequest(after.others - before.others),
          loopBusy: (after.ran - before.ran) / r.seconds / before.loops,
          loopWaiting: (after.waited - before.waited) / r.seconds / before.loops,
        };
  const result = {
    requestsPerSecond: r.requests / r.seconds,
    p50Ms: r.p50,
    p99Ms: r.p99,
    total: r.requests,
    durationSeconds: r.seconds,
    cpuMicrosPerResponse: threads === null ? null : threads.loopUs + threads.othersUs,
  };
  return { result, threads };
}

/** writ's SERVICE_SIGNING_THREADS in the `writ` runs: BENCH_SIGNING_THREADS (a count of 1 or more), else `auto`. */
function signingThreads(env: NodeJS.ProcessEnv): string {
  const value = env["BENCH_SIGNING_THREADS"];
  if (value === undefined) return "auto";
  if (!/^[1-9][0-9]?$/.test(value)) throw new Error(`BENCH_SIGNING_THREADS must be a count from 1 to 99, not \`${value}\``);
  return value;
}

/** BENCH_WRIT_PROCESSES: how many sidecar processes the `writ` runs start on one port (default 1). */
function writProcesses(env: NodeJS.ProcessEnv): number {
  const value = env["BENCH_WRIT_PROCESSES"] ?? "1";
  if (!/^[1-9]$/.test(value)) throw new Error(`BENCH_WRIT_PROCESSES must be a count from 1 to 9, not \`${value}\``);
  return Number(value);
}

/** BENCH_LOAD: `wrk` (the default: it leaves shared cores to the servers) or `autocannon` (in this process). */
function loadGenerator(env: NodeJS.ProcessEnv): "wrk" | "autocannon" {
  const value = env["BENCH_LOAD"] ?? "wrk";
  if (value !== "wrk" && value !== "autocannon") throw new Error(`BENCH_LOAD must be \`wrk\` or \`autocannon\`, not \`${value}\``);
  return value;
}

/** The machine's cores, read before any pinning narrows this process's affinity. */
const MACHINE_CORES = availableParallelism();

function coreCounts(env: NodeJS.ProcessEnv): number[] {
  const raw = env["BENCH_CORES"] ?? "1,2";
  const counts = raw.split(",").map((c) => Number(c.trim()));
  const most = MACHINE_CORES;
  for (const n of counts) {
    if (!Number.isInteger(n) || n < 1 || n > most) throw new Error(`BENCH_CORES must list core counts from 1 to ${most}, not \`${raw}\``);
  }
  return counts;
}

/** The load generator's cores for servers on cores 0 to n-1. */
function loadCores(n: number, env: NodeJS.ProcessEnv): string {
  const set = env["BENCH_LOAD_CORES"];
  if (set !== undefined && set !== "") return set;
  const all = MACHINE_CORES;
  return n < all ? `${n}-${all - 1}` : `0-${all - 1}`;
}

export async function runPerHost(cases: PolicyCases, settings: HostSettings, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const sets: readonly Signals[] = cases.valid.map((c) => c.signals);
  const connections = Number(env["BENCH_CONNECTIONS"] ?? 50);
  if (!Number.isInteger(connections) || connections < 1)
    throw new Error(`BENCH_CONNECTIONS must be a positive integer, not ${connections}`);
  const counts = coreCounts(env);
  const generator = loadGenerator(env);
  const writThreads = signingThreads(env);
  const processes = writProcesses(env);
  const postgres = env["BENCH_WRIT_POSTGRES"] ?? null;
  const scratch = mkdtempSync(join(tmpdir(), "writ-per-host-"));
  const medians = new Map<string, Summary>();
  const costs = new Map<string, ThreadCost[]>();
  let sequence = 0;
  for (const n of counts) {
    const servers = `0-${n - 1}`;
    const load = loadCores(n, env);
    pinServersAndLoad(servers, load);
    console.log(`\n${n} core${n > 1 ? "s" : ""}: servers on cores ${servers}, the load generator on ${load}`);
    let writ: Writ | null = null;
    let loop: Writ | null = null;
    let cerbos: Cerbos | null = null;
    try {
      writ = await startWrit({ env: { SERVICE_SIGNING_THREADS: writThreads }, processes, postgres });
      loop = await startWrit({ env: { SERVICE_SIGNING_THREADS: "0" }, postgres });
      cerbos = await startCerbos();
      await checkWrit(writ, cases.valid, `host-${n}`);
      await checkWrit(loop, cases.valid, `host-loop-${n}`);
      await checkAgreement(cerbos, cases);
      const results = new Map<Server, LoadResult[]>();
      const [w, l, c] = [writ, loop, cerbos];
      const writTarget = (server: Writ): Target => ({
        url: server.evaluateUrl,
        headers: server.headers,
        body: (id, i) => server.evaluateBody(sets[i % sets.length]!, id),
        processes: server,
      });
      for (let round = 0; round < settings.rounds; round++) {
        for (const name of SERVERS) {
          sequence += 1;
          const prefix = `per-host-load-${sequence}`;
          const target =
            name === "cerbos"
              ? {
                  url: c.checkUrl,
                  headers: { "content-type": "application/json" },
                  body: (id: string, i: number) => c.checkBody(sets[i % sets.length]!, id),
                  processes: null,
                }
              : writTarget(name === "writ" ? w : l);
          const { result, threads } = await (generator === "wrk"
            ? wrkLoad(target, sets.length, connections, settings, prefix, scratch)
            : runLoad({
                url: target.url,
                headers: target.headers,
                makeBody: (i: number) => JSON.stringify(target.body(`${prefix}-${i}`, i)),
                connections,
                durationSeconds: settings.duration,
                warmupSeconds: settings.warmup,
                expectStatus: 200,
              }).then((result) => ({ result, threads: null })));
          results.set(name, [...(results.get(name) ?? []), result]);
          if (threads !== null) costs.set(`${name}@${n}`, [...(costs.get(`${name}@${n}`) ?? []), threads]);
          const split =
            threads === null
              ? ""
              : `, CPU a request: loop${processes > 1 && name === "writ" ? "s" : ""} ${threads.loopUs.toFixed(0)} µs, other threads ${threads.othersUs.toFixed(0)} µs; loop busy ${(100 * threads.loopBusy).toFixed(0)} %, waiting for a core ${(100 * threads.loopWaiting).toFixed(0)} %`;
          console.log(
            `  round ${round + 1} ${name.padEnd(9)} ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(3)} ms${split}`,
          );
        }
      }
      for (const name of SERVERS) medians.set(`${name}@${n}`, summarize(results.get(name)!));
    } finally {
      await Promise.all([writ?.stop(), loop?.stop(), cerbos?.stop()]);
    }
  }
  rmSync(scratch, { recursive: true, force: true });
  const rps = (server: Server, n: number) => medians.get(`${server}@${n}`)!.rps;
  console.log(
    `\nmedians at ${connections} connections, load by ${generator} (writ: SERVICE_SIGNING_THREADS=${writThreads}${processes > 1 ? `, ${processes} processes` : ""}; writ-loop: 0)`,
  );
  console.log(
    `${"cores".padEnd(7)}${SERVERS.map((s) => `${s} req/s`.padStart(17)).join("")}${SERVERS.map((s) => `${s} p50`.padStart(15)).join("")}${"writ/Cerbos".padStart(13)}${"loop/Cerbos".padStart(13)}`,
  );
  for (const n of counts) {
    const [w, l, c] = SERVERS.map((s) => rps(s, n));
    const p50s = SERVERS.map((s) => `${medians.get(`${s}@${n}`)!.p50.toFixed(3)} ms`.padStart(15)).join("");
    console.log(
      `${String(n).padEnd(7)}${[w!, l!, c!].map((v) => v.toFixed(0).padStart(17)).join("")}${p50s}${`${(w! / c!).toFixed(2)}×`.padStart(13)}${`${(l! / c!).toFixed(2)}×`.padStart(13)}`,
    );
  }
  for (const [key, runs] of costs) {
    const [loop, others] = [median(runs.map((c) => c.loopUs)), median(runs.map((c) => c.othersUs))];
    const [busy, waiting] = [median(runs.map((c) => c.loopBusy)), median(runs.map((c) => c.loopWaiting))];
    console.log(
      `${key}: CPU a request, median: event loop ${loop.toFixed(1)} µs, other threads ${others.toFixed(1)} µs; the loop busy ${(100 * busy).toFixed(0)} % of the time, waiting for a core ${(100 * waiting).toFixed(0)} %`,
    );
  }
  const first = counts[0]!;
  for (const n of counts.slice(1)) {
    console.log(`${n} cores / ${first}: ${SERVERS.map((s) => `${s} ${(rps(s, n) / rps(s, first)).toFixed(2)}×`).join(", ")}`);
  }
}
