/**
 * The operator table, compiler half: for every operator and built-in function of the runtime's table
 * (runtime/src/ir/operators.ts, which gives each its name, symbol, IR encoding and evaluation), where it sits in
 * the grammar, what types it takes and gives, how diagnostics name it, and its documentation. The record is keyed
 * by the runtime's names and typed by the runtime's families, so an operator declared there and not here (or here
 * with the wrong shape) does not compile. The grammar, build-ast, resolve, type-check, lower, the analysis and the
 * formatter read it; none of them lists operators. docs/language.md ("Adding an operator") lists what to touch.
 */
import {
  IR_OPERATORS,
  isFunctionName,
  isInfixOp,
  isPrefixOp,
  type ArithOp,
  type CompareOp,
  type FunctionName,
  type InfixOp,
  type IrOperatorName,
  type LogicalOp,
  type PrefixOp,
  type StringOp,
} from "@writ/runtime";

/** Binding strength, loosest first (docs/language.md "Precedence"). `and` and `or` each have a level of their own. */
export const PRECEDENCE = { or: 1, and: 2, not: 3, predicate: 4, additive: 5, multiplicative: 6, unary: 7, primary: 8 } as const;
export type Level = keyof typeof PRECEDENCE;
export type PrefixLevel = "not" | "unary";
export type InfixLevel = "predicate" | "additive" | "multiplicative";

/**
 * Whether a level's operators chain to the left (`a - b - c` is `(a - b) - c`). The predicate level takes at most
 * one operator per operand: `a < b < c` is a syntax error.
 */
export const LEFT_ASSOCIATIVE: Readonly<Record<InfixLevel, boolean>> = { predicate: false, additive: true, multiplicative: true };

export type OperandType = "boolean" | "number" | "string";

/** The types of an operator whose operands all have one type (E503 for an operand of another). */
export interface Signature {
  readonly operands: OperandType;
  /**
   * `numeric`: integer when every operand is an integer, decimal when one is a decimal (type-check.ts), otherwise
   * number; `operand`: the operand's own type; `string`: a string, even from an enum.
   */
  readonly result: "boolean" | "integer" | "number" | "numeric" | "operand" | "string";
}

/** Equality takes two values of one type; ordering two numbers or two timestamps (type-check.ts `unify`). */
export type Comparison = "equality" | "ordering";

/** One row of the operator tables in docs/language.md; a test checks the page lists every row. */
export interface OperatorDoc {
  /** How it is written, with `a`, `b` standing for operands. */
  readonly written: string;
  readonly operands: string;
  readonly result: string;
  /** A condition using the operator, in backticks; a test compiles it. */
  readonly example: string;
}

interface Described {
  readonly doc: OperatorDoc;
  /** How diagnostics name the operator; its symbol in backticks when absent. */
  readonly label?: string;
}

export interface ChainSyntax extends Described {
  readonly signature: Signature;
}
export interface PrefixSyntax extends Described {
  readonly level: PrefixLevel;
  readonly signature: Signature;
}
export interface InfixSyntax<Typing> extends Described {
  readonly level: InfixLevel;
  readonly typing: Typing;
}
export interface FunctionSyntax extends Described {
  readonly arity: number;
  /**
   * `signal name`: the argument must be the name of a signal (E506), as for `present`; `zoned`: a timestamp and a
   * zone name, a string literal or constant that names an IANA zone (E513), giving an integer (the calendar fields).
   */
  readonly typing: Signature | "signal name" | "zoned";
}
/** `in`, `range` and `matches`: predicates with a grammar of their own (a list or range, a regular expression). */
export interface PredicateSyntax<Typing> extends Described {
  readonly signature: Typing;
}

/** What each family of the runtime's table needs here; a mismatch between the halves is a type error. */
type SyntaxOf<K extends IrOperatorName> = K extends PrefixOp
  ? PrefixSyntax
  : K extends FunctionName
    ? FunctionSyntax
    : K extends LogicalOp
      ? ChainSyntax
      : K extends CompareOp
        ? InfixSyntax<Comparison>
        : K extends StringOp | ArithOp
          ? InfixSyntax<Signature>
          : K extends "in"
            ? PredicateSyntax<"membership">
            : K extends "in_cidr"
              ? PredicateSyntax<"cidr membership">
              : PredicateSyntax<Signature>;

const BOOLEANS: Signature = { operands: "boolean", result: "boolean" };
const STRING_TEST: Signature = { operands: "string", result: "boolean" };
const NUMERIC: Signature = { operands: "number", result: "numeric" };
const EQUALITY_OPERANDS = "two values of one type (E502), see below";
const ORDERING_OPERANDS = "two numbers, two durations, two timestamps or two versions (E502 if mixed; E503 for strings, enums, booleans)";

/**
 * Every operator, keyed by its runtime name. The order is the order of the grammar's alternatives at each level
 * and of the rows in docs/language.md.
 */
export const OPERATORS: { readonly [K in IrOperatorName]: SyntaxOf<K> } = {
  or: {
    signature: BOOLEANS,
    doc: { written: "`a or b`", operands: "two booleans (E503)", result: "boolean", example: "`not kyc_verified or risk_score > 80`" },
  },
  and: {
    signature: BOOLEANS,
    doc: { written: "`a and b`", operands: "two booleans (E503)", result: "boolean", example: "`kyc_verified and risk_score < 60`" },
  },
  not: {
    level: "not",
    signature: BOOLEANS,
    doc: { written: "`not a`", operands: "a boolean (E503)", result: "boolean", example: "`not encrypted`" },
  },
  eq: {
    level: "predicate",
    typing: "equality",
    doc: { written: "`a == b`", operands: EQUALITY_OPERANDS, result: "boolean", example: '`tier == "critical"`' },
  },
  ne: {
    level: "predicate",
    typing: "equality",
    doc: { written: "`a != b`", operands: EQUALITY_OPERANDS, result: "boolean", example: '`region != "eu"`' },
  },
  lt: {
    level: "predicate",
    typing: "ordering",
    doc: { written: "`a < b`", operands: ORDERING_OPERANDS, result: "boolean", example: "`account_age_days < 30`" },
  },
  le: {
    level: "predicate",
    typing: "ordering",
    doc: { written: "`a <= b`", operands: ORDERING_OPERANDS, result: "boolean", example: "`risk_score <= 20`" },
  },
  gt: {
    level: "predicate",
    typing: "ordering",
    doc: { written: "`a > b`", operands: ORDERING_OPERANDS, result: "boolean", example: "`amount > DAILY_LIMIT`" },
  },
  ge: {
    level: "predicate",
    typing: "ordering",
    doc: { written: "`a >= b`", operands: ORDERING_OPERANDS, result: "boolean", example: "`requested_at >= FREEZE_START`" },
  },
  in: {
    signature: "membership",
    doc: {
      written: "`a in [x, y]`, `a in L`, `a not in ...`",
      operands: "list items of `a`'s type, same rules as `==`; `L` a list constant (E508 otherwise)",
      result: "boolean",
      example: "`currency not in AUTO_CURRENCIES`",
    },
  },
  range: {
    signature: { operands: "number", result: "boolean" },
    label: "a range `a..b`",
    doc: {
      written: "`a in lo..hi`, `a not in lo..hi`",
      operands: "three numbers, or three durations (E503); both ends inclusive",
      result: "boolean",
      example: "`risk_score in 60..HIGH`",
    },
  },
  starts_with: {
    level: "predicate",
    typing: STRING_TEST,
    doc: { written: "`a starts_with b`", operands: "two strings (E503)", result: "boolean", example: '`branch starts_with "release/"`' },
  },
  ends_with: {
    level: "predicate",
    typing: STRING_TEST,
    doc: { written: "`a ends_with b`", operands: "two strings (E503)", result: "boolean", example: '`email ends_with "@writ.example"`' },
  },
  contains: {
    level: "predicate",
    typing: STRING_TEST,
    doc: { written: "`a contains b`", operands: "two strings (E503)", result: "boolean", example: '`purpose contains "audit"`' },
  },
  in_cidr: {
    signature: "cidr membership",
    doc: {
      written: "`a in_cidr [r, s]`, `a in_cidr L`, `a not in_cidr ...`",
      operands: "an `ip` (E503) and CIDR ranges, a list literal or list constant of strings (E508, E512)",
      result: "boolean",
      example: '`client_ip not in_cidr ["10.0.0.0/8", "2001:db8::/32"]`',
    },
  },
  matches: {
    signature: STRING_TEST,
    doc: { written: "`a matches /RE/`", operands: "a string (E503)", result: "boolean", example: "`destination matches /^s3:\\/\\//`" },
  },
  add: {
    level: "additive",
    typing: NUMERIC,
    doc: {
      written: "`a + b`",
      operands: "two numbers (E503); a decimal with a number is E510; a timestamp and a duration, or two durations",
      result: "decimal if one is, integer if both are, else number; a timestamp beside a duration, else a duration",
      example: "`daily_total + amount > DAILY_LIMIT`",
    },
  },
  sub: {
    level: "additive",
    typing: NUMERIC,
    doc: {
      written: "`a - b`",
      operands: "two numbers (E503); a decimal with a number is E510; a timestamp and a duration, two timestamps, two durations",
      result: "decimal if one is, integer if both are, else number; `timestamp - duration` a timestamp, else a duration",
      example: "`balance - amount < 0`",
    },
  },
  mul: {
    level: "multiplicative",
    typing: NUMERIC,
    doc: {
      written: "`a * b`",
      operands: "two numbers (E503); a decimal with a number is E510",
      result: "decimal if one is, integer if both are, else number",
      example: "`amount * 2 > balance`",
    },
  },
  div: {
    level: "multiplicative",
    typing: { operands: "number", result: "number" },
    doc: {
      written: "`a / b`",
      operands: "two numbers or integers (E503); a decimal is E509",
      result: "number",
      example: "`used / quota > 0.9`",
    },
  },
  mod: {
    level: "multiplicative",
    typing: NUMERIC,
    doc: {
      written: "`a % b`",
      operands: "two numbers (E503); a decimal with a number is E510; by zero, a fault (EVAL-001)",
      result: "decimal if one is, integer if both are, else number; the sign of `a` (truncated division)",
      example: "`amount % 1000 == 0`",
    },
  },
  neg: {
    level: "unary",
    signature: { operands: "number", result: "operand" },
    label: "unary `-`",
    doc: { written: "`-a`", operands: "a number (E503)", result: "type of `a`", example: "`balance < -MAX_DROP`" },
  },
  len: {
    arity: 1,
    typing: { operands: "string", result: "integer" },
    doc: {
      written: "`len(s)`",
      operands: "a string expression (E503)",
      result: "integer: the number of Unicode code points",
      example: "`len(purpose) < 20`",
    },
  },
  lower: {
    arity: 1,
    typing: { operands: "string", result: "string" },
    doc: {
      written: "`lower(s)`",
      operands: "a string expression (E503)",
      result: "string: `s` with the ASCII letters A to Z made lowercase",
      example: '`lower(email) ends_with "@corp.example"`',
    },
  },
  abs: {
    arity: 1,
    typing: { operands: "number", result: "operand" },
    doc: {
      written: "`abs(n)`",
      operands: "a number expression (E503)",
      result: "type of `n`: its magnitude",
      example: "`abs(balance_change) > 500`",
    },
  },
  min: {
    arity: 2,
    typing: NUMERIC,
    doc: {
      written: "`min(a, b)`",
      operands: "two number expressions (E503); a decimal with a number is E510",
      result: "the lesser; decimal if one is, integer if both are, else number",
      example: "`min(amount, balance) > 100`",
    },
  },
  max: {
    arity: 2,
    typing: NUMERIC,
    doc: {
      written: "`max(a, b)`",
      operands: "two number expressions (E503); a decimal with a number is E510",
      result: "the greater; decimal if one is, integer if both are, else number",
      example: "`max(amount, daily_total) > LIMIT`",
    },
  },
  weekday: {
    arity: 2,
    typing: "zoned",
    doc: {
      written: "`weekday(t, zone)`",
      operands: "a timestamp expression (E503) and an IANA zone name, a string literal or constant (E513)",
      result: "integer: the ISO weekday of `t` in the zone, Monday 1 to Sunday 7; outside 1970 to 2100, a fault (EVAL-004)",
      example: '`weekday(requested_at, "Europe/London") >= 6`',
    },
  },
  local_hour: {
    arity: 2,
    typing: "zoned",
    doc: {
      written: "`local_hour(t, zone)`",
      operands: "a timestamp expression (E503) and an IANA zone name, a string literal or constant (E513)",
      result: "integer: the hour of `t` on the zone's clock, 0 to 23; outside 1970 to 2100, a fault (EVAL-004)",
      example: '`local_hour(requested_at, "America/New_York") in 9..16`',
    },
  },
  local_minute_of_day: {
    arity: 2,
    typing: "zoned",
    doc: {
      written: "`local_minute_of_day(t, zone)`",
      operands: "a timestamp expression (E503) and an IANA zone name, a string literal or constant (E513)",
      result: "integer: minutes since midnight on the zone's clock, 0 to 1439; outside 1970 to 2100, a fault (EVAL-004)",
      example: '`local_minute_of_day(requested_at, "Europe/London") < 570`',
    },
  },
  present: {
    arity: 1,
    typing: "signal name",
    doc: {
      written: "`present(name)`",
      operands: "the name of a signal (E506 otherwise)",
      result: "boolean: whether the signal was sent",
      example: "`not present(country)`",
    },
  },
};

/** How diagnostics name an operator: "`+`", "unary `-`". */
export function labelOf(op: IrOperatorName): string {
  return OPERATORS[op].label ?? `\`${IR_OPERATORS[op].symbol}\``;
}

const names = Object.keys(OPERATORS);

/** The built-in functions, as a condition calls them. */
export const FUNCTION_NAMES: readonly FunctionName[] = names.filter(isFunctionName);

const infix = (level: InfixLevel) => names.filter(isInfixOp).filter((op) => OPERATORS[op].level === level);
const prefix = (level: PrefixLevel) => names.filter(isPrefixOp).filter((op) => OPERATORS[op].level === level);
const INFIX_AT: Readonly<Record<InfixLevel, readonly InfixOp[]>> = {
  predicate: infix("predicate"),
  additive: infix("additive"),
  multiplicative: infix("multiplicative"),
};
const PREFIX_AT: Readonly<Record<PrefixLevel, readonly PrefixOp[]>> = { not: prefix("not"), unary: prefix("unary") };

/** The infix operators of a level, in table order: the grammar offers them in this order. */
export function infixAt(level: InfixLevel): readonly InfixOp[] {
  return INFIX_AT[level];
}

export function prefixAt(level: PrefixLevel): readonly PrefixOp[] {
  return PREFIX_AT[level];
}
