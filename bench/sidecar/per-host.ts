/**
 * The per-host mode of the sidecar benchmark (`BENCH_MODE=host npm run bench:sidecar`; docs/benchmarks.md, "Per
 * host"): for each N of BENCH_CORES (default `1,2`, none above the machine's cores), writ and Cerbos are each given
 * the same N cores (`taskset -c 0-<N-1>`, every thread of the server: writ's signing threads and LMDB's writer too)
 * and loaded in alternating rounds at BENCH_CONNECTIONS (default 50) from this process, the load generator, on
 * BENCH_LOAD_CORES (a `taskset -c` list; default the cores no server has, or every core when none is left: sharing
 * them, as a host's other work would). writ runs twice: with SERVICE_SIGNING_THREADS=auto, which follows
 * the cores it was given (docs/sidecar.md, "Signing threads"), and with 0 (the event loop signs). Prints each server's
 * median req/s for each N, writ / Cerbos for each N, and each server's N-core / 1-core ratio.
 * Req/s mean something only on a quiet machine.
 */
import { availableParallelism } from "node:os";
import { checkAgreement, startCerbos, type Cerbos } from "./cerbos.js";
import { runLoad, summarize, type LoadResult } from "./load.js";
import { pinServersAndLoad } from "./pinning.js";
import type { PolicyCases, Signals } from "./policy-cases.js";
import { checkWrit, startWrit, type Writ } from "./writ.js";

interface HostSettings {
  readonly rounds: number;
  readonly duration: number;
  readonly warmup: number;
}

const SERVERS = ["writ", "writ-loop", "cerbos"] as const;
type Server = (typeof SERVERS)[number];

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
  const medians = new Map<string, number>();
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
      writ = await startWrit({ env: { SERVICE_SIGNING_THREADS: "auto" } });
      loop = await startWrit({ env: { SERVICE_SIGNING_THREADS: "0" } });
      cerbos = await startCerbos();
      await checkWrit(writ, cases.valid, `host-${n}`);
      await checkWrit(loop, cases.valid, `host-loop-${n}`);
      await checkAgreement(cerbos, cases);
      const results = new Map<Server, LoadResult[]>();
      const [w, l, c] = [writ, loop, cerbos];
      for (let round = 0; round < settings.rounds; round++) {
        for (const name of SERVERS) {
          sequence += 1;
          const prefix = `per-host-load-${sequence}`;
          const target =
            name === "cerbos"
              ? {
                  url: c.checkUrl,
                  headers: { "content-type": "application/json" },
                  makeBody: (i: number) => JSON.stringify(c.checkBody(sets[i % sets.length]!, `${prefix}-${i}`)),
                }
              : {
                  url: (name === "writ" ? w : l).evaluateUrl,
                  headers: (name === "writ" ? w : l).headers,
                  makeBody: (i: number) => JSON.stringify((name === "writ" ? w : l).evaluateBody(sets[i % sets.length]!, `${prefix}-${i}`)),
                };
          const result = await runLoad({
            ...target,
            connections,
            durationSeconds: settings.duration,
            warmupSeconds: settings.warmup,
            expectStatus: 200,
          });
          results.set(name, [...(results.get(name) ?? []), result]);
          console.log(
            `  round ${round + 1} ${name.padEnd(9)} ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(3)} ms`,
          );
        }
      }
      for (const name of SERVERS) medians.set(`${name}@${n}`, summarize(results.get(name)!).rps);
    } finally {
      await Promise.all([writ?.stop(), loop?.stop(), cerbos?.stop()]);
    }
  }
  console.log(`\nmedian req/s at ${connections} connections (writ: SERVICE_SIGNING_THREADS=auto; writ-loop: 0)`);
  console.log(
    `${"cores".padEnd(7)}${SERVERS.map((s) => s.padStart(11)).join("")}${"writ/Cerbos".padStart(13)}${"loop/Cerbos".padStart(13)}`,
  );
  for (const n of counts) {
    const [w, l, c] = SERVERS.map((s) => medians.get(`${s}@${n}`)!);
    console.log(
      `${String(n).padEnd(7)}${[w!, l!, c!].map((v) => v.toFixed(0).padStart(11)).join("")}${`${(w! / c!).toFixed(2)}×`.padStart(13)}${`${(l! / c!).toFixed(2)}×`.padStart(13)}`,
    );
  }
  const first = counts[0]!;
  for (const n of counts.slice(1)) {
    console.log(
      `${n} cores / ${first}: ${SERVERS.map((s) => `${s} ${(medians.get(`${s}@${n}`)! / medians.get(`${s}@${first}`)!).toFixed(2)}×`).join(", ")}`,
    );
  }
}
