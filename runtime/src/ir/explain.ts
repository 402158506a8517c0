import { IrUnsupportedError } from "../errors.js";
import {
  arithmetic,
  comparison,
  logical,
  matches,
  membership,
  present,
  range,
  signal,
  stringTest,
  unary,
  type Operand,
  type Signals,
} from "./apply.js";
import type { Decision } from "./evaluate.js";
import { IR_OPERATORS, isFunctionName, isUnaryOp, UNARY_OPERATORS } from "./operators.js";
import { OTHERWISE_RULE_ID, type IrExpr, type IrNode, type IrOutcome, type PolicyIr, type Scalar, type Verdict } from "./types.js";
import { UNKNOWN, type Value } from "./values.js";

/** The value of a condition in Kleene's logic: only a rule whose condition is `true` decides. */
export type Truth = "true" | "false" | "unknown";

export interface ExplainedExpr {
  /**
   * The expression as the IR has it (constants inlined, `not in` as `not (... in ...)`), written with the operators'
   * symbols, every compound operand in parentheses.
   */
  readonly expr: string;
  /** Its value for these signals; null when unknown (an absent optional signal, arithmetic that is not finite, ...). */
  readonly value: Scalar | null;
  /** What it was computed from, explained alike; absent for a literal, a signal and `present(...)`. */
  readonly operands?: readonly ExplainedExpr[];
}

export interface ExplainedRule {
  readonly rule: string;
  readonly verdict: Verdict;
  readonly reason: string;
  readonly result: Truth;
  readonly condition: ExplainedExpr;
}

/** Why a policy decides as it does for one set of signals: every rule's condition, evaluated down to its signals. */
export interface Explanation {
  /** Every rule of the IR in order, including those after the one that decides. */
  readonly rules: readonly ExplainedRule[];
  /** What decides when no rule's condition is true; null when the policy has no catch-all. */
  readonly otherwise: IrOutcome | null;
}

export interface Explained {
  /** The first rule whose condition is true, else the catch-all: what the evaluator decides. */
  readonly decision: Decision;
  readonly explanation: Explanation;
}

interface Node {
  readonly explained: ExplainedExpr;
  readonly value: Value;
}

/**
 * Explains `ir` for `signals`, which must already be valid for the policy's signals schema. Every operator is applied
 * by the same functions the evaluator compiles to (apply.ts), so the explanation decides as `preparePolicy(ir)` does;
 * a property test checks it on generated policies.
 */
export function explain(ir: PolicyIr, signals: Signals): Explained {
  const rules = ir.rules.map((rule): ExplainedRule => {
    const { explained, value } = node(rule.when, signals);
    return { rule: rule.id, verdict: rule.verdict, reason: rule.reason, result: truthOf(value), condition: explained };
  });
  const first = rules.find((r) => r.result === "true");
  const decision: Decision = first
    ? { decided: true, verdict: first.verdict, ruleId: first.rule, reason: first.reason }
    : ir.otherwise
      ? { decided: true, verdict: ir.otherwise.verdict, ruleId: OTHERWISE_RULE_ID, reason: ir.otherwise.reason }
      : { decided: false };
  return { decision, explanation: { rules, otherwise: ir.otherwise } };
}

function truthOf(v: Value): Truth {
  // INVARIANT (first match wins): exactly true decides, as in the evaluator; any other value does not.
  return v === true ? "true" : v === UNKNOWN ? "unknown" : "false";
}

function leaf(expr: string, value: Value): Node {
  return { explained: { expr, value: value === UNKNOWN ? null : value }, value };
}

function compound(e: IrExpr, value: Value, operands: readonly Node[]): Node {
  return { explained: { expr: written(e), value: value === UNKNOWN ? null : value, operands: operands.map((o) => o.explained) }, value };
}

const known =
  (n: Node): Operand =>
  () =>
    n.value;

/** A node's value: its operator applied, by the evaluator's own functions (apply.ts), to its operands' values. */
function node(e: IrExpr, s: Signals): Node {
  switch (e.op) {
    case "lit":
      return leaf(written(e), e.value);
    case "signal":
      return leaf(e.name, signal(e.name)(s));
    case "present":
      return leaf(written(e), present(e)(s));
    case "and":
    case "or": {
      const args = e.args.map((a) => node(a, s));
      return compound(e, logical(e, args.map(known))(s), args);
    }
    case "cmp":
      return binary(e, s, (l, r) => comparison(e, l, r));
    case "str":
      return binary(e, s, (l, r) => stringTest(e, l, r));
    case "arith":
      return binary(e, s, (l, r) => arithmetic(e, l, r));
    case "in": {
      const value = node(e.value, s);
      return compound(e, membership(e, known(value))(s), [value]);
    }
    case "range": {
      const [value, min, max] = [node(e.value, s), node(e.min, s), node(e.max, s)];
      return compound(e, range(known(value), known(min), known(max))(s), [value, min, max]);
    }
    case "matches": {
      const value = node(e.value, s);
      return compound(e, matches(e, known(value))(s), [value]);
    }
    default: {
      if (!isUnaryOp(e.op)) throw new IrUnsupportedError(`IR operator \`${String(e.op)}\` is not supported`);
      const arg = node(e.arg, s);
      return compound(e, unary(e, known(arg))(s), [arg]);
    }
  }
}

function binary(e: IrNode<"cmp" | "str" | "arith">, s: Signals, apply: (left: Operand, right: Operand) => Operand): Node {
  const left = node(e.left, s);
  const right = node(e.right, s);
  return compound(e, apply(known(left), known(right))(s), [left, right]);
}

function scalar(v: Scalar): string {
  return typeof v === "string" ? JSON.stringify(v) : String(v);
}

/** An operand as written inside a larger expression: in parentheses unless it is a literal, a signal or a call. */
function operand(e: IrExpr): string {
  const simple = e.op === "lit" || e.op === "signal" || isFunctionName(e.op);
  return simple ? written(e) : `(${written(e)})`;
}

/** The IR expression as text: the operators' symbols, compound operands in parentheses. */
export function written(e: IrExpr): string {
  switch (e.op) {
    case "lit":
      return scalar(e.value);
    case "signal":
      return e.name;
    case "present":
      return `${IR_OPERATORS.present.symbol}(${e.name})`;
    case "and":
    case "or":
      return e.args.map(operand).join(` ${IR_OPERATORS[e.op].symbol} `);
    case "cmp":
      return `${operand(e.left)} ${IR_OPERATORS[e.cmp].symbol} ${operand(e.right)}`;
    case "str":
    case "arith":
      return `${operand(e.left)} ${IR_OPERATORS[e.fn].symbol} ${operand(e.right)}`;
    case "in":
      return `${operand(e.value)} ${IR_OPERATORS.in.symbol} [${e.set.map(scalar).join(", ")}]`;
    case "range":
      return `${operand(e.value)} ${IR_OPERATORS.range.symbol} ${operand(e.min)}..${operand(e.max)}`;
    case "matches":
      return `${operand(e.value)} ${IR_OPERATORS.matches.symbol} /${e.pattern}/`;
    default: {
      const { symbol, notation } = UNARY_OPERATORS[e.op];
      if (notation === "call") return `${symbol}(${written(e.arg)})`;
      return `${symbol}${/\w$/.test(symbol) ? " " : ""}${operand(e.arg)}`;
    }
  }
}
