import type { Decision, Explanation } from "@writ/runtime";
import { conditionsOf, explanationView, type ExprView } from "../editor/explanation.js";

/**
 * Each rule's condition as the source writes it (constants by name), by rule name; empty when the source does not
 * parse. The compiler is loaded here, on use: `writ eval` of a bundle without --explain never parses a source.
 */
export async function conditionsAsWritten(source: string): Promise<ReadonlyMap<string, string>> {
  const { compile } = await import("../compile.js");
  const { ast } = compile("policy.writ", source);
  return ast ? conditionsOf(ast) : new Map();
}

/** The decision, as `writ eval` prints it. */
export function decisionLines(decision: Decision): string[] {
  if (!decision.decided && decision.fault) {
    const { code, ruleId, message } = decision.fault;
    return [
      `fault:   ${code} in rule \`${ruleId}\`: ${message}`,
      `         nothing is decided; a sidecar answers 422 [${code}@${ruleId}] and consumes nothing`,
    ];
  }
  if (!decision.decided)
    return ["verdict: undecided (no rule's condition is true and the policy has no `otherwise`; a sidecar answers SYS-006)"];
  return [`verdict: ${decision.verdict}`, `rule:    ${decision.ruleId}`, `reason:  ${decision.reason}`];
}

/** Every rule with its result, the condition as written, then the condition as evaluated (editor/explanation.ts). */
export function explanationLines(explanation: Explanation, decision: Decision, written: ReadonlyMap<string, string>): string[] {
  const view = explanationView(explanation, decision, written);
  const lines = ["", "rules, in order (the first whose condition is true decides):"];
  for (const r of view.rules) {
    lines.push(
      `  ${r.rule}: ${r.result}${r.decides ? "  <- decides" : r.ends ? "  <- ends the evaluation" : ""}   (${r.verdict} ${JSON.stringify(r.reason)})`,
    );
    if (r.written !== null) lines.push(`    when ${r.written}`);
    tree(r.condition, 2, lines);
  }
  for (const name of view.dropped) lines.push(`  ${name}: not in the compiled policy (it can never decide)`);
  const o = view.otherwise;
  lines.push(
    o
      ? `  otherwise: ${o.verdict} ${JSON.stringify(o.reason)}${o.decides ? "  <- decides" : ""}`
      : "  otherwise: none (the policy has no catch-all)",
  );
  return lines;
}

function tree(e: ExprView, depth: number, lines: string[]): void {
  lines.push(`${"  ".repeat(depth)}${e.expr}: ${e.value}`);
  for (const o of e.operands) tree(o, depth + 1, lines);
}
