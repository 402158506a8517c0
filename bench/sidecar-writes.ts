/**
 * The durable write of a signed decision, without HTTP (`npm run bench:writes`, i.e. `tsx bench/sidecar-writes.ts`).
 * Not a test: it prints numbers. It explains the sidecar benchmark's ceiling: every `POST /evaluate` answer waits for
 * one LMDB transaction holding its replay entry and its audit record to be fsynced (docs/sidecar.md, "Durability").
 *
 * Three write patterns, each run by `concurrency` loops that each await their write and `flushed` before the next
 * (as concurrent requests do), in the sidecar's own LMDB environment (`openContext`, fresh data dir):
 *   - floor: one small value under a sequential key (what bench/sidecar/floor.ts writes per request);
 *   - replay: `ReplayStore.consume` of a fresh execution fingerprint (a random SHA-256 key), audit off;
 *   - replay + audit: the same with the decision's audit record written alongside, exactly as `/evaluate` does
 *     (a real signed attestation, recorded under its time key with its time index entry).
 * Rounds alternate the patterns; figures are medians over the rounds. BENCH_ROUNDS (3), BENCH_DURATION (seconds per
 * run, 4).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { executionFingerprint, type AttestationV1 } from "@writ/runtime";
import { open } from "lmdb";
import { loadConfig, openContext, type SidecarContext } from "@writ/sidecar";
import { loadCases } from "./sidecar/policy-cases.js";
import { policiesRoot } from "./sidecar/writ.js";

const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 3);
const DURATION = Number(process.env["BENCH_DURATION"] ?? 4);
if (!(ROUNDS >= 1) || !(DURATION > 0)) throw new Error("BENCH_ROUNDS and BENCH_DURATION must be positive numbers");

const median = (values: readonly number[]): number => {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function context(dir: string, audit: boolean): Promise<SidecarContext> {
  const policies = await policiesRoot(dir);
  return openContext(
    loadConfig({
      SERVICE_API_KEY: "bench-api-key-0123456789",
      SERVICE_POLICIES_ROOT: policies,
      SERVICE_DATA_DIR: join(dir, "data"),
      SERVICE_AUDIT: audit ? "on" : "off",
    }),
  );
}

type Write = (i: number) => Promise<unknown>;

interface Pattern {
  readonly name: string;
  open(dir: string): Promise<{ write: Write; close(): Promise<void> }>;
}

let run = 0;
const PATTERNS: readonly Pattern[] = [
  {
    name: "floor (small value, sequential key)",
    async open(dir) {
      // The same durable defaults the sidecar opens its data dir with.
      const root = open({ path: join(dir, "floor"), noSubdir: false });
      const db = root.openDB({ name: "bench-floor", encoding: "json" });
      return {
        write: async (i) => {
          await db.put(i, { state: "consumed", at: Date.now() });
          await root.flushed;
        },
        close: () => root.close(),
      };
    },
  },
  {
    name: "replay entry",
    async open(dir) {
      const ctx = await context(dir, false);
      return { write: (i) => ctx.store!.consume(executionFingerprint(`w${run}-${i}`)), close: () => ctx.close() };
    },
  },
  {
    name: "replay entry + audit record",
    async open(dir) {
      const ctx = await context(dir, true);
      const signals = (await loadCases()).valid.find((c) => c.verdict === "approve")!.signals;
      const sample = (
        await ctx.authorizer.evaluate({ executionId: "sample", policyId: "payments.transfer", policyVersion: "1.2.0", signals })
      ).attestation;
      const write: Write = (i) => {
        const executionId = `w${run}-${i}`;
        const attestation: AttestationV1 = { ...sample, executionId, execution_fingerprint: executionFingerprint(executionId) };
        return ctx.store!.consume(attestation.execution_fingerprint, {
          record: {
            kind: "decision",
            body: {
              executionId,
              endpoint: "evaluate",
              status: "approved",
              ruleMatched: "verified",
              attestation,
              recordedAt: new Date().toISOString(),
            },
          },
        });
      };
      return { write, close: () => ctx.close() };
    },
  },
];

async function measure(pattern: Pattern, concurrency: number): Promise<{ opsPerSecond: number; p50Ms: number }> {
  const dir = await mkdtemp(join(tmpdir(), "writ-bench-writes-"));
  const target = await pattern.open(dir);
  run++;
  let next = 0;
  const latencies: number[] = [];
  const end = performance.now() + DURATION * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const start = performance.now();
        await target.write(next++);
        latencies.push(performance.now() - start);
      }
    }),
  );
  await target.close();
  await rm(dir, { recursive: true, force: true });
  return { opsPerSecond: latencies.length / DURATION, p50Ms: median(latencies) };
}

console.log(`${ROUNDS} rounds × ${DURATION} s per pattern and concurrency, alternating; each write awaits its fsync`);
for (const concurrency of [1, 50]) {
  const results = new Map<string, { ops: number[]; p50: number[] }>();
  for (let round = 1; round <= ROUNDS; round++) {
    for (const pattern of PATTERNS) {
      const r = await measure(pattern, concurrency);
      const into = results.get(pattern.name) ?? { ops: [], p50: [] };
      into.ops.push(r.opsPerSecond);
      into.p50.push(r.p50Ms);
      results.set(pattern.name, into);
    }
  }
  console.log(`\nconcurrency ${concurrency}`);
  for (const [name, r] of results)
    console.log(`  ${name.padEnd(38)} ${median(r.ops).toFixed(0).padStart(7)} writes/s   p50 ${median(r.p50).toFixed(3)} ms`);
  const floor = results.get(PATTERNS[0]!.name)!;
  const full = results.get(PATTERNS[2]!.name)!;
  console.log(
    `  replay entry + audit record / floor: ${(median(full.ops) / median(floor.ops)).toFixed(2)}× the writes per second, ${(median(full.p50) / median(floor.p50)).toFixed(2)}× the p50`,
  );
}
