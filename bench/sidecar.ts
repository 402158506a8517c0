/**
 * Sidecar benchmark (`npm run bench:sidecar`, i.e. `tsx bench/sidecar.ts`). Not a test: it prints numbers.
 *
 * One run loads two servers in turn with the same load generator (autocannon, in this process):
 *   - writ: the built sidecar (`sidecar/dist/main.js`) in its own process, `POST /evaluate` with a unique executionId
 *     per request, on the shipped payments.transfer@1.2.0 (bundle signature required), durable LMDB replay store and
 *     audit on: every answer is signed, self-verified, fsynced and audited before it is sent;
 *   - Cerbos (`@cerbos/cerbos-linux-x64`, its own process, bound to 127.0.0.1): `POST /api/check/resources` on the
 *     same policy, translated rule for rule (bench/sidecar/cerbos-policy.ts), attributes checked against the same
 *     JSON Schema; no signing, no storage.
 * The same sidecar with the tamper-evident audit record log off (`SERVICE_AUDIT_LOG=off`, "nolog") shows what the log
 * costs, on by default (the goal: at least 95% of the req/s without it); the CPU each takes per response is measured
 * too (from /proc), which load elsewhere on a shared machine changes far less than req/s. A fourth server is the durability floor (bench/sidecar/floor.ts): one flushed LMDB write per request and nothing
 * else, the least any durable sidecar must do.
 * Both must first decide the policy's 25 valid test signal sets alike (approve = allow). Then, at 1 and at 50
 * connections, rounds alternate writ and Cerbos so drifting load on the shared machine hits both alike; the figures
 * are medians over the rounds. Goals: at 50 connections writ's req/s at least 1.5x Cerbos's with a p99 no
 * higher than Cerbos's; at one connection a p50 no higher than Cerbos's.
 *
 * Environment: BENCH_ROUNDS (default 3), BENCH_DURATION (seconds per measured run, default 5), BENCH_WARMUP (seconds
 * of unmeasured load before each run, default 1), BENCH_PIN (default 1 on 2 cores or more: each server on one core,
 * the load generator on another; bench/sidecar/pinning.ts).
 *
 * `BENCH_MODE=overhead` runs the overhead mode instead (bench/sidecar/overhead.ts): the sidecar as it is against the
 * sidecar before its observability instrumentation (BENCH_BASELINE, a git ref), tracing off, in the same run.
 * `BENCH_MODE=host` runs the per-host mode (bench/sidecar/per-host.ts): writ and Cerbos each given the same N cores
 * (BENCH_CORES, default `1,2`), req/s and their ratios for each N.
 */
import { arch, cpus, platform } from "node:os";
import { checkAgreement, startCerbos, type Cerbos } from "./sidecar/cerbos.js";
import { startFloor, type Floor } from "./sidecar/floor.js";
import { loadSettings, processCpuSeconds, runLoad, summarize, type LoadResult } from "./sidecar/load.js";
import { runOverhead } from "./sidecar/overhead.js";
import { runPerHost } from "./sidecar/per-host.js";
import { pinOneCoreEach } from "./sidecar/pinning.js";
import { loadCases, type Signals } from "./sidecar/policy-cases.js";
import { checkWrit, startWrit, type Writ } from "./sidecar/writ.js";

const { rounds: ROUNDS, duration: DURATION, warmup: WARMUP } = loadSettings();
const GOAL_THROUGHPUT = 1.5;

async function main(): Promise<void> {
  const mode = process.env["BENCH_MODE"] ?? "peers";
  if (mode !== "peers" && mode !== "overhead" && mode !== "host")
    throw new Error(`BENCH_MODE must be \`peers\` (the default), \`overhead\` or \`host\`, not \`${mode}\``);
  const cases = await loadCases();
  // The per-host mode pins each core count its own way.
  if (mode === "host") return runPerHost(cases, { rounds: ROUNDS, duration: DURATION, warmup: WARMUP });
  console.log(pinOneCoreEach());
  const sets: readonly Signals[] = cases.valid.map((c) => c.signals);
  if (mode === "overhead") return runOverhead(sets, { rounds: ROUNDS, duration: DURATION, warmup: WARMUP });
  let writ: Writ | null = null;
  let nolog: Writ | null = null;
  let cerbos: Cerbos | null = null;
  let floor: Floor | null = null;
  try {
    writ = await startWrit();
    nolog = await startWrit({ env: { SERVICE_AUDIT_LOG: "off" } });
    cerbos = await startCerbos();
    floor = await startFloor();
    console.log(`writ sidecar at ${writ.url}; Cerbos ${cerbos.version} at ${cerbos.url}`);
    console.log(`node ${process.version}, ${platform()} ${arch()}, ${cpus().length} × ${cpus()[0]?.model.trim() ?? "unknown CPU"}`);
    await checkWrit(writ, cases.valid, "agreement");
    await checkWrit(nolog, cases.valid, "agreement-nolog");
    const agreement = await checkAgreement(cerbos, cases);
    console.log(
      `agreement: both decide the ${sets.length} valid signal sets alike (${agreement.allowed} approve/allow, ${agreement.denied} other)`,
    );
    console.log(`${ROUNDS} rounds × (${WARMUP} s warm-up + ${DURATION} s) per server and connection count, alternating\n`);

    const w = writ;
    const u = nolog;
    const c = cerbos;
    const f = floor;
    const results = new Map<string, LoadResult[]>();
    let sequence = 0;
    for (const connections of [1, 50]) {
      for (let round = 0; round < ROUNDS; round++) {
        for (const [name, url, headers, body] of [
          [
            "writ",
            w.evaluateUrl,
            w.headers,
            (i: number) => JSON.stringify(w.evaluateBody(sets[i % sets.length]!, `bench-${sequence}-${i}`)),
          ],
          [
            "nolog",
            u.evaluateUrl,
            u.headers,
            (i: number) => JSON.stringify(u.evaluateBody(sets[i % sets.length]!, `bench-${sequence}-${i}`)),
          ],
          [
            "cerbos",
            c.checkUrl,
            { "content-type": "application/json" },
            (i: number) => JSON.stringify(c.checkBody(sets[i % sets.length]!, `bench-${sequence}-${i}`)),
          ],
          ["floor", f.url, { "content-type": "application/json" }, (i: number) => `{"i":${i}}`],
        ] as const) {
          sequence += 1;
          const pid = name === "writ" ? w.pid : name === "nolog" ? u.pid : null;
          const cpu = pid === null ? {} : { serverCpuSeconds: () => processCpuSeconds(pid) };
          const result = await runLoad({
            url,
            connections,
            durationSeconds: DURATION,
            warmupSeconds: WARMUP,
            headers,
            makeBody: body,
            expectStatus: 200,
            ...cpu,
          });
          const key = `${name}@${connections}`;
          results.set(key, [...(results.get(key) ?? []), result]);
          const perResponse =
            result.cpuMicrosPerResponse === null ? "" : `, server CPU ${result.cpuMicrosPerResponse.toFixed(0)} µs/response`;
          process.stdout.write(
            `  round ${round + 1} ${name.padEnd(6)} ${String(connections).padStart(2)} conn: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(3)} ms, p99 ${result.p99Ms.toFixed(3)} ms${perResponse}\n`,
          );
        }
      }
    }

    const s = (name: string, connections: number) => summarize(results.get(`${name}@${connections}`)!);
    const ms = (v: number) => `${v.toFixed(3)} ms`;
    console.log(`\n${"server".padEnd(28)}${"req/s".padStart(10)}${"p50".padStart(12)}${"p99".padStart(12)}`);
    for (const connections of [1, 50]) {
      for (const name of ["writ", "nolog", "cerbos", "floor"]) {
        const x = s(name, connections);
        console.log(
          `${`${name} @ ${connections} connection${connections > 1 ? "s" : ""}`.padEnd(28)}${x.rps.toFixed(0).padStart(10)}${ms(x.p50).padStart(12)}${ms(x.p99).padStart(12)}`,
        );
      }
    }
    const w50 = s("writ", 50);
    const c50 = s("cerbos", 50);
    const w1 = s("writ", 1);
    const c1 = s("cerbos", 1);
    const verdict = (ok: boolean) => (ok ? "met" : "MISSED");
    console.log("\nratios (medians of the same run):");
    console.log(
      `  50 connections: writ req/s / Cerbos req/s = ${(w50.rps / c50.rps).toFixed(2)}× (goal ≥ ${GOAL_THROUGHPUT}×: ${verdict(w50.rps / c50.rps >= GOAL_THROUGHPUT)})`,
    );
    console.log(`  50 connections: writ p99 / Cerbos p99 = ${(w50.p99 / c50.p99).toFixed(2)} (goal ≤ 1: ${verdict(w50.p99 <= c50.p99)})`);
    console.log(`  1 connection:   writ p50 / Cerbos p50 = ${(w1.p50 / c1.p50).toFixed(2)} (goal ≤ 1: ${verdict(w1.p50 <= c1.p50)})`);
    const f1 = s("floor", 1);
    console.log(
      `  1 connection:   durability floor (one flushed LMDB write, nothing else) p50 / Cerbos p50 = ${(f1.p50 / c1.p50).toFixed(2)}; ` +
        `writ p50 - floor p50 = ${(w1.p50 - f1.p50).toFixed(3)} ms (what writ adds: parsing, validation, evaluation, signing, audit)`,
    );
    const n50 = s("nolog", 50);
    console.log(
      `  50 connections: writ (audit record log on, the default) req/s / writ with SERVICE_AUDIT_LOG=off = ${(w50.rps / n50.rps).toFixed(2)}× ` +
        `(goal ≥ 0.95×: ${verdict(w50.rps / n50.rps >= 0.95)}); server CPU per response ${w50.cpu!.toFixed(0)} µs / ${n50.cpu!.toFixed(0)} µs = ${(w50.cpu! / n50.cpu!).toFixed(3)}×`,
    );
    console.log(
      "  note: every writ answer is an Ed25519-signed, self-verified attestation whose replay entry and audit record are fsynced before it is sent; Cerbos signs and stores nothing",
    );
  } finally {
    await Promise.all([writ?.stop(), nolog?.stop(), cerbos?.stop(), floor?.stop()]);
  }
}

await main();
