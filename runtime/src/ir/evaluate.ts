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
import { isUnaryOp } from "./operators.js";
import { IR_VERSION, OTHERWISE_RULE_ID, type IrExpr, type PolicyIr, type Verdict } from "./types.js";

export type Decision =
  { readonly decided: true; readonly verdict: Verdict; readonly ruleId: string; readonly reason: string } | { readonly decided: false };

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
export function prepareExpression(expr: IrExpr): Operand {
  return compile(expr);
}

function compile(expr: IrExpr): Operand {
  switch (expr.op) {
    case "lit": {
      const value = expr.value;
      return () => value;
    }
    case "signal":
      return signal(expr.name);
    case "present":
      return present(expr);
    case "and":
    case "or":
      return logical(expr, expr.args.map(compile));
    case "cmp":
      return comparison(expr, compile(expr.left), compile(expr.right));
    case "str":
      return stringTest(expr, compile(expr.left), compile(expr.right));
    case "arith":
      return arithmetic(expr, compile(expr.left), compile(expr.right));
    case "in":
      return membership(expr, compile(expr.value));
    case "range":
      return range(compile(expr.value), compile(expr.min), compile(expr.max));
    case "matches":
      return matches(expr, compile(expr.value));
    default:
      // Every other node is a unary operator's (`{op, arg}`): an op the table does not declare is refused first.
      if (!isUnaryOp(expr.op)) throw new IrUnsupportedError(`IR operator \`${String(expr.op)}\` is not supported`);
      return unary(expr, compile(expr.arg));
  }
}
