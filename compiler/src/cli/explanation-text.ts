import type { Decision, ExplainedExpr, Explanation, Scalar } from "@writ/runtime";
import { compile } from "../compile.js";
import { printExpr } from "../fmt/print-expr.js";

/** Each rule's condition as the source writes it (constants by name), by rule name; empty when the source does not parse. */
export function conditionsAsWritten(source: string): ReadonlyMap<string, string> {
  const { ast } = compile("policy.writ", source);
  return new Map((ast?.rules ?? []).map((r) => [r.name.name, printExpr(r.when)]));
}

/** The decision, as `writ eval` prints it. */
export function decisionLines(decision: Decision): string[] {
  if (!decision.decided) return ["verdict: undecided (no rule's condition is true and the policy has no `otherwise`; a sidecar answers SYS-006)"];
  return [`verdict: ${decision.verdict}`, `rule:    ${decision.ruleId}`, `reason:  ${decision.reason}`];
}

/**
 * Every rule with its result, the condition as written, then the condition as evaluated: each operator with the value
 * it computed and, below it, its operands, down to the signals (a literal's value is its text, so literals are left out).
 */
export function explanationLines(explanation: Explanation, decision: Decision, written: ReadonlyMap<string, string>): string[] {
  const lines = ["", "rules, in order (the first whose condition is true decides):"];
  for (const r of explanation.rules) {
    const decides = decision.decided && decision.ruleId === r.rule;
    lines.push(`  ${r.rule}: ${r.result}${decides ? "  <- decides" : ""}   (${r.verdict} ${JSON.stringify(r.reason)})`);
    const source = written.get(r.rule);
    if (source !== undefined) lines.push(`    when ${source}`);
    tree(r.condition, 2, lines);
  }
  const dropped = [...written.keys()].filter((name) => !explanation.rules.some((r) => r.rule === name));
  for (const name of dropped) lines.push(`  ${name}: not in the compiled policy (it can never decide)`);
  const o = explanation.otherwise;
  const otherwiseDecides = decision.decided && o !== null && !explanation.rules.some((r) => r.rule === decision.ruleId);
  lines.push(o ? `  otherwise: ${o.verdict} ${JSON.stringify(o.reason)}${otherwiseDecides ? "  <- decides" : ""}` : "  otherwise: none (the policy has no catch-all)");
  return lines;
}

function tree(e: ExplainedExpr, depth: number, lines: string[]): void {
  lines.push(`${"  ".repeat(depth)}${e.expr}: ${valueText(e)}`);
  for (const o of e.operands ?? []) if (o.operands !== undefined || !isLiteral(o)) tree(o, depth + 1, lines);
}

/** A leaf whose text is its value's: a literal. Signals and `present(...)` are leaves too, but their text is a name. */
function isLiteral(e: ExplainedExpr): boolean {
  return e.value !== null && e.expr === scalarText(e.value);
}

function valueText(e: ExplainedExpr): string {
  // Only a signal can be an unknown leaf: an optional signal that was not sent.
  if (e.value === null) return e.operands === undefined ? "absent" : "unknown";
  return scalarText(e.value);
}

function scalarText(v: Scalar): string {
  return typeof v === "string" ? JSON.stringify(v) : String(v);
}
