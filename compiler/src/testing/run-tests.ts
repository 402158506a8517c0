import { BUNDLE_FILES, OTHERWISE_RULE_ID, createSignalValidator, parseStrictJson, preparePolicy, type PolicyIr } from "@writ/runtime";
import type { Bundle } from "../phases/emit.js";
import type { PolicyAst } from "../syntax/ast.js";
import type { PolicyTestFile } from "./test-file.js";

export interface CaseResult {
  readonly name: string;
  readonly passed: boolean;
  /** Why it failed, e.g. "expected verdict `approve`, got `reject` (rule `risky`)". */
  readonly failure?: string;
}

export interface TestReport {
  readonly cases: readonly CaseResult[];
  /** Every rule in source order, then `otherwise` when the policy has one. */
  readonly rules: readonly string[];
  readonly covered: readonly string[];
  readonly uncovered: readonly string[];
}

/**
 * Runs a policy's test cases against its emitted bundle, read back the way the runtime reads it (schema
 * with the runtime's strict validator, IR with the runtime's evaluator), so a passing test speaks for
 * what a sidecar will decide.
 */
export function runPolicyTests(ast: PolicyAst, bundle: Bundle, tests: PolicyTestFile): TestReport {
  const read = (name: string): unknown => parseStrictJson(new TextDecoder().decode(bundle.files.get(name)!));
  const validate = createSignalValidator(read(BUNDLE_FILES.schema) as object);
  const policy = preparePolicy(read(BUNDLE_FILES.ir) as PolicyIr);
  const hit = new Set<string>();

  const cases = tests.cases.map((c): CaseResult => {
    const validation = validate(c.signals);
    if ("invalid" in c.expect) {
      const want = [...new Set(c.expect.invalid)].sort();
      const got = validation.valid ? [] : [...new Set(validation.errors.map((e) => e.code))].sort();
      if (want.join() === got.join()) return { name: c.name, passed: true };
      return { name: c.name, passed: false, failure: `expected signal errors ${list(want)}, got ${got.length ? list(got) : "none"}` };
    }
    if (!validation.valid) {
      return {
        name: c.name,
        passed: false,
        failure: `signals are invalid: ${validation.errors.map((e) => `${e.code} ${e.message}`).join("; ")}`,
      };
    }
    // A case of a policy that reads `now` states its instant: on the wall clock it would pass one day and fail the next.
    if (policy.readsNow && c.now === undefined) {
      return {
        name: c.name,
        passed: false,
        failure:
          'the policy reads `now`: give the case a `now`, such as "now": "2026-06-01T12:00:00Z", so that it does not depend on the clock',
      };
    }
    const d = policy.evaluate(c.signals, c.now);
    if (d.decided) hit.add(d.ruleId);
    if ("fault" in c.expect) {
      const got = d.decided
        ? `verdict \`${d.verdict}\` (rule \`${d.ruleId}\`)`
        : d.fault
          ? `fault \`${d.fault.code}\` at rule \`${d.fault.ruleId}\``
          : "no decision";
      const ok = !d.decided && d.fault?.code === c.expect.fault && (c.expect.rule === undefined || d.fault.ruleId === c.expect.rule);
      const want = `fault \`${c.expect.fault}\`${c.expect.rule === undefined ? "" : ` at rule \`${c.expect.rule}\``}`;
      return ok ? { name: c.name, passed: true } : { name: c.name, passed: false, failure: `expected ${want}, got ${got}` };
    }
    if (!d.decided && d.fault) {
      return {
        name: c.name,
        passed: false,
        failure: `expected verdict \`${c.expect.verdict}\`, got fault \`${d.fault.code}\` at rule \`${d.fault.ruleId}\`: ${d.fault.message}`,
      };
    }
    const verdict = d.decided ? d.verdict : "undecided";
    const problems: string[] = [];
    if (verdict !== c.expect.verdict) problems.push(`expected verdict \`${c.expect.verdict}\`, got \`${verdict}\``);
    if (c.expect.rule !== undefined && (!d.decided || d.ruleId !== c.expect.rule)) {
      problems.push(`expected rule \`${c.expect.rule}\`, got ${d.decided ? `\`${d.ruleId}\`` : "no rule"}`);
    }
    if (c.expect.reason !== undefined && (!d.decided || d.reason !== c.expect.reason)) {
      problems.push(`expected reason ${JSON.stringify(c.expect.reason)}, got ${d.decided ? JSON.stringify(d.reason) : "none"}`);
    }
    return problems.length === 0 ? { name: c.name, passed: true } : { name: c.name, passed: false, failure: problems.join("; ") };
  });

  const rules = [...ast.rules.map((r) => r.name.name), ...(ast.otherwise ? [OTHERWISE_RULE_ID] : [])];
  return { cases, rules, covered: rules.filter((r) => hit.has(r)), uncovered: rules.filter((r) => !hit.has(r)) };
}

function list(codes: readonly string[]): string {
  return codes.map((c) => `\`${c}\``).join(", ");
}
