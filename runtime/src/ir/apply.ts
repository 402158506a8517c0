import { IrUnsupportedError } from "../errors.js";
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
 * Each IR node's operator as a function of its operands' values, built once per node from the operator table.
 * The evaluator (evaluate.ts) and the explanation (explain.ts) both apply these, so they decide alike by
 * construction. Each throws IrUnsupportedError for an operator or comparison kind this runtime does not declare
 * (an IR from a newer compiler), so such an IR is refused when it is prepared, never when a request arrives.
 */
export type Signals = Readonly<Record<string, unknown>>;
type Unary = (v: Value) => Value;
type Binary = (a: Value, b: Value) => Value;

function declared<T extends object>(table: T, name: string, what: string): T[keyof T] {
  if (!Object.prototype.hasOwnProperty.call(table, name)) throw new IrUnsupportedError(`${what} \`${name}\` is not supported`);
  return table[name as keyof T];
}

/** A signal's value: unknown when it is absent (or, in IR not checked against its schema, not a scalar). */
export function readSignal(signals: Signals, name: string): Value {
  const v = Object.prototype.hasOwnProperty.call(signals, name) ? signals[name] : undefined;
  return isScalar(v) ? v : UNKNOWN;
}

export function presentOf(node: IrNode<"present">): (signals: Signals) => boolean {
  const { name } = node;
  const { test } = SPECIAL_OPERATORS.present;
  return (signals) => test(signals, name);
}

export function unaryOf(node: IrNode<UnaryOp>): Unary {
  const { evaluate } = declared(UNARY_OPERATORS, node.op, "IR operator");
  return (v) => (v === UNKNOWN ? UNKNOWN : evaluate(v));
}

/** The absorbing value of `and` or `or`, for `kleene`. */
export function absorbingOf(node: IrNode<LogicalOp>): boolean {
  return declared(LOGICAL_OPERATORS, node.op, "IR operator").absorbing;
}

/** Kleene's `and` (absorbing `false`) or `or` (absorbing `true`): the absorbing value decides, else unknown wins. */
export function kleene(absorbing: boolean, operands: readonly ((signals: Signals) => Value)[], signals: Signals): Value {
  let result: Value = !absorbing;
  for (const operand of operands) {
    const v = operand(signals);
    if (v === absorbing) return absorbing;
    if (v === UNKNOWN) result = UNKNOWN;
  }
  return result;
}

export function comparisonOf(node: IrNode<"cmp">): Binary {
  const domain = declared(COMPARISON_DOMAINS, node.kind, "comparison kind");
  const { test } = declared(COMPARISON_OPERATORS, node.cmp, "IR operator");
  return (a, b) => {
    const x = domain(a);
    const y = domain(b);
    return x === UNKNOWN || y === UNKNOWN ? UNKNOWN : test(x, y);
  };
}

export function stringTestOf(node: IrNode<"str">): Binary {
  const { test } = declared(STRING_OPERATORS, node.fn, "IR operator");
  return (a, b) => (typeof a === "string" && typeof b === "string" ? test(a, b) : UNKNOWN);
}

export function arithmeticOf(node: IrNode<"arith">): Binary {
  const { evaluate } = declared(ARITHMETIC_OPERATORS, node.fn, "IR operator");
  return (a, b) => {
    if (typeof a !== "number" || typeof b !== "number") return UNKNOWN;
    const r = evaluate(a, b);
    return Number.isFinite(r) ? r : UNKNOWN;
  };
}

export function membershipOf(node: IrNode<"in">): Unary {
  const domain = declared(COMPARISON_DOMAINS, node.kind, "comparison kind");
  const set = new Set<Value>(node.set.map(domain));
  const { test } = SPECIAL_OPERATORS.in;
  return (v) => {
    const key = domain(v);
    return key === UNKNOWN ? UNKNOWN : test(key, set);
  };
}

export function rangeOf(): (v: Value, min: Value, max: Value) => Value {
  const { test } = SPECIAL_OPERATORS.range;
  return (v, min, max) => (typeof v === "number" && typeof min === "number" && typeof max === "number" ? test(v, min, max) : UNKNOWN);
}

export function matchesOf(node: IrNode<"matches">): Unary {
  // Same dialect as the signals schema's `pattern` (ajv compiles patterns with the `u` flag).
  const pattern = new RegExp(node.pattern, "u");
  const { test } = SPECIAL_OPERATORS.matches;
  return (v) => (typeof v === "string" ? test(v, pattern) : UNKNOWN);
}
