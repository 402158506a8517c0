/**
 * What one evaluation of a policy costs, in instructions (`npm run bench:policy-cost -- DIR...`; docs/benchmarks.md,
 * "Policies that speak time"): each policy directory's source compiled, its signals schema and IR prepared, and the
 * cases of its policy.test.json that decide run WARMUP times; then callgrind is zeroed (vgdb), the cases run BENCH_REPS
 * times (schema validation and the evaluator, each case at its own `now`), and the count is dumped. Only the measured
 * loop is counted: no start-up, no compiling. `--no-opt`, `--single-threaded` and `--predictable-gc-schedule`, as
 * bench:budget; the count still moves with the machine's load (docs/benchmarks.md): compare policies within one run.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { compile } from "@writ/compiler";
import { BUNDLE_FILES, createSignalValidator, preparePolicy, type PolicyIr } from "@writ/runtime";
import { parseTestFile } from "../compiler/src/testing/test-file.js";
import { callgrindOptions, countDuring } from "./callgrind.js";

const REPS = Number(process.env["BENCH_REPS"] ?? 200);
const WARMUP = 20;
const HERE = fileURLToPath(import.meta.url);

/** In the child: prepares `dir`, warms up, says `ready`; on `go` evaluates its cases `reps` times and says `done N`. */
async function child(dir: string, reps: number): Promise<void> {
  const source = join(dir, "policy.writ");
  const result = compile(source, readFileSync(source, "utf8"));
  if (!result.valid || !result.bundle) throw new Error(`${source} does not compile`);
  const files = result.bundle.files;
  const file = (name: string) => JSON.parse(new TextDecoder().decode(files.get(name)!)) as unknown;
  const validate = createSignalValidator(file(BUNDLE_FILES.schema) as object);
  const policy = preparePolicy(file(BUNDLE_FILES.ir) as PolicyIr);
  const cases = parseTestFile(readFileSync(join(dir, "policy.test.json"), "utf8")).cases.filter((c) => !("invalid" in c.expect));
  const run = (times: number): number => {
    let evaluations = 0;
    for (let r = 0; r < times; r++) {
      for (const c of cases) {
        if (!validate(c.signals).valid) throw new Error(`${dir}: case ${c.name} is invalid`);
        policy.evaluate(c.signals, c.now);
        evaluations++;
      }
    }
    return evaluations;
  };
  run(WARMUP);
  // vgdb's commands reach a process only while it runs: a timer keeps the main thread polling while it waits, seldom
  // enough that its ticks between the loop's end and the dump weigh nothing beside the loop.
  const keepAlive = setInterval(() => undefined, 100);
  const lines = createInterface({ input: process.stdin });
  process.stdout.write("ready\n");
  for await (const line of lines) {
    if (line === "go") process.stdout.write(`done ${run(reps)}\n`);
    if (line === "exit") break;
  }
  clearInterval(keepAlive);
}

/** Instructions a callgrind'd child spends on `reps` repetitions of `dir`'s cases, and how many evaluations that was. */
async function counted(dir: string, reps: number): Promise<{ instructions: number; evaluations: number }> {
  const scratch = mkdtempSync(join(tmpdir(), "writ-policy-cost-"));
  const vgdbPrefix = join(scratch, "vgdb");
  const node = [process.execPath, "--no-opt", "--single-threaded", "--predictable-gc-schedule", "--import", "tsx", HERE];
  const valgrind = spawn("valgrind", [...callgrindOptions(vgdbPrefix, join(scratch, "cg.%p")), ...node, "--child", dir, String(reps)], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let errors = "";
  valgrind.stderr.on("data", (chunk: Buffer) => (errors = (errors + chunk.toString()).slice(-4_000)));
  try {
    const said = createInterface({ input: valgrind.stdout })[Symbol.asyncIterator]();
    const next = async (): Promise<string> => {
      const line = await said.next();
      if (line.done) throw new Error(`the child evaluating ${dir} stopped:\n${errors}`);
      return line.value;
    };
    if ((await next()) !== "ready") throw new Error(`the child evaluating ${dir} did not say ready`);
    let evaluations = 0;
    const count = await countDuring({ pid: valgrind.pid!, outDir: scratch, vgdbPrefix }, async () => {
      valgrind.stdin.write("go\n");
      evaluations = Number(/^done (\d+)$/.exec(await next())?.[1]);
    });
    valgrind.stdin.write("exit\n");
    return { instructions: count.all, evaluations };
  } finally {
    valgrind.stdin.end();
    await new Promise((done) => (valgrind.exitCode !== null ? done(null) : valgrind.once("exit", done)));
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--child") {
  await child(process.argv[3]!, Number(process.argv[4]));
} else {
  const dirs = process.argv.slice(2).map((d) => resolve(d));
  if (dirs.length === 0) throw new Error("usage: npm run bench:policy-cost -- POLICY_DIR...");
  console.log(
    `instructions per evaluation (validation and evaluator; callgrind over the measured loop alone, node --no-opt, ${REPS} repetitions of each policy's decided cases after ${WARMUP})`,
  );
  for (const dir of dirs) {
    const { instructions, evaluations } = await counted(dir, REPS);
    console.log(
      `  ${dir.split("/").slice(-2).join("@")}: ${(instructions / evaluations / 1000).toFixed(1)} K (${evaluations} evaluations)`,
    );
  }
}
