/**
 * What one evaluation of a policy costs, in instructions (`npm run bench:policy-cost -- DIR...`; docs/benchmarks.md,
 * "Policies that speak time"): each policy directory's source compiled, then the cases of its policy.test.json that
 * decide evaluated BENCH_REPS times (schema validation and the evaluator, each case at its own `now`), in a node run
 * under callgrind; the same run with no repetition is subtracted, so start-up and compiling cancel out. `--no-opt`,
 * `--single-threaded` and `--predictable-gc-schedule`, as bench:budget, so the count repeats under any load.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { compile } from "@writ/compiler";
import { BUNDLE_FILES, createSignalValidator, preparePolicy, type PolicyIr } from "@writ/runtime";
import { parseTestFile } from "../compiler/src/testing/test-file.js";

const REPS = Number(process.env["BENCH_REPS"] ?? 200);
const HERE = fileURLToPath(import.meta.url);

/** In the child: evaluates the decided cases of `dir` `reps` times; prints how many evaluations ran. */
function evaluate(dir: string, reps: number): number {
  const source = join(dir, "policy.writ");
  const result = compile(source, readFileSync(source, "utf8"));
  if (!result.valid || !result.bundle) throw new Error(`${source} does not compile`);
  const files = result.bundle.files;
  const file = (name: string) => JSON.parse(new TextDecoder().decode(files.get(name)!)) as unknown;
  const validate = createSignalValidator(file(BUNDLE_FILES.schema) as object);
  const policy = preparePolicy(file(BUNDLE_FILES.ir) as PolicyIr);
  const cases = parseTestFile(readFileSync(join(dir, "policy.test.json"), "utf8")).cases.filter((c) => !("invalid" in c.expect));
  let evaluations = 0;
  for (let r = 0; r < reps; r++) {
    for (const c of cases) {
      if (!validate(c.signals).valid) throw new Error(`${dir}: case ${c.name} is invalid`);
      policy.evaluate(c.signals, c.now);
      evaluations++;
    }
  }
  return evaluations;
}

/** Instructions of a callgrind'd child evaluating `dir` `reps` times, and its evaluations. */
function counted(dir: string, reps: number): { instructions: number; evaluations: number } {
  const out = mkdtempSync(join(tmpdir(), "writ-policy-cost-"));
  try {
    const stdout = execFileSync(
      "valgrind",
      [
        "--tool=callgrind",
        `--callgrind-out-file=${join(out, "cg.%p")}`,
        process.execPath,
        "--no-opt",
        // No GC helper threads, collections on a fixed schedule: what they do would otherwise vary with the machine's load.
        "--single-threaded",
        "--predictable-gc-schedule",
        "--import",
        "tsx",
        HERE,
        "--child",
        dir,
        String(reps),
      ],
      { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
    );
    const summary = readdirSync(out).map((f) => readFileSync(join(out, f), "utf8").match(/^summary: (\d+)/m)?.[1] ?? "0");
    return { instructions: summary.reduce((a, b) => a + Number(b), 0), evaluations: Number(stdout.trim()) };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--child") {
  process.stdout.write(`${evaluate(process.argv[3]!, Number(process.argv[4]))}\n`);
} else {
  const dirs = process.argv.slice(2).map((d) => resolve(d));
  if (dirs.length === 0) throw new Error("usage: npm run bench:policy-cost -- POLICY_DIR...");
  console.log(
    `instructions per evaluation (validation and evaluator; callgrind, node --no-opt, ${REPS} repetitions of each policy's decided cases)`,
  );
  for (const dir of dirs) {
    const base = counted(dir, 0);
    const run = counted(dir, REPS);
    const per = (run.instructions - base.instructions) / run.evaluations;
    console.log(`  ${dir.split("/").slice(-2).join("@")}: ${(per / 1000).toFixed(1)} K (${run.evaluations} evaluations)`);
  }
}
