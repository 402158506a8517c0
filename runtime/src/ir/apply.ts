import { IrUnsupportedError } from "../errors.js";
import { compileLinearRegExp } from "../regex/linear-regexp.js";
import {
  ARITHMETIC_OPERATORS,
  COMPARISON_OPERATORS,
  LOGICAL_OPERATORS,
  SPECIAL_OPERATORS,
  STRING_OPERATORS,
  UNARY_OPERATORS,
  type LogicalOp,
  type UnaryOp,
} from "./operators.js";
import type { IrNode } from "./types.js";
import { COMPARISON_DOMAINS, isScalar, UNKNOWN, type Value } from "./values.js";

/**
 * Each IR node's operator applied to its operands, built once per node from the operator table: given the functions
 * that compute the operands, the function that computes the node. The evaluator (evaluate.ts) passes the compiled
 * operands, the explanation (explain.ts) the operand values it has already computed, so both decide alike by
 * construction. Each throws IrUnsupportedError for an operator or comparison kind this runtime does not declare (an
 * IR from a newer compiler), so such an IR is refused when it is prepared, never when a request arrives.
 */
export type Signals = Readonly<Record<string, unknown>>;
export type Operand = (signals: Signals) => Value;

function declared<T extends object>(table: T, name: string, what: string): T[keyof T] {
  if (!Object.prototype.hasOwnProperty.call(table, name)) throw new IrUnsupportedError(`${what} \`${name}\` is not supported`);
  return table[name as keyof T];
}

/** A signal's value: unknown when it is absent (or, in IR not checked against its schema, not a scalar). */
export function signal(name: string): Operand {
  return (s) => {
    const v = Object.prototype.hasOwnProperty.call(s, name) ? s[name] : undefined;
    return isScalar(v) ? v : UNKNOWN;
  };
}

export function present(node: IrNode<"present">): Operand {
  const { name } = node;
  const { test } = SPECIAL_OPERATORS.present;
  return (s) => test(s, name);
}

/** Unknown operand, unknown result; otherwise the operator's own evaluation. */
export function unary(node: IrNode<UnaryOp>, arg: Operand): Operand {
  const { evaluate } = declared(UNARY_OPERATORS, node.op, "IR operator");
  return (s) => {
    const v = arg(s);
    return v === UNKNOWN ? UNKNOWN : evaluate(v);
  };
}

/** Kleene's `and` (absorbing `false`) or `or` (absorbing `true`): the absorbing value decides, else unknown wins. */
export function logical(node: IrNode<LogicalOp>, args: readonly Operand[]): Operand {
  const { absorbing } = declared(LOGICAL_OPERATORS, node.op, "IR operator");
  return (s) => {
    let result: Value = !absorbing;
    for (const arg of args) {
      const v = arg(s);
      if (v === absorbing) return absorbing;
      if (v === UNKNOWN) result = UNKNOWN;
    }
    return result;
  };
}

/** Both operands mapped into the comparison domain first (a timestamp is its instant); unknown if either is not in it. */
export function comparison(node: IrNode<"cmp">, left: Operand, right: Operand): Operand {
  const domain = declared(COMPARISON_DOMAINS, node.kind, "comparison kind");
  const { test } = declared(COMPARISON_OPERATORS, node.cmp, "IR operator");
  return (s) => {
    const a = domain(left(s));
    const b = domain(right(s));
    return a === UNKNOWN || b === UNKNOWN ? UNKNOWN : test(a, b);
  };
}

export function stringTest(node: IrNode<"str">, left: Operand, right: Operand): Operand {
  const { test } = declared(STRING_OPERATORS, node.fn, "IR operator");
  return (s) => {
    const a = left(s);
    const b = right(s);
    return typeof a === "string" && typeof b === "string" ? test(a, b) : UNKNOWN;
  };
}

/** Unknown unless both operands are numbers, and when the result is not finite (overflow, division by zero). */
export function arithmetic(node: IrNode<"arith">, left: Operand, right: Operand): Operand {
  const { evaluate } = declared(ARITHMETIC_OPERATORS, node.fn, "IR operator");
  return (s) => {
    const a = left(s);
    const b = right(s);
    if (typeof a !== "number" || typeof b !== "number") return UNKNOWN;
    const r = evaluate(a, b);
    return Number.isFinite(r) ? r : UNKNOWN;
  };
}

export function membership(node: IrNode<"in">, value: Operand): Operand {
  const domain = declared(COMPARISON_DOMAINS, node.kind, "comparison kind");
  const set = new Set<Value>(node.set.map(domain));
  const { test } = SPECIAL_OPERATORS.in;
  return (s) => {
    const key = domain(value(s));
    return key === UNKNOWN ? UNKNOWN : test(key, set);
  };
}

export function range(value: Operand, min: Operand, max: Operand): Operand {
  const { test } = SPECIAL_OPERATORS.range;
  return (s) => {
    const v = value(s);
    const lo = min(s);
    const hi = max(s);
    return typeof v === "number" && typeof lo === "number" && typeof hi === "number" ? test(v, lo, hi) : UNKNOWN;
  };
}

export function matches(node: IrNode<"matches">, value: Operand): Operand {
  // The engine of the signals schema's `pattern` too (validate.ts): `u`-flag dialect, linear time. An IR with a pattern
  // it refuses is refused here, when the IR is prepared.
  const pattern = compileLinearRegExp(node.pattern);
  const { test } = SPECIAL_OPERATORS.matches;
  return (s) => {
    const v = value(s);
    return typeof v === "string" ? test(v, pattern) : UNKNOWN;
  };
}
