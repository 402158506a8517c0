import { IrUnsupportedError } from "../errors.js";
import {
  absorbingOf,
  arithmeticOf,
  comparisonOf,
  kleene,
  matchesOf,
  membershipOf,
  presentOf,
  rangeOf,
  readSignal,
  stringTestOf,
  unaryOf,
  type Signals,
} from "./apply.js";
import { IR_VERSION, OTHERWISE_RULE_ID, type IrExpr, type PolicyIr, type Verdict } from "./types.js";
import type { Value } from "./values.js";

type Compiled = (signals: Signals) => Value;

export type Decision =
  | { readonly decided: true; readonly verdict: Verdict; readonly ruleId: string; readonly reason: string }
  | { readonly decided: false };

export interface PreparedPolicy {
  readonly ir: PolicyIr;
  /** Signals must already be validated against the bundle's schema. Deterministic, never throws. */
  evaluate(signals: Signals): Decision;
}

/**
 * Compiles the IR to closures once, so a request pays for evaluation only.
 * Throws IrUnsupportedError for an IR this runtime does not understand (newer format, unknown operator).
 */
export function preparePolicy(ir: PolicyIr): PreparedPolicy {
  if (ir.irVersion !== IR_VERSION) {
    throw new IrUnsupportedError(`IR version \`${String(ir.irVersion)}\` is not supported (expected ${IR_VERSION})`);
  }
  const rules = ir.rules.map((rule) => ({ rule, test: compile(rule.when) }));
  const otherwise = ir.otherwise;
  return {
    ir,
    evaluate(signals) {
      for (const { rule, test } of rules) {
        // INVARIANT (first match wins): a rule decides only when its condition is exactly true.
        if (test(signals) === true) {
          return { decided: true, verdict: rule.verdict, ruleId: rule.id, reason: rule.reason };
        }
      }
      if (otherwise === null) return { decided: false };
      return { decided: true, verdict: otherwise.verdict, ruleId: OTHERWISE_RULE_ID, reason: otherwise.reason };
    },
  };
}

/**
 * One condition or operand compiled as the evaluator compiles it: its value for a set of signals, `UNKNOWN` included.
 * For tools that reason about conditions (`writ diff`); throws IrUnsupportedError for an operator this runtime lacks.
 */
export function prepareExpression(expr: IrExpr): (signals: Signals) => Value {
  return compile(expr);
}

function compile(expr: IrExpr): Compiled {
  switch (expr.op) {
    case "lit": {
      const value = expr.value;
      return () => value;
    }
    case "signal": {
      const name = expr.name;
      return (s) => readSignal(s, name);
    }
    case "present":
      return presentOf(expr);
    case "and":
    case "or": {
      const absorbing = absorbingOf(expr);
      const args = expr.args.map(compile);
      return (s) => kleene(absorbing, args, s);
    }
    case "cmp":
      return binary(comparisonOf(expr), expr);
    case "str":
      return binary(stringTestOf(expr), expr);
    case "arith":
      return binary(arithmeticOf(expr), expr);
    case "in": {
      const test = membershipOf(expr);
      const value = compile(expr.value);
      return (s) => test(value(s));
    }
    case "range": {
      const test = rangeOf();
      const value = compile(expr.value);
      const min = compile(expr.min);
      const max = compile(expr.max);
      return (s) => test(value(s), min(s), max(s));
    }
    case "matches": {
      const test = matchesOf(expr);
      const value = compile(expr.value);
      return (s) => test(value(s));
    }
    default: {
      // Every other node is a unary operator's (`{op, arg}`); unaryOf refuses an op the table does not declare.
      const apply = unaryOf(expr);
      const arg = compile(expr.arg);
      return (s) => apply(arg(s));
    }
  }
}

function binary(apply: (a: Value, b: Value) => Value, expr: { readonly left: IrExpr; readonly right: IrExpr }): Compiled {
  const left = compile(expr.left);
  const right = compile(expr.right);
  return (s) => apply(left(s), right(s));
}
