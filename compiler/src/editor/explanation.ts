import { FAULTS, type Decision, type ExplainedExpr, type Explanation, type Scalar, type Truth, type Verdict } from "@writ/runtime";
import { printExpr } from "../fmt/print-expr.js";
import type { PolicyAst } from "../syntax/ast.js";

/**
 * The runtime's explanation (`explain()`) laid out for a person, once for every renderer: `writ eval --explain` prints
 * it as text, the playground as a tree. Each rule with its result and whether it decides, its condition as the
 * source writes it, then the condition as evaluated: each operator with the value it computed and, below it, its
 * operands down to the signals (a literal's value is its text, so literals are left out).
 */
export interface ExplanationView {
  readonly rules: readonly RuleView[];
  /** Rules of the source that lowering dropped (they can never decide). */
  readonly dropped: readonly string[];
  /** The catch-all, or null when the policy has none. */
  readonly otherwise: { readonly verdict: Verdict; readonly reason: string; readonly decides: boolean } | null;
}

export interface RuleView {
  readonly rule: string;
  /** `fault`: computing the condition faulted (faults end an evaluation that tries the rule). */
  readonly result: Truth | "fault";
  readonly decides: boolean;
  /** The rule whose fault ended the evaluation: nothing was decided. */
  readonly ends: boolean;
  readonly verdict: Verdict;
  readonly reason: string;
  /** The condition as the source writes it (constants by name); null when the source is not at hand. */
  readonly written: string | null;
  readonly condition: ExprView;
}

export interface ExprView {
  /** The expression as the IR has it (constants inlined). */
  readonly expr: string;
  /**
   * Its value as text: a literal's text, a decimal's exact text (`1000.30`), `unknown` for a compound without a value,
   * `absent` for an optional signal not sent, `fault: division by zero` where computing it faulted; a calendar field's
   * with the offset its local time was read at (`9 (UTC+01:00)`).
   */
  readonly value: string;
  /** True, false or unknown for a boolean-valued node, `fault` for one that faulted (or holds one that did); else null. */
  readonly truth: Truth | "fault" | null;
  readonly operands: readonly ExprView[];
}

/** Each rule's condition as the source writes it, by rule name. */
export function conditionsOf(ast: PolicyAst): ReadonlyMap<string, string> {
  return new Map(ast.rules.map((r) => [r.name.name, printExpr(r.when)]));
}

export function explanationView(explanation: Explanation, decision: Decision, written: ReadonlyMap<string, string>): ExplanationView {
  const decider = decision.decided ? decision.ruleId : null;
  const ender = !decision.decided && decision.fault ? decision.fault.ruleId : null;
  const rules = explanation.rules.map((r): RuleView => ({
    rule: r.rule,
    result: r.result,
    decides: r.rule === decider,
    ends: r.rule === ender,
    verdict: r.verdict,
    reason: r.reason,
    written: written.get(r.rule) ?? null,
    condition: exprView(r.condition),
  }));
  const o = explanation.otherwise;
  return {
    rules,
    dropped: [...written.keys()].filter((name) => !explanation.rules.some((r) => r.rule === name)),
    otherwise: o ? { verdict: o.verdict, reason: o.reason, decides: decider !== null && !rules.some((r) => r.decides) } : null,
  };
}

function exprView(e: ExplainedExpr): ExprView {
  const operands = (e.operands ?? []).filter((o) => o.operands !== undefined || !isLiteral(o)).map(exprView);
  // A node without a value above one that faulted has faulted too (the runtime marks only where it happened).
  const faulted = e.fault !== undefined || (e.value === null && operands.some((o) => o.truth === "fault"));
  return {
    expr: e.expr,
    value: e.fault === undefined && faulted ? "fault" : valueText(e),
    truth: faulted ? "fault" : typeof e.value === "boolean" ? (String(e.value) as Truth) : e.value === null ? "unknown" : null,
    operands,
  };
}

/** A leaf whose text is its value's: a literal. Signals and `present(...)` are leaves too, but their text is a name. */
function isLiteral(e: ExplainedExpr): boolean {
  return e.value !== null && (e.expr === scalarText(e.value) || e.expr === e.exact);
}

function valueText(e: ExplainedExpr): string {
  if (e.fault !== undefined) return `fault ${e.fault}: ${FAULTS[e.fault]}`;
  if (e.exact !== undefined) return e.exact;
  if (e.offset !== undefined && e.value !== null) return `${scalarText(e.value)} (${e.offset})`;
  // Only a signal can be an unknown leaf: an optional signal that was not sent.
  if (e.value === null) return e.operands === undefined ? "absent" : "unknown";
  return scalarText(e.value);
}

function scalarText(v: Scalar): string {
  return typeof v === "string" ? JSON.stringify(v) : String(v);
}
