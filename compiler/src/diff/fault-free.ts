import { INSTANT_LIMIT, MAX_MAGNITUDE, irOperands, type IrExpr } from "@writ/runtime";
import { NumberSet } from "../analysis/number-set.js";
import { Rational } from "../analysis/rational.js";
import { valueOfUnits } from "./number-domain.js";
import type { Variable } from "./space.js";

/**
 * Whether computing `e` can fault for the variables' values (docs/language.md "Faults"), by exact interval
 * arithmetic over their sets' hulls: false only when every `+`, `-` and `*` stays within ±(2^53 - 1) and no `*` can
 * underflow (its operands whole, or exact decimals), and there is no `/`; on time, every instant stays within
 * ±8.64e15 ms (time.ts in the runtime). An opaque atom (formula.ts) that cannot
 * fault is never a fault, which is what lets `coverage - previous_coverage < -5` be left out of fault regions.
 */
export function canFaultOver(e: IrExpr, variableOf: (signal: string) => Variable): boolean {
  return range(e, variableOf) === FAULTS;
}

interface Interval {
  readonly lo: Rational | null;
  readonly hi: Rational | null;
  /** Only whole numbers (or exact decimals, which never underflow). */
  readonly exact: boolean;
  /** A timestamp's instants, in milliseconds. */
  readonly instant?: boolean;
}

const FAULTS = "faults";
const MAX = Rational.of(BigInt(MAX_MAGNITUDE));
const INSTANT_MAX = Rational.of(BigInt(INSTANT_LIMIT));
const ANY: Interval = { lo: null, hi: null, exact: false };

function range(e: IrExpr, variableOf: (signal: string) => Variable): Interval | typeof FAULTS {
  switch (e.op) {
    case "lit":
      return typeof e.value === "number" ? point(Rational.fromDouble(e.value), Number.isInteger(e.value)) : ANY;
    case "signal":
      return hull(variableOf(e.name));
    case "calendar":
      // Outside its zone table's horizon a calendar field faults (EVAL-004), which an instant's interval does not rule out.
      return FAULTS;
    case "neg": {
      const a = range(e.arg, variableOf);
      return a === FAULTS ? a : { lo: a.hi?.neg() ?? null, hi: a.lo?.neg() ?? null, exact: a.exact };
    }
    case "arith": {
      // A quotient or a remainder faults where its divisor is 0, which an interval does not rule out here.
      if (e.fn === "div" || e.fn === "mod") return FAULTS;
      const [l, r] = [range(e.left, variableOf), range(e.right, variableOf)];
      if (l === FAULTS || r === FAULTS) return FAULTS;
      if (e.kind === "time") return time(e.fn, l, r);
      const exact = e.kind === "decimal" || (l.exact && r.exact);
      let out: Interval;
      if (e.fn === "add") out = { lo: sum(l.lo, r.lo), hi: sum(l.hi, r.hi), exact };
      else if (e.fn === "sub") out = { lo: sum(l.lo, r.hi?.neg() ?? null), hi: sum(l.hi, r.lo?.neg() ?? null), exact };
      else if (e.fn === "min") out = { lo: lesser(l.lo, r.lo, "lo"), hi: lesser(l.hi, r.hi, "hi"), exact };
      else if (e.fn === "max") out = { lo: greater(l.lo, r.lo, "lo"), hi: greater(l.hi, r.hi, "hi"), exact };
      else {
        if (!exact || l.lo === null || l.hi === null || r.lo === null || r.hi === null) return FAULTS;
        const corners = [l.lo.mul(r.lo), l.lo.mul(r.hi), l.hi.mul(r.lo), l.hi.mul(r.hi)].sort((a, b) => a.compare(b));
        out = { lo: corners[0]!, hi: corners[3]!, exact };
      }
      const inside = out.lo !== null && out.hi !== null && out.lo.compare(MAX.neg()) >= 0 && out.hi.compare(MAX) <= 0;
      return inside ? out : FAULTS;
    }
    default:
      for (const operand of irOperands(e)) if (range(operand, variableOf) === FAULTS) return FAULTS;
      return ANY;
  }
}

/** `+` or `-` on time: an instant (one operand an instant, not subtracted) within its range, or a duration within ±MAX. */
function time(fn: string, l: Interval, r: Interval): Interval | typeof FAULTS {
  if (fn !== "add" && fn !== "sub") return FAULTS;
  const [li, ri] = [l.instant === true, r.instant === true];
  const instant = fn === "add" ? li !== ri : li && !ri;
  const out =
    fn === "add"
      ? { lo: sum(l.lo, r.lo), hi: sum(l.hi, r.hi) }
      : { lo: sum(l.lo, r.hi?.neg() ?? null), hi: sum(l.hi, r.lo?.neg() ?? null) };
  const max = instant ? INSTANT_MAX : MAX;
  const inside = out.lo !== null && out.hi !== null && out.lo.compare(max.neg()) >= 0 && out.hi.compare(max) <= 0;
  return inside ? { ...out, exact: true, instant } : FAULTS;
}

function point(v: Rational, exact: boolean): Interval {
  return { lo: v, hi: v, exact };
}

function sum(a: Rational | null, b: Rational | null): Rational | null {
  return a === null || b === null ? null : a.add(b);
}

/** The lesser of two bounds of one side; null is -∞ on the low side and +∞ on the high one. */
function lesser(a: Rational | null, b: Rational | null, side: "lo" | "hi"): Rational | null {
  if (a === null || b === null) return side === "lo" ? null : (a ?? b);
  return a.compare(b) <= 0 ? a : b;
}

/** The greater of two bounds of one side; null is -∞ on the low side and +∞ on the high one. */
function greater(a: Rational | null, b: Rational | null, side: "lo" | "hi"): Rational | null {
  if (a === null || b === null) return side === "hi" ? null : (a ?? b);
  return a.compare(b) >= 0 ? a : b;
}

/** The values a variable's set spans, exactly; unbounded where it is not numbers. */
function hull(v: Variable): Interval {
  const values = v.universe.values;
  if (!(values instanceof NumberSet) || values.isEmpty()) return ANY;
  if (v.kind === "timestamp") {
    const [lo, hi] = [values.spans[0]!.lo, values.spans.at(-1)!.hi];
    return { lo: Rational.fromDouble(lo), hi: Rational.fromDouble(hi), exact: true, instant: true };
  }
  if (v.kind !== "number") return ANY;
  const [lo, hi] = [values.spans[0]!.lo, values.spans.at(-1)!.hi];
  const exact = (n: number): Rational | null =>
    Number.isFinite(n)
      ? values.whole
        ? Rational.of(BigInt(n), 10n ** BigInt(v.numbers.scale))
        : Rational.fromDouble(valueOfUnits(v.numbers, n))
      : null;
  return { lo: exact(lo), hi: exact(hi), exact: values.whole };
}
