import { readFile } from "node:fs/promises";
import { basename, dirname, join, relative } from "node:path";
import { compile } from "../../compile.js";
import { runPolicyTests } from "../../testing/run-tests.js";
import { parseTestFile, TestFileError } from "../../testing/test-file.js";
import { EXIT, type CliIo } from "../io.js";
import { plural, reportDiagnostics } from "../report.js";
import { collectSources } from "../sources.js";

/** The test file beside a policy: `policy.writ` is tested by `policy.test.json`. */
export function testFileFor(policyPath: string): string {
  return join(dirname(policyPath), `${basename(policyPath, ".writ")}.test.json`);
}

/**
 * `writ test`: runs each policy's test cases against its bundle as the runtime would load it and reports
 * rule coverage. Exit 3 when a policy does not compile, 4 when a case fails, a test file is missing or
 * unreadable, or (with `requireCoverage`) a rule no case reaches.
 */
export async function runTest(io: CliIo, paths: readonly string[], requireCoverage: boolean, verbose: boolean): Promise<number> {
  const sources = await collectSources(io.cwd, paths);
  let compileFailed = 0;
  let testFailed = 0;
  let passedCases = 0;
  let failedCases = 0;
  for (const file of sources) {
    const result = compile(file.display, file.text);
    if (!result.valid) {
      reportDiagnostics(io, file, result, "pretty");
      io.err(`${file.display}: does not compile`);
      compileFailed++;
      continue;
    }
    const testPath = testFileFor(file.absolute);
    const shown = relative(io.cwd, testPath);
    let text: string;
    try {
      text = await readFile(testPath, "utf8");
    } catch {
      io.err(`${file.display}: no test file (expected \`${shown}\`)`);
      testFailed++;
      continue;
    }
    let tests;
    try {
      tests = parseTestFile(text);
    } catch (e) {
      if (!(e instanceof TestFileError)) throw e;
      io.err(`${shown}: ${e.message}`);
      testFailed++;
      continue;
    }
    const report = runPolicyTests(result.ast!, result.bundle!, tests);
    const failures = report.cases.filter((c) => !c.passed);
    passedCases += report.cases.length - failures.length;
    failedCases += failures.length;
    io.out(`${file.display}: ${report.cases.length - failures.length}/${report.cases.length} cases passed, rules covered ${report.covered.length}/${report.rules.length}`);
    for (const c of report.cases) {
      if (!c.passed) io.out(`  FAIL ${c.name}: ${c.failure}`);
      else if (verbose) io.out(`  ok   ${c.name}`);
    }
    if (report.uncovered.length > 0) io.out(`  not covered: ${report.uncovered.map((r) => `\`${r}\``).join(", ")}`);
    if (failures.length > 0 || (requireCoverage && report.uncovered.length > 0)) testFailed++;
  }
  io.err(`${plural(sources.length, "policy", "policies")}: ${passedCases} cases passed, ${failedCases} failed`);
  if (compileFailed > 0) return EXIT.compileFailed;
  return testFailed > 0 ? EXIT.testsFailed : EXIT.ok;
}
