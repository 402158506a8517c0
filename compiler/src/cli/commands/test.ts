import { readFile } from "node:fs/promises";
import { basename, dirname, join, relative } from "node:path";
import { compile } from "../../compile.js";
import { formatDiagnosticLine } from "../../diagnostics/diagnostic.js";
import { unknownExpectedRules } from "../../testing/expected-rules.js";
import { junitXml } from "../../testing/junit.js";
import { outcomesJson, type PolicyTestOutcome } from "../../testing/outcome.js";
import { runPolicyTests } from "../../testing/run-tests.js";
import { parseTestFile, TestFileError, type PolicyTestFile } from "../../testing/test-file.js";
import { EXIT, type CliIo } from "../io.js";
import { plural, reportDiagnostics } from "../report.js";
import { collectSources, type SourceFile } from "../sources.js";

/** The test file beside a policy: `policy.writ` is tested by `policy.test.json`. */
export function testFileFor(policyPath: string): string {
  return join(dirname(policyPath), `${basename(policyPath, ".writ")}.test.json`);
}

export type TestFormat = "text" | "json" | "junit";

export interface TestRun {
  readonly io: CliIo;
  readonly paths: readonly string[];
  readonly requireCoverage: boolean;
  readonly verbose: boolean;
  readonly format: TestFormat;
}

/**
 * `writ test`: runs each policy's test cases against its bundle as the runtime would load it and reports rule
 * coverage, as text, one JSON document or JUnit XML. Exit 3 when a policy does not compile, 4 when a case fails, a
 * test file is missing, unreadable or expects a rule the policy does not have, or (with `requireCoverage`) a rule no
 * case reaches.
 */
export async function runTest(run: TestRun): Promise<number> {
  const { io } = run;
  const sources = await collectSources(io.cwd, run.paths);
  const outcomes: PolicyTestOutcome[] = [];
  for (const file of sources) outcomes.push(await testPolicy(run, file));
  if (run.format === "json") io.out(JSON.stringify(outcomesJson(outcomes)));
  else if (run.format === "junit") io.out(junitXml(outcomes).trimEnd());
  else for (const o of outcomes) printText(io, o, run.verbose);
  const cases = outcomes.flatMap((o) => (o.status === "error" ? [] : o.report.cases));
  const passed = cases.filter((c) => c.passed).length;
  io.err(`${plural(sources.length, "policy", "policies")}: ${passed} cases passed, ${cases.length - passed} failed`);
  if (outcomes.some((o) => o.status === "error" && o.cause === "policy")) return EXIT.compileFailed;
  return outcomes.every((o) => o.status === "passed") ? EXIT.ok : EXIT.testsFailed;
}

async function testPolicy(run: TestRun, file: SourceFile): Promise<PolicyTestOutcome> {
  const testPath = testFileFor(file.absolute);
  const testFile = relative(run.io.cwd, testPath);
  const about = { policy: file.display, testFile };
  const result = compile(file.display, file.text);
  if (!result.valid) {
    reportDiagnostics(run.io, file, result, "pretty");
    const details = result.errors.map(formatDiagnosticLine);
    return { ...about, suite: file.display, status: "error", cause: "policy", file: file.display, error: "does not compile", details };
  }
  const suite = `${result.ir!.policyId}@${result.ir!.version}`;
  const refused = (at: string, error: string, details: readonly string[] = []): PolicyTestOutcome => ({
    ...about,
    suite,
    status: "error",
    cause: "test file",
    file: at,
    error,
    details,
  });
  let text: string;
  try {
    text = await readFile(testPath, "utf8");
  } catch {
    return refused(file.display, `no test file (expected \`${testFile}\`)`);
  }
  let tests: PolicyTestFile;
  try {
    tests = parseTestFile(text);
  } catch (e) {
    if (!(e instanceof TestFileError)) throw e;
    return refused(testFile, e.message);
  }
  const unknown = unknownExpectedRules(tests, result.ast!);
  if (unknown.length > 0) return refused(testFile, `expects ${plural(unknown.length, "rule")} the policy does not have`, unknown);
  const report = runPolicyTests(result.ast!, result.bundle!, tests);
  const failed = report.cases.some((c) => !c.passed) || (run.requireCoverage && report.uncovered.length > 0);
  return { ...about, suite, status: failed ? "failed" : "passed", report, coverageRequired: run.requireCoverage };
}

function printText(io: CliIo, o: PolicyTestOutcome, verbose: boolean): void {
  if (o.status === "error") {
    // A policy that does not compile has had its diagnostics printed; a test file's problems are one a line.
    const lines = o.cause === "test file" && o.details.length > 0 ? o.details : [o.error];
    for (const line of lines) io.err(`${o.file}: ${line}`);
    return;
  }
  const { cases, covered, rules, uncovered } = o.report;
  const passed = cases.filter((c) => c.passed).length;
  io.out(`${o.policy}: ${passed}/${cases.length} cases passed, rules covered ${covered.length}/${rules.length}`);
  for (const c of cases) {
    if (!c.passed) io.out(`  FAIL ${c.name}: ${c.failure}`);
    else if (verbose) io.out(`  ok   ${c.name}`);
  }
  if (uncovered.length > 0) io.out(`  not covered: ${uncovered.map((r) => `\`${r}\``).join(", ")}`);
}
