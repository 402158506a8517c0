/**
 * The operator table, runtime half: every operator and built-in function of the IR, declared once with its name, how
 * it is written (`symbol`, which the compiler also lexes and the explanation prints) and how it evaluates. The
 * evaluator (evaluate.ts), the explanation (explain.ts) and the compiler's constant folding all read these
 * declarations, so they cannot disagree. The compiler's half (compiler/src/syntax/operators.ts) is a record keyed by
 * the same names, so the compiler does not build while an operator lacks a part.
 *
 * Operators come in families (unary, logical, comparison, string, arithmetic, calendar); the family fixes how the IR
 * encodes a use and how unknown operands are handled, so a new operator of an existing family needs nothing but its
 * declaration here. The families and what to touch: docs/language.md, "Adding an operator".
 */
import { MAX_MAGNITUDE } from "./exact.js";
import type { FaultCode } from "./fault-codes.js";
import type { LinearRegExp } from "../regex/linear-regexp.js";
import { spanHolds, type IpSpan } from "../signals/ip.js";
import { codePointLength, UNKNOWN, type Known, type Value } from "./values.js";
import { hourOfDay, isoWeekday, minuteOfDay } from "./local-time.js";

export interface UnaryOperator {
  readonly symbol: string;
  /** `prefix`: written before its operand (`not a`, `-a`); `call`: a built-in function (`len(a)`). */
  readonly notation: "prefix" | "call";
  /** Applied to a known operand (a bigint: an exact decimal); unknown when the operand is not of the operator's type. */
  readonly evaluate: (v: Known) => Value;
}

export interface LogicalOperator {
  readonly symbol: string;
  /** The value that decides alone: `false` for `and`, `true` for `or`. */
  readonly absorbing: boolean;
}

export type CompareOp = "eq" | "ne" | "lt" | "le" | "gt" | "ge";

export interface ComparisonOperator {
  readonly symbol: string;
  /** Applied to two known operands of one comparison domain (two bigints: exact decimals at the same places). */
  readonly test: (a: Known, b: Known) => boolean;
  /** The same test with its operands swapped: `a < b` is `b > a`. */
  readonly converse: CompareOp;
  /** The test that holds exactly when this one is false (and is unknown when it is): `not (a < b)` is `a >= b`. */
  readonly negation: CompareOp;
}

export interface StringOperator {
  readonly symbol: string;
  readonly test: (a: string, b: string) => boolean;
}

export interface ArithmeticOperator {
  readonly symbol: string;
  /** `infix`: written between its operands (`a + b`); `call`: a built-in function of two arguments (`max(a, b)`). */
  readonly notation: "infix" | "call";
  /** On doubles (numbers and integers). */
  readonly evaluate: (a: number, b: number) => number;
  /** The fault a double result `r` of `a` and `b` is (faults.ts), or null when `r` is exact enough to decide on. */
  readonly faultOf: (a: number, b: number, r: number) => FaultCode | null;
  /** On exact decimals; absent where decimals have no such operator (`/`: the compiler refuses it, E509). */
  readonly exact?: ExactOperation;
  /**
   * On instants and durations, both in milliseconds (time.ts): `timestamp ± duration`, `timestamp - timestamp`,
   * `duration ± duration`; absent where time has no such operator.
   */
  readonly time?: (a: number, b: number) => number;
}

/** A field of the local time in a zone, called with a timestamp and a zone name: `weekday(ts, "Europe/London")`. */
export interface CalendarOperator {
  readonly symbol: string;
  /** The field of a local time (local-time.ts: milliseconds since 1970 as if the wall clock were UTC). */
  readonly field: (local: number) => number;
  /** The least and greatest value the field takes (`writ diff` reads a field as a bounded integer). */
  readonly least: number;
  readonly greatest: number;
}

/** An operator on exact decimals: units (bigints) in, units out (exact.ts). */
export interface ExactOperation {
  /** The places of the result, from the places of the operands. */
  readonly places: (left: number, right: number) => number;
  /** Whether both operands are first brought to the result's places (`+`, `-`), or taken at their own (`*`). */
  readonly aligned: boolean;
  /** The fault computing `a` and `b` is before any result exists (`%` by zero), or null. */
  readonly faultOf?: (a: bigint, b: bigint) => FaultCode | null;
  readonly evaluate: (a: bigint, b: bigint) => bigint;
}

export const UNARY_OPERATORS = {
  not: { symbol: "not", notation: "prefix", evaluate: (v) => v !== true },
  neg: { symbol: "-", notation: "prefix", evaluate: (v) => (typeof v === "number" ? -v : typeof v === "bigint" ? -v : UNKNOWN) },
  len: { symbol: "len", notation: "call", evaluate: (v) => (typeof v === "string" ? codePointLength(v) : UNKNOWN) },
  /** ASCII case folding: `A` to `Z` become `a` to `z`, nothing else changes (docs/language.md says why). */
  lower: { symbol: "lower", notation: "call", evaluate: (v) => (typeof v === "string" ? asciiLower(v) : UNKNOWN) },
  /** The magnitude; exact on decimals, and never out of range, since its operand is not. */
  abs: {
    symbol: "abs",
    notation: "call",
    evaluate: (v) => (typeof v === "number" ? Math.abs(v) : typeof v === "bigint" ? (v < 0n ? -v : v) : UNKNOWN),
  },
} as const satisfies Record<string, UnaryOperator>;

const ASCII_UPPER = /[A-Z]+/g;
function asciiLower(s: string): string {
  return s.replace(ASCII_UPPER, (run) => run.toLowerCase());
}

const inRange = (r: number): boolean => r <= MAX_MAGNITUDE && r >= -MAX_MAGNITUDE;
/** `+` and `-` of doubles give 0 only when the exact result is 0; `*` and `/` may round a non-zero result to 0. */
const rangeFault = (r: number): FaultCode | null => (inRange(r) ? null : "EVAL-002");

export const LOGICAL_OPERATORS = {
  and: { symbol: "and", absorbing: false },
  or: { symbol: "or", absorbing: true },
} as const satisfies Record<string, LogicalOperator>;

export const COMPARISON_OPERATORS = {
  eq: { symbol: "==", test: (a, b) => a === b, converse: "eq", negation: "ne" },
  ne: { symbol: "!=", test: (a, b) => a !== b, converse: "ne", negation: "eq" },
  lt: { symbol: "<", test: (a, b) => a < b, converse: "gt", negation: "ge" },
  le: { symbol: "<=", test: (a, b) => a <= b, converse: "ge", negation: "gt" },
  gt: { symbol: ">", test: (a, b) => a > b, converse: "lt", negation: "le" },
  ge: { symbol: ">=", test: (a, b) => a >= b, converse: "le", negation: "lt" },
} as const satisfies Record<CompareOp, ComparisonOperator>;

export const STRING_OPERATORS = {
  starts_with: { symbol: "starts_with", test: (a, b) => a.startsWith(b) },
  ends_with: { symbol: "ends_with", test: (a, b) => a.endsWith(b) },
  contains: { symbol: "contains", test: (a, b) => a.includes(b) },
} as const satisfies Record<string, StringOperator>;

export const ARITHMETIC_OPERATORS = {
  add: {
    symbol: "+",
    notation: "infix",
    evaluate: (a, b) => a + b,
    faultOf: (_a, _b, r) => rangeFault(r),
    exact: { places: Math.max, aligned: true, evaluate: (a, b) => a + b },
    time: (a, b) => a + b,
  },
  sub: {
    symbol: "-",
    notation: "infix",
    evaluate: (a, b) => a - b,
    faultOf: (_a, _b, r) => rangeFault(r),
    exact: { places: Math.max, aligned: true, evaluate: (a, b) => a - b },
    time: (a, b) => a - b,
  },
  mul: {
    symbol: "*",
    notation: "infix",
    evaluate: (a, b) => a * b,
    faultOf: (a, b, r) => (r === 0 && a !== 0 && b !== 0 ? "EVAL-003" : rangeFault(r)),
    exact: { places: (l, r) => l + r, aligned: false, evaluate: (a, b) => a * b },
  },
  div: {
    symbol: "/",
    notation: "infix",
    evaluate: (a, b) => a / b,
    faultOf: (a, b, r) => (b === 0 ? "EVAL-001" : r === 0 && a !== 0 ? "EVAL-003" : rangeFault(r)),
  },
  /**
   * The remainder of truncated division, as JavaScript, CEL, C, Go and Rust compute it: its sign is the dividend's
   * (`-7 % 3` is -1). Exact on doubles (IEEE-754 remainders never round) and on decimals; by zero, EVAL-001.
   */
  mod: {
    symbol: "%",
    notation: "infix",
    evaluate: (a, b) => a % b,
    faultOf: (_a, b, r) => (b === 0 ? "EVAL-001" : rangeFault(r)),
    exact: { places: Math.max, aligned: true, faultOf: (_a, b) => (b === 0n ? "EVAL-001" : null), evaluate: (a, b) => a % b },
  },
  /** The lesser of two numbers; exact on decimals, and never out of range, since its operands are not. */
  min: {
    symbol: "min",
    notation: "call",
    evaluate: (a, b) => Math.min(a, b),
    faultOf: (_a, _b, r) => rangeFault(r),
    exact: { places: Math.max, aligned: true, evaluate: (a, b) => (b < a ? b : a) },
  },
  max: {
    symbol: "max",
    notation: "call",
    evaluate: (a, b) => Math.max(a, b),
    faultOf: (_a, _b, r) => rangeFault(r),
    exact: { places: Math.max, aligned: true, evaluate: (a, b) => (b > a ? b : a) },
  },
} as const satisfies Record<string, ArithmeticOperator>;

/** The calendar fields of a timestamp in a named zone (zones.ts), each an integer. */
export const CALENDAR_OPERATORS = {
  /** ISO 8601: Monday 1 to Sunday 7. */
  weekday: { symbol: "weekday", field: isoWeekday, least: 1, greatest: 7 },
  local_hour: { symbol: "local_hour", field: hourOfDay, least: 0, greatest: 23 },
  local_minute_of_day: { symbol: "local_minute_of_day", field: minuteOfDay, least: 0, greatest: 1439 },
} as const satisfies Record<string, CalendarOperator>;

/** The operators with an IR node of their own. */
export const SPECIAL_OPERATORS = {
  /** `value in [set]`: the set holds the value, both mapped into the comparison domain. */
  in: { symbol: "in", test: (v: Known, set: ReadonlySet<Value>): boolean => set.has(v) },
  /** `value in min..max`, both ends inclusive; unknown unless all three are numbers (or all exact decimals). */
  range: { symbol: "in", test: <N extends number | bigint>(v: N, min: N, max: N): boolean => v >= min && v <= max },
  /** `address in_cidr [ranges]`: one of the ranges' spans holds the address (ip.ts); unknown unless it is an address. */
  in_cidr: { symbol: "in_cidr", test: (address: bigint, spans: readonly IpSpan[]): boolean => spans.some((s) => spanHolds(s, address)) },
  /** `value matches /pattern/`: found anywhere in the string, with the `u` flag, as the schema's `pattern` is. */
  matches: { symbol: "matches", test: (v: string, pattern: LinearRegExp): boolean => pattern.test(v) },
  /** `present(name)`: whether the signal was sent; never unknown. */
  present: {
    symbol: "present",
    test: (signals: Readonly<Record<string, unknown>>, name: string): boolean =>
      Object.prototype.hasOwnProperty.call(signals, name) && signals[name] !== undefined,
  },
} as const;

export type UnaryOp = keyof typeof UNARY_OPERATORS;
export type LogicalOp = keyof typeof LOGICAL_OPERATORS;
export type StringOp = keyof typeof STRING_OPERATORS;
export type ArithOp = keyof typeof ARITHMETIC_OPERATORS;
export type SpecialOp = keyof typeof SPECIAL_OPERATORS;
export type CalendarOp = keyof typeof CALENDAR_OPERATORS;

/** Every operator and built-in function, by name. The families' names are disjoint (a test checks it). */
export const IR_OPERATORS = {
  ...UNARY_OPERATORS,
  ...LOGICAL_OPERATORS,
  ...COMPARISON_OPERATORS,
  ...STRING_OPERATORS,
  ...ARITHMETIC_OPERATORS,
  ...CALENDAR_OPERATORS,
  ...SPECIAL_OPERATORS,
};
export type IrOperatorName = keyof typeof IR_OPERATORS;

/** The arithmetic operators called as functions of two arguments (`max(a, b)`). */
export type CalledArithOp = { [K in ArithOp]: (typeof ARITHMETIC_OPERATORS)[K]["notation"] extends "call" ? K : never }[ArithOp];
/** The operators written between two operands, each encoded with its family's IR node. */
export type InfixOp = CompareOp | StringOp | Exclude<ArithOp, CalledArithOp>;
/** The unary operators written before their operand, and the built-in functions (called by name). */
export type PrefixOp = { [K in UnaryOp]: (typeof UNARY_OPERATORS)[K]["notation"] extends "prefix" ? K : never }[UnaryOp];
export type FunctionName = Exclude<UnaryOp, PrefixOp> | CalledArithOp | CalendarOp | "present";

const has = (table: object, name: string): boolean => Object.prototype.hasOwnProperty.call(table, name);
export const isUnaryOp = (name: string): name is UnaryOp => has(UNARY_OPERATORS, name);
export const isComparison = (name: string): name is CompareOp => has(COMPARISON_OPERATORS, name);
export const isStringOp = (name: string): name is StringOp => has(STRING_OPERATORS, name);
export const isArithOp = (name: string): name is ArithOp => has(ARITHMETIC_OPERATORS, name);
export const isCalendarOp = (name: string): name is CalendarOp => has(CALENDAR_OPERATORS, name);
export const isCalledArithOp = (name: string): name is CalledArithOp => isArithOp(name) && ARITHMETIC_OPERATORS[name].notation === "call";
export const isInfixOp = (name: string): name is InfixOp =>
  isComparison(name) || isStringOp(name) || (isArithOp(name) && !isCalledArithOp(name));
export const isPrefixOp = (name: string): name is PrefixOp => isUnaryOp(name) && UNARY_OPERATORS[name].notation === "prefix";
export const isFunctionName = (name: string): name is FunctionName =>
  name === "present" || (isUnaryOp(name) && UNARY_OPERATORS[name].notation === "call") || isCalledArithOp(name) || isCalendarOp(name);
