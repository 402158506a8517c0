/**
 * Regular expressions (`npm run bench:regex`, i.e. `tsx bench/regex.ts`). Not a test: it prints numbers.
 *
 * writ's linear-time engine (runtime/src/regex: `matches` and every schema `pattern`) against, in the same run:
 *   - V8's RegExp with the `u` flag, what writ ran before, and what ajv runs by default;
 *   - re2js, the JavaScript port of RE2 (the peer that would have been used instead of writing one), its patterns
 *     translated from JavaScript's syntax with `RE2JS.translateRegExp`.
 *
 *   1. The 23 shapes a backtracking engine takes super-linear time on (runtime/test/fixtures/regex/hostile-shapes.json),
 *      each on its 64-character attack string: writ's and re2js's first call on a fresh matcher (compile, then the
 *      first test, which builds the DFA states it meets), and a warm call; V8 in a worker that is terminated after
 *      BENCH_V8_LIMIT_MS. The answers of writ and re2js must agree (the script throws otherwise).
 *   2. Patterns a policy really has (the conformance fixture's `reference`, the timestamp pattern, ...), warm, per
 *      call on a matching string: the cost of writ's engine next to V8's native code and to re2js.
 *
 * Contenders are run interleaved, one repetition of each in turn, after BENCH_WARMUP repetitions that warm the
 * engines' own code (so a "first call" is a fresh matcher's, not the first ever); the figure is the median over
 * BENCH_REPS repetitions (default 11).
 */
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { Worker } from "node:worker_threads";
import { RE2JS } from "re2js";
import { TIMESTAMP_PATTERN, compileLinearRegExp } from "@writ/runtime";

const REPS = Number(process.env["BENCH_REPS"] ?? 11);
const WARMUP = Number(process.env["BENCH_WARMUP"] ?? 3);
const WARM_CALLS = Number(process.env["BENCH_WARM_CALLS"] ?? 2000);
const V8_LIMIT_MS = Number(process.env["BENCH_V8_LIMIT_MS"] ?? 2000);

interface Shape {
  readonly pattern: string;
  readonly shape: string;
  readonly attack: { readonly prefix: string; readonly pump: string; readonly suffix: string };
  readonly refused?: string;
}
const { shapes } = JSON.parse(readFileSync(new URL("../runtime/test/fixtures/regex/hostile-shapes.json", import.meta.url), "utf8")) as {
  shapes: Shape[];
};
const attack64 = ({ attack: { prefix, pump, suffix } }: Shape): string =>
  prefix + pump.repeat((64 - prefix.length - suffix.length) / pump.length) + suffix;

interface Matcher {
  test(s: string): boolean;
}
type Engine = { readonly name: string; readonly compile: (pattern: string) => Matcher };
const WRIT: Engine = { name: "writ", compile: compileLinearRegExp };
const RE2: Engine = { name: "re2js", compile: (p) => RE2JS.compile(RE2JS.translateRegExp(p)) };
const V8: Engine = { name: "V8", compile: (p) => new RegExp(p, "u") };

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
};

/** A fresh matcher's compile and first test, and a warm test's mean over WARM_CALLS, in microseconds. */
function measure(engine: Engine, pattern: string, input: string): { compile: number; first: number; warm: number; answer: boolean } {
  const t0 = performance.now();
  const m = engine.compile(pattern);
  const t1 = performance.now();
  const answer = m.test(input);
  const t2 = performance.now();
  for (let i = 0; i < WARM_CALLS; i++) m.test(input);
  const t3 = performance.now();
  return { compile: (t1 - t0) * 1e3, first: (t2 - t1) * 1e3, warm: ((t3 - t2) * 1e3) / WARM_CALLS, answer };
}

/** V8's answer and time on `input`, or null when it has not answered within the limit (the worker is terminated). */
function v8Within(pattern: string, input: string): Promise<{ ms: number; answer: boolean } | null> {
  const src = `const { parentPort, workerData: { pattern, input } } = require("node:worker_threads");
    const re = new RegExp(pattern, "u"); const t = performance.now(); const answer = re.test(input);
    parentPort.postMessage({ ms: performance.now() - t, answer });`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(src, { eval: true, workerData: { pattern, input } });
    const timer = setTimeout(() => void worker.terminate().then(() => resolve(null)), V8_LIMIT_MS);
    worker.once("message", (m: { ms: number; answer: boolean }) => {
      clearTimeout(timer);
      void worker.terminate().then(() => resolve(m));
    });
    worker.once("error", reject);
  });
}

const us = (x: number): string => (x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0));

async function hostileShapes(): Promise<void> {
  console.log(
    `\n1. The 23 super-linear shapes, 64-character attack strings (µs, medians of ${REPS}; V8 once, stopped after ${V8_LIMIT_MS} ms)`,
  );
  console.log("| # | shape | pattern | writ compile | writ first test | writ warm | re2js compile | re2js first test | re2js warm | V8 |");
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  const run = shapes.filter((s) => s.refused === undefined);
  for (let i = 0; i < WARMUP; i++) for (const s of run) for (const e of [WRIT, RE2]) measure(e, s.pattern, attack64(s));
  let n = 0;
  for (const s of shapes) {
    n++;
    const cell = `| ${n} | ${s.shape} | \`${s.pattern.replaceAll("|", "\\|")}\``;
    if (s.refused !== undefined) {
      let re2 = "runs";
      try {
        RE2.compile(s.pattern);
      } catch {
        re2 = "refused";
      }
      console.log(`${cell} | refused (E310: \`${s.refused}\`) | | | ${re2} | | | |`);
      continue;
    }
    const input = attack64(s);
    const writ: ReturnType<typeof measure>[] = [];
    const re2: ReturnType<typeof measure>[] = [];
    for (let r = 0; r < REPS; r++) {
      writ.push(measure(WRIT, s.pattern, input));
      re2.push(measure(RE2, s.pattern, input));
    }
    if (writ[0]!.answer !== re2[0]!.answer) throw new Error(`writ and re2js disagree on /${s.pattern}/: ${writ[0]!.answer}`);
    const v8 = await v8Within(s.pattern, input);
    if (v8 !== null && v8.answer !== writ[0]!.answer) throw new Error(`writ and V8 disagree on /${s.pattern}/`);
    const v8Cell = v8 === null ? `> ${V8_LIMIT_MS / 1000} s (stopped)` : `${us(v8.ms * 1e3)}`;
    const cells = (xs: typeof writ) => (["compile", "first", "warm"] as const).map((k) => us(median(xs.map((x) => x[k])))).join(" | ");
    console.log(`${cell} | ${cells(writ)} | ${cells(re2)} | ${v8Cell} |`);
  }
}

/** Patterns of real policies, each with a string it matches. */
const SAFE: readonly (readonly [string, string, string])[] = [
  ["conformance.transfer's `reference`", "^[A-Z0-9-]{1,64}$", "INV-2026-000123-ACME-".repeat(3).slice(0, 64)],
  ["every timestamp signal's pattern", TIMESTAMP_PATTERN, "2026-03-01T10:00:00.000Z"],
  ["a country code", "^[A-Z]{2}$", "DE"],
  ["an e-mail address", "^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}$", "jane.doe+invoices@example-mail.co.uk"],
  ["an S3 destination", "^s3:\\/\\/[a-z0-9.-]+\\/", "s3://acme-exports-eu/2026/03/01/part-0001.parquet"],
  ["a word in 1 KB of prose", "\\bembargo\\b", `${"lorem ipsum dolor sit amet, ".repeat(36)}embargo`],
];

function safePatterns(): void {
  console.log(`\n2. Patterns of real policies, warm, a matching string (ns per test; medians of ${REPS} × ${WARM_CALLS} calls)`);
  console.log("| pattern | string length | writ | V8 | re2js | writ / V8 | re2js / writ |");
  console.log("|---|---|---|---|---|---|---|");
  for (const [what, pattern, input] of SAFE) {
    const engines = [WRIT, V8, RE2];
    const matchers = engines.map((e) => e.compile(pattern));
    for (const m of matchers) if (!m.test(input)) throw new Error(`/${pattern}/ does not match its string`);
    const samples: number[][] = engines.map(() => []);
    for (let r = 0; r < WARMUP + REPS; r++) {
      matchers.forEach((m, i) => {
        const t = performance.now();
        for (let k = 0; k < WARM_CALLS; k++) m.test(input);
        if (r >= WARMUP) samples[i]!.push(((performance.now() - t) * 1e6) / WARM_CALLS);
      });
    }
    const [writ, v8, re2] = samples.map(median) as [number, number, number];
    console.log(
      `| ${what}: \`${pattern.replaceAll("|", "\\|")}\` | ${input.length} | ${writ.toFixed(0)} | ${v8.toFixed(0)} | ${re2.toFixed(0)} | ${(writ / v8).toFixed(1)} | ${(re2 / writ).toFixed(1)} |`,
    );
  }
}

console.log(`node ${process.version}, ${cpus()[0]?.model ?? "cpu"} × ${cpus().length}, flags: ${process.execArgv.join(" ") || "none"}`);
await hostileShapes();
safePatterns();
