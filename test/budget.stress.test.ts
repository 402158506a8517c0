/**
 * The cost budget refuses a regression (bench/budget.ts, docs/benchmarks.md "The budget"): the built sidecar, made to
 * serialize and parse JSON five times over (test/budget/regression.mjs), is counted by `npm run bench:budget` for one kind
 * against the committed bench/budget.json, and the run fails naming that kind. `.ci/run` runs the whole budget on the
 * sidecar as it is, which must stay within it.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../", import.meta.url));
const REGRESSION = fileURLToPath(new URL("./budget/regression.mjs", import.meta.url));
const run = promisify(execFile);

it("bench:budget fails a sidecar made dearer by a deliberate regression, naming the kind over budget", async () => {
  const outcome = await run("npx", ["tsx", "bench/budget.ts"], {
    cwd: REPO,
    env: { ...process.env, BENCH_BUDGET_KINDS: "evaluate-approved", BENCH_BUDGET_IMPORT: REGRESSION },
    maxBuffer: 16 << 20,
  }).then(
    (done) => ({ code: 0, output: done.stdout + done.stderr }),
    (failed: { code?: number; stdout?: string; stderr?: string }) => ({
      code: failed.code ?? -1,
      output: `${failed.stdout}${failed.stderr}`,
    }),
  );
  expect(outcome.output).toMatch(/evaluate-approved\s+\S+ M against \S+ M \(\+\d+\.\d+%\): OVER BUDGET/);
  expect(outcome.output).toContain("over budget: evaluate-approved.");
  expect(outcome.code, outcome.output).toBe(1);
});
