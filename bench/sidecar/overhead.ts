/**
 * The overhead mode of the sidecar benchmark (`BENCH_MODE=overhead npm run bench:sidecar`): what the observability
 * instrumentation (the JSON log stream, request ids, trace context, metrics per policy and of the durable
 * writes; tracing and the access log off, as by default) costs a signed decision. The sidecar as it is and the
 * sidecar as it was before it (BENCH_BASELINE, by default the commit before `sidecar/src/observability` was added,
 * built in a scratch directory: baseline.ts) serve the same `POST /evaluate` load in alternating rounds of the same
 * run; the goal is at least 98% of the baseline's req/s (no more than 2% overhead).
 */
import { buildBaseline, commitBefore } from "./baseline.js";
import { processCpuSeconds, runLoad, summarize, type LoadResult } from "./load.js";
import type { Signals } from "./policy-cases.js";
import { startWrit, type Writ } from "./writ.js";

const GOAL = 0.98;
const INSTRUMENTED = "sidecar/src/observability/request-telemetry.ts";

export interface OverheadSettings {
  readonly rounds: number;
  readonly duration: number;
  readonly warmup: number;
}

export async function runOverhead(
  sets: readonly Signals[],
  settings: OverheadSettings,
  baselineRef = process.env["BENCH_BASELINE"],
): Promise<void> {
  const ref = baselineRef ?? commitBefore(INSTRUMENTED);
  console.log(`building the baseline sidecar at ${ref} ...`);
  const baseline = await buildBaseline(ref);
  let before: Writ | null = null;
  let now: Writ | null = null;
  try {
    before = await startWrit({ main: baseline.main });
    now = await startWrit();
    console.log(`baseline ${baseline.commit.slice(0, 12)} at ${before.url}; this checkout (tracing off) at ${now.url}`);
    console.log(
      `${settings.rounds} rounds × (${settings.warmup} s warm-up + ${settings.duration} s) per server and connection count, alternating\n`,
    );
    const results = new Map<string, LoadResult[]>();
    let sequence = 0;
    for (const connections of [1, 50]) {
      for (let round = 0; round < settings.rounds; round++) {
        for (const [name, writ] of [
          ["baseline", before],
          ["now", now],
        ] as const) {
          sequence += 1;
          const prefix = `overhead-${sequence}`;
          const result = await runLoad({
            url: writ.evaluateUrl,
            connections,
            durationSeconds: settings.duration,
            warmupSeconds: settings.warmup,
            headers: writ.headers,
            makeBody: (i) => JSON.stringify(writ.evaluateBody(sets[i % sets.length]!, `${prefix}-${i}`)),
            expectStatus: 200,
            serverCpuSeconds: () => processCpuSeconds(writ.pid),
          });
          const key = `${name}@${connections}`;
          results.set(key, [...(results.get(key) ?? []), result]);
          process.stdout.write(
            `  round ${round + 1} ${name.padEnd(8)} ${String(connections).padStart(2)} conn: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(3)} ms, p99 ${result.p99Ms.toFixed(3)} ms, server CPU ${result.cpuMicrosPerResponse!.toFixed(0)} µs/response\n`,
          );
        }
      }
    }
    console.log(`\n${"server".padEnd(28)}${"req/s".padStart(10)}${"p50".padStart(12)}${"p99".padStart(12)}`);
    for (const connections of [1, 50]) {
      for (const name of ["baseline", "now"]) {
        const x = summarize(results.get(`${name}@${connections}`)!);
        console.log(
          `${`${name} @ ${connections} connection${connections > 1 ? "s" : ""}`.padEnd(28)}${x.rps.toFixed(0).padStart(10)}${`${x.p50.toFixed(3)} ms`.padStart(12)}${`${x.p99.toFixed(3)} ms`.padStart(12)}`,
        );
      }
    }
    console.log("\nratios (medians of the same run):");
    for (const connections of [1, 50]) {
      const b = summarize(results.get(`baseline@${connections}`)!);
      const n = summarize(results.get(`now@${connections}`)!);
      const ratio = n.rps / b.rps;
      console.log(
        `  ${String(connections).padStart(2)} connection${connections > 1 ? "s" : " "}: req/s now / baseline = ${ratio.toFixed(3)} (overhead ${((1 - ratio) * 100).toFixed(1)}%, goal ≤ ${((1 - GOAL) * 100).toFixed(0)}%: ${ratio >= GOAL ? "met" : "MISSED"}); ` +
          `p50 ${(n.p50 / b.p50).toFixed(3)}×, p99 ${(n.p99 / b.p99).toFixed(3)}×; server CPU per response ${n.cpu!.toFixed(0)} / ${b.cpu!.toFixed(0)} µs = ${(n.cpu! / b.cpu!).toFixed(3)}×`,
      );
    }
  } finally {
    await Promise.all([before?.stop(), now?.stop()]);
    await baseline.remove();
  }
}
