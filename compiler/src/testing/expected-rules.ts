import { OTHERWISE_RULE_ID } from "@writ/runtime";
import { suggest } from "../diagnostics/suggest.js";
import type { PolicyAst } from "../syntax/ast.js";
import type { PolicyTestFile } from "./test-file.js";

/**
 * The static check of a test file against its policy, before any case runs: a case that expects a rule must name one
 * the policy has (a rule, or `otherwise` when there is one). One message per case that does not, naming the case and
 * the rule, with "did you mean" for a near miss.
 */
export function unknownExpectedRules(tests: PolicyTestFile, ast: PolicyAst): string[] {
  const rules = [...ast.rules.map((r) => r.name.name), ...(ast.otherwise ? [OTHERWISE_RULE_ID] : [])];
  return tests.cases.flatMap((c) => {
    const rule = "verdict" in c.expect ? c.expect.rule : undefined;
    if (rule === undefined || rules.includes(rule)) return [];
    const which = `case \`${c.name}\` (\`${c.at}\`) expects rule \`${rule}\``;
    if (rule === OTHERWISE_RULE_ID) return [`${which}, but the policy has no \`otherwise\``];
    const hint = suggest(rule, rules)[0];
    return [`${which}, which the policy does not have${hint ? `; ${hint}` : ""}`];
  });
}
