import { IrUnsupportedError } from "../errors.js";
import { rescale, unitsOf, withinMagnitude } from "./exact.js";
import { EvaluationFaultSignal } from "./faults.js";
import { compileLinearRegExp } from "../regex/linear-regexp.js";
import { cidrSpan, ipAddress } from "../signals/ip.js";
import {
  ARITHMETIC_OPERATORS,
  CALENDAR_OPERATORS,
  COMPARISON_OPERATORS,
  LOGICAL_OPERATORS,
  SPECIAL_OPERATORS,
  STRING_OPERATORS,
  UNARY_OPERATORS,
  type ArithmeticOperator,
  type LogicalOp,
  type UnaryOp,
} from "./operators.js";
import { INSTANT_LIMIT } from "./time.js";
import type { IrNode } from "./types.js";
import { COMPARISON_DOMAINS, Instant, isScalar, UNKNOWN, type Value } from "./values.js";
import { localMs } from "./local-time.js";
import { offsetAt, type ZoneTable } from "./zones.js";

/**
 * Each IR node's operator applied to its operands, built once per node from the operator table: given the functions
 * that compute the operands, the function that computes the node. The evaluator (evaluate.ts) passes the compiled
 * operands, the explanation (explain.ts) the operand values it has already computed, so both decide alike by
 * construction. Each throws IrUnsupportedError for an operator or comparison kind this runtime does not declare (an
 * IR from a newer compiler), so such an IR is refused when it is prepared, never when a request arrives.
 *
 * An operand that faults (faults.ts) throws EvaluationFaultSignal; the evaluator catches it at the rule. Decimal nodes
 * take the places of their operands (scale.ts), fixed when the IR is prepared, and compute on units at those places.
 */
export type Signals = Readonly<Record<string, unknown>>;
/**
 * `now`: the decision instant (time.ts `decisionInstant`), which the evaluator passes down to every operand; undefined
 * where no instant was given, which only an expression that does not read `now` may be computed with.
 */
export type Operand = (signals: Signals, now?: Instant) => Value;

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

/** The decision instant (`now`): the same for every node of one evaluation. */
export function decisionNow(): Operand {
  return (_s, t) => {
    // A caller's error, not a fault: every entry point that decides supplies the instant (evaluate.ts).
    if (t === undefined) throw new TypeError("`now` is read, but no decision instant was given");
    return t;
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
  return (s, t) => {
    const v = arg(s, t);
    return v === UNKNOWN ? UNKNOWN : evaluate(v);
  };
}

/**
 * Kleene's `and` (absorbing `false`) or `or` (absorbing `true`): the absorbing value decides, else unknown wins.
 * `faulting` (an operand can fault): a fault is a fourth value, which only the absorbing value beats (as CEL's errors
 * are), so `b > 0 and a / b > 1` does not fault for `b` 0, in either order; otherwise the first fault is rethrown.
 */
export function logical(node: IrNode<LogicalOp>, args: readonly Operand[], faulting = false): Operand {
  const { absorbing } = declared(LOGICAL_OPERATORS, node.op, "IR operator");
  if (faulting) {
    return (s, t) => {
      let result: Value = !absorbing;
      let fault: EvaluationFaultSignal | null = null;
      for (const arg of args) {
        let v: Value;
        try {
          v = arg(s, t);
        } catch (e) {
          if (!(e instanceof EvaluationFaultSignal)) throw e;
          fault ??= e;
          continue;
        }
        if (v === absorbing) return absorbing;
        if (v === UNKNOWN) result = UNKNOWN;
      }
      if (fault !== null) throw fault;
      return result;
    };
  }
  return (s, t) => {
    let result: Value = !absorbing;
    for (const arg of args) {
      const v = arg(s, t);
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
  // A literal is mapped into the domain once, when the IR is prepared, rather than at each request.
  if (node.right.op === "lit") {
    const b = domain(node.right.value);
    return (s, t) => {
      const a = domain(left(s, t));
      return a === UNKNOWN || b === UNKNOWN ? UNKNOWN : test(a, b);
    };
  }
  if (node.left.op === "lit") {
    const a = domain(node.left.value);
    return (s, t) => {
      const b = domain(right(s, t));
      return a === UNKNOWN || b === UNKNOWN ? UNKNOWN : test(a, b);
    };
  }
  return (s, t) => {
    const a = domain(left(s, t));
    const b = domain(right(s, t));
    return a === UNKNOWN || b === UNKNOWN ? UNKNOWN : test(a, b);
  };
}

export function stringTest(node: IrNode<"str">, left: Operand, right: Operand): Operand {
  const { test } = declared(STRING_OPERATORS, node.fn, "IR operator");
  return (s, t) => {
    const a = left(s, t);
    const b = right(s, t);
    return typeof a === "string" && typeof b === "string" ? test(a, b) : UNKNOWN;
  };
}

/** On doubles: unknown unless both operands are numbers; a result that cannot be stated exactly is a fault. */
export function arithmetic(node: IrNode<"arith">, left: Operand, right: Operand): Operand {
  const { evaluate, faultOf } = declared(ARITHMETIC_OPERATORS, node.fn, "IR operator");
  return (s, t) => {
    const a = left(s, t);
    const b = right(s, t);
    if (typeof a !== "number" || typeof b !== "number") return UNKNOWN;
    const r = evaluate(a, b);
    const fault = faultOf(a, b, r);
    if (fault !== null) throw new EvaluationFaultSignal(fault, node);
    return r;
  };
}

/**
 * On time (time.ts): a timestamp (a string, or an Instant computed) is its instant, a duration (a number) its
 * milliseconds. A timestamp and a duration give an Instant, two timestamps (`-`) or two durations a duration; an
 * instant beyond what an ECMAScript date holds, or a duration beyond ±(2^53 - 1) ms, is a fault (EVAL-002). Unknown
 * unless the operands are time values.
 */
export function timeArithmetic(node: IrNode<"arith">, left: Operand, right: Operand): Operand {
  const operator: ArithmeticOperator = declared(ARITHMETIC_OPERATORS, node.fn, "IR operator");
  const { time } = operator;
  if (time === undefined) throw new IrUnsupportedError(`\`${operator.symbol}\` is not defined on timestamps and durations`);
  const instant = COMPARISON_DOMAINS.timestamp;
  return (s, t) => {
    const a = left(s, t);
    const b = right(s, t);
    const aIsInstant = isTimestamp(a);
    const bIsInstant = isTimestamp(b);
    const x = aIsInstant ? instant(a) : a;
    const y = bIsInstant ? instant(b) : b;
    if (typeof x !== "number" || typeof y !== "number") return UNKNOWN;
    const r = time(x, y);
    // A timestamp and a duration: an instant; two of a kind: a duration.
    if (aIsInstant !== bIsInstant) {
      if (!Number.isInteger(r) || Math.abs(r) > INSTANT_LIMIT) throw new EvaluationFaultSignal("EVAL-002", node);
      return new Instant(r);
    }
    if (!Number.isSafeInteger(r)) throw new EvaluationFaultSignal("EVAL-002", node);
    return r;
  };
}

const isTimestamp = (v: Value): boolean => typeof v === "string" || v instanceof Instant;

/** The table of a calendar node's zone, fixed when the IR is prepared; an IR without it is refused then. */
export function zoneTableOf(node: IrNode<"calendar">, zones: ReadonlyMap<string, ZoneTable>): ZoneTable {
  const table = zones.get(node.zone);
  if (table === undefined) throw new IrUnsupportedError(`zone \`${node.zone}\` has no table in the IR's \`zones\``);
  return table;
}

/**
 * A calendar field of a timestamp's local time in the node's zone (zones.ts): unknown unless the operand is a
 * timestamp; an instant outside the table's horizon is a fault (EVAL-004).
 */
export function calendar(node: IrNode<"calendar">, arg: Operand, table: ZoneTable): Operand {
  const { field } = declared(CALENDAR_OPERATORS, node.fn, "IR operator");
  const instant = COMPARISON_DOMAINS.timestamp;
  return (s, t) => {
    const ms = instant(arg(s, t));
    if (typeof ms !== "number") return UNKNOWN;
    const offset = offsetAt(table, ms);
    if (offset === null) throw new EvaluationFaultSignal("EVAL-004", node);
    return field(localMs(ms, offset));
  };
}

/** An operand of a decimal node: how to compute it, and the places its value has. */
export interface DecimalOperand {
  readonly value: Operand;
  readonly places: number;
}

/** A decimal operand's value as units at `to` places (`to` at least its own); null when unknown or not a decimal. */
function unitsAt(v: Value, from: number, to: number): bigint | null {
  if (typeof v === "bigint") return rescale(v, from, to);
  return typeof v === "number" ? unitsOf(v, to) : null;
}

/** Exact: the result is units at the places the operator gives (exact.ts); out of ±(2^53 - 1) it is a fault. */
export function exactArithmetic(node: IrNode<"arith">, left: DecimalOperand, right: DecimalOperand): Operand {
  const operator: ArithmeticOperator = declared(ARITHMETIC_OPERATORS, node.fn, "IR operator");
  const { exact } = operator;
  if (exact === undefined) throw new IrUnsupportedError(`\`${operator.symbol}\` is not defined on decimals`);
  const places = exact.places(left.places, right.places);
  const [leftAt, rightAt] = exact.aligned ? [places, places] : [left.places, right.places];
  const { faultOf } = exact;
  // Only an operator that can fault before computing (`%`) pays for the test.
  const evaluate =
    faultOf === undefined
      ? exact.evaluate
      : (a: bigint, b: bigint): bigint => {
          const fault = faultOf(a, b);
          if (fault !== null) throw new EvaluationFaultSignal(fault, node);
          return exact.evaluate(a, b);
        };
  return (s, t) => {
    const a = unitsAt(left.value(s, t), left.places, leftAt);
    const b = unitsAt(right.value(s, t), right.places, rightAt);
    if (a === null || b === null) return UNKNOWN;
    const r = evaluate(a, b);
    if (!withinMagnitude(r, places)) throw new EvaluationFaultSignal("EVAL-002", node);
    return r;
  };
}

/**
 * Maps the operands of a decimal comparison to one domain: two numbers compare as their doubles (exact for the
 * decimals JSON numbers carry, values.ts); once one is computed exactly, both become units at the larger places.
 */
function decimalDomain(operands: readonly DecimalOperand[]): (values: readonly Value[]) => readonly (number | bigint)[] | null {
  const places = Math.max(...operands.map((o) => o.places));
  return (values) => {
    if (values.every((v) => typeof v === "number")) return values as readonly number[];
    const units: bigint[] = [];
    for (let i = 0; i < values.length; i++) {
      const u = unitsAt(values[i]!, operands[i]!.places, places);
      if (u === null) return null;
      units.push(u);
    }
    return units;
  };
}

export function exactComparison(node: IrNode<"cmp">, left: DecimalOperand, right: DecimalOperand): Operand {
  const { test } = declared(COMPARISON_OPERATORS, node.cmp, "IR operator");
  const domain = decimalDomain([left, right]);
  return (s, t) => {
    const a = left.value(s, t);
    const b = right.value(s, t);
    if (typeof a === "number" && typeof b === "number") return test(a, b);
    const both = domain([a, b]);
    return both === null ? UNKNOWN : test(both[0]!, both[1]!);
  };
}

/** `value in [set]` on decimals: the set's numbers as doubles, and as units once the value is computed exactly. */
export function exactMembership(node: IrNode<"in">, value: DecimalOperand, itemPlaces: number): Operand {
  const doubles = new Set<Value>(node.set.filter((v) => typeof v === "number"));
  const places = Math.max(value.places, itemPlaces);
  let units: Set<bigint> | undefined;
  const { test } = SPECIAL_OPERATORS.in;
  return (s, t) => {
    const v = value.value(s, t);
    if (typeof v === "number") return test(v, doubles);
    if (typeof v !== "bigint") return UNKNOWN;
    units ??= new Set([...doubles].flatMap((d) => unitsOf(d as number, places) ?? []));
    return test(rescale(v, value.places, places), units);
  };
}

export function exactRange(value: DecimalOperand, min: DecimalOperand, max: DecimalOperand): Operand {
  const { test } = SPECIAL_OPERATORS.range;
  const domain = decimalDomain([value, min, max]);
  return (s, t) => {
    const all = domain([value.value(s, t), min.value(s, t), max.value(s, t)]);
    return all === null ? UNKNOWN : test(all[0]!, all[1]!, all[2]!);
  };
}

export function membership(node: IrNode<"in">, value: Operand): Operand {
  const domain = declared(COMPARISON_DOMAINS, node.kind, "comparison kind");
  const set = new Set<Value>(node.set.map(domain));
  const { test } = SPECIAL_OPERATORS.in;
  return (s, t) => {
    const key = domain(value(s, t));
    return key === UNKNOWN ? UNKNOWN : test(key, set);
  };
}

export function range(value: Operand, min: Operand, max: Operand): Operand {
  const { test } = SPECIAL_OPERATORS.range;
  return (s, t) => {
    const v = value(s, t);
    const lo = min(s, t);
    const hi = max(s, t);
    return typeof v === "number" && typeof lo === "number" && typeof hi === "number" ? test(v, lo, hi) : UNKNOWN;
  };
}

/** `address in_cidr [ranges]`: the ranges' spans fixed when the IR is prepared, a range that is not one refused then. */
export function inCidr(node: IrNode<"in_cidr">, address: Operand): Operand {
  const spans = node.ranges.map((r) => {
    const span = cidrSpan(r);
    if (span === null) throw new IrUnsupportedError(`\`${r}\` is not a CIDR range`);
    return span;
  });
  const { test } = SPECIAL_OPERATORS.in_cidr;
  return (s, t) => {
    const v = address(s, t);
    const point = typeof v === "string" ? ipAddress(v) : null;
    return point === null ? UNKNOWN : test(point, spans);
  };
}

export function matches(node: IrNode<"matches">, value: Operand): Operand {
  // The engine of the signals schema's `pattern` too (validate.ts): `u`-flag dialect, linear time. An IR with a pattern
  // it refuses is refused here, when the IR is prepared.
  const pattern = compileLinearRegExp(node.pattern);
  const { test } = SPECIAL_OPERATORS.matches;
  return (s, t) => {
    const v = value(s, t);
    return typeof v === "string" ? test(v, pattern) : UNKNOWN;
  };
}
