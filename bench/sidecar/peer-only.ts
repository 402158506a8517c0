/**
 * The Cerbos half of the sidecar benchmark on its own (`npx tsx bench/sidecar/peer-only.ts`): starts Cerbos,
 * checks it decides the test file's signal sets as writ does, then loads `POST /api/check/resources` at 1 and at
 * 50 connections and prints req/s, p50 and p99. It proves the peer and the load generator work end to end; the
 * comparison with writ's `/evaluate` is `npm run bench:sidecar`.
 *
 * Environment: BENCH_DURATION (seconds per measured run, default 5).
 */
import { arch, cpus, platform } from "node:os";
import { checkAgreement, startCerbos } from "./cerbos.js";
import { runLoad } from "./load.js";
import { loadCases } from "./policy-cases.js";

const DURATION = Number(process.env["BENCH_DURATION"] ?? 5);
const WARMUP_SECONDS = 1;
const CONNECTIONS = [1, 50] as const;

if (!(DURATION > 0)) throw new Error(`BENCH_DURATION must be a positive number of seconds, not ${process.env["BENCH_DURATION"]}`);

const cases = await loadCases();
const sets = cases.valid.map((c) => c.signals);
const cerbos = await startCerbos();
try {
  console.log(
    `Cerbos ${cerbos.version} at ${cerbos.url}; node ${process.version}, ${platform()} ${arch()}, ${cpus().length} × ${cpus()[0]?.model.trim() ?? "unknown CPU"}`,
  );
  const agreement = await checkAgreement(cerbos, cases);
  console.log(
    `agreement: Cerbos decides all ${sets.length} valid signal sets as writ does (${agreement.allowed} allow, ${agreement.denied} deny) ` +
      `and refuses all ${agreement.refused} invalid ones with schema errors`,
  );
  console.log(`load: the ${sets.length} valid sets in turn, unique request ids, ${WARMUP_SECONDS} s warm-up then ${DURATION} s measured\n`);
  console.log(`${"connections".padEnd(12)}${"req/s".padStart(10)}${"p50".padStart(10)}${"p99".padStart(10)}${"requests".padStart(10)}`);
  for (const connections of CONNECTIONS) {
    const r = await runLoad({
      url: cerbos.checkUrl,
      connections,
      durationSeconds: DURATION,
      warmupSeconds: WARMUP_SECONDS,
      headers: { "content-type": "application/json" },
      makeBody: (i) => JSON.stringify(cerbos.checkBody(sets[i % sets.length]!, `bench-${i}`)),
      expectStatus: 200,
    });
    const ms = (v: number) => `${v.toFixed(3)} ms`;
    console.log(
      `${String(connections).padEnd(12)}${r.requestsPerSecond.toFixed(0).padStart(10)}${ms(r.p50Ms).padStart(10)}${ms(r.p99Ms).padStart(10)}${String(r.total).padStart(10)}`,
    );
  }
} finally {
  await cerbos.stop();
}
