import {
  ARITHMETIC_OPERATORS,
  COMPARISON_OPERATORS,
  MAX_MAGNITUDE,
  UNARY_OPERATORS,
  UNKNOWN,
  isScalar,
  prepareExpression,
  type CompareOp,
  type IrExpr,
} from "@writ/runtime";
import { NumberSet } from "../analysis/number-set.js";
import { Rational, boundNumber } from "../analysis/rational.js";
import { irNodes } from "./ir-operands.js";
import { INTEGERS, inUnits, valueOfUnits, type NumberDomain } from "./number-domain.js";
import { MAX_NUMBER } from "./signal-domain.js";

/**
 * Arithmetic on one signal with constants, `amount * 2 + 100 > LIMIT` or `len(purpose) - 1 >= 20`, decided exactly,
 * faults included (docs/language.md "Faults"): a chain of steps from the signal (or its length) outwards, each adding,
 * subtracting, multiplying or dividing by a constant or negating. A signal read twice (`x * x`) or divided by
 * (`100 / x`, not monotone across 0) is not such a chain.
 * On `number` and `integer` (IEEE-754) each step is monotone, since rounding preserves order, so the chain is. A step
 * faults where its result leaves ±(2^53 - 1), and `*` and `/` where a non-zero operand gives 0 (underflow); the inputs
 * where no step faults, and within them those satisfying the comparison, are found span by span by binary search over
 * the doubles (or whole numbers) in order, each test being monotone where the steps before it are known: exact, not
 * sampled. On decimals the runtime is exact, so the chain is an affine map `a * x + b` of rationals, solved for x in
 * closed form, in the decimal's units.
 */
export interface MonotoneView {
  /** What the chain starts from: the signal's value, or the length of a string signal. */
  readonly of: "value" | "length";
  /** `decimal`: exact arithmetic; `number`: IEEE-754. */
  readonly kind: "number" | "decimal";
  readonly domain: NumberDomain;
  /** The steps, applied from the signal outwards. */
  readonly steps: readonly Step[];
}

type StepFn = "add" | "sub" | "rsub" | "mul" | "div" | "neg";

interface Step {
  readonly fn: StepFn;
  readonly c: number;
}

/** The chain `e` is, for a comparison of `kind`, or null when it is not one. */
export function monotoneView(e: IrExpr, domain: NumberDomain, kind: "number" | "decimal" = "number"): MonotoneView | null {
  const steps: Step[] = [];
  let at = e;
  for (;;) {
    if (at.op === "signal") break;
    if (at.op === "len" && at.arg.op === "signal") {
      if (kind === "decimal") return null;
      return { of: "length", kind, domain: INTEGERS, steps: steps.reverse() };
    }
    if (at.op === "neg") {
      steps.push({ fn: "neg", c: 0 });
      at = at.arg;
      continue;
    }
    // Arithmetic on time is linear (linear.ts), not a chain of steps on numbers.
    if (at.op !== "arith" || at.kind === "time" || (at.kind === "decimal") !== (kind === "decimal")) return null;
    const [leftReads, rightReads] = [reads(at.left), reads(at.right)];
    if (leftReads === rightReads) return null;
    const c = constantNumber(leftReads ? at.right : at.left);
    if (c === null) return null;
    // `%`, `min` and `max` are not steps: a remainder is not monotone, and a clamp has no inverse to carry bounds back.
    if (at.fn !== "add" && at.fn !== "sub" && at.fn !== "mul" && at.fn !== "div") return null;
    if (at.fn === "div" && !leftReads) return null;
    steps.push({ fn: at.fn === "sub" && !leftReads ? "rsub" : at.fn, c });
    at = leftReads ? at.left : at.right;
  }
  // Exact arithmetic needs exact inputs: a decimal chain over doubles is not one the runtime computes.
  if (kind === "decimal" && !domain.whole) return null;
  return { of: "value", kind, domain, steps: steps.reverse() };
}

/** Where `view op constants` is true, false, unknown (never, for a present value) and a fault, over the domain. */
export function monotoneSets(
  view: MonotoneView,
  op: CompareOp | "in" | "range",
  constants: readonly number[],
): readonly [NumberSet, NumberSet, NumberSet, NumberSet] {
  const whole = view.domain.whole;
  const universe = view.of === "length" ? NumberSet.span(true, 0, MAX_NUMBER) : domainSpan(view.domain);
  const chain = view.kind === "decimal" ? exactChain(view, universe) : doubleChain(view, universe);
  let t: NumberSet;
  if (op === "in") t = constants.reduce((acc, c) => acc.union(chain.where("eq", c)), NumberSet.empty(whole));
  else if (op === "range") t = chain.where("ge", constants[0]!).intersect(chain.where("le", constants[1]!));
  else t = chain.where(op, constants[0]!);
  return [t, chain.known.intersect(t.complement()), NumberSet.empty(whole), chain.known.complement()];
}

/** Every value of the domain within ±(2^53 - 1), in its units. */
function domainSpan(domain: NumberDomain): NumberSet {
  if (!inUnits(domain)) return NumberSet.span(domain.whole, -MAX_NUMBER, MAX_NUMBER);
  const limit = boundNumber(BigInt(MAX_NUMBER) * 10n ** BigInt(domain.scale));
  return NumberSet.span(true, -Math.min(limit, MAX_NUMBER), Math.min(limit, MAX_NUMBER));
}

interface Chain {
  /** The inputs where no step faults. */
  readonly known: NumberSet;
  /** The inputs of `known` where the chain's value `cmp c`. */
  where(cmp: CompareOp, c: number): NumberSet;
}

function doubleChain(view: MonotoneView, universe: NumberSet): Chain {
  const order = view.domain.whole ? WHOLE : DOUBLES_ORDER;
  const toValue = (x: number): number => valueOfUnits(view.domain, x);
  const prefix = (x: number, k: number): number => {
    let v = toValue(x);
    for (let i = 0; i < k; i++) v = apply(view.steps[i]!, v);
    return v;
  };
  let known = universe;
  view.steps.forEach((step, i) => {
    const k = i + 1;
    if (step.fn === "div" && step.c === 0) known = NumberSet.empty(known.whole);
    known = monotoneWhere(order, known, (x) => prefix(x, k) <= MAX_MAGNITUDE);
    known = monotoneWhere(order, known, (x) => prefix(x, k) >= -MAX_MAGNITUDE);
    if ((step.fn === "mul" || step.fn === "div") && step.c !== 0) {
      // Underflow: the result is 0 where the operand was not.
      const zero = monotoneWhere(
        order,
        monotoneWhere(order, known, (x) => prefix(x, k) >= 0),
        (x) => prefix(x, k) <= 0,
      );
      const operandZero = monotoneWhere(
        order,
        monotoneWhere(order, known, (x) => prefix(x, i) >= 0),
        (x) => prefix(x, i) <= 0,
      );
      known = known.intersect(zero.intersect(operandZero.complement()).complement());
    }
  });
  const n = view.steps.length;
  const where = (cmp: CompareOp, c: number): NumberSet => {
    if (cmp === "eq") return where("le", c).intersect(where("ge", c));
    if (cmp === "ne") return known.intersect(where("eq", c).complement());
    return monotoneWhere(order, known, (x) => COMPARISON_OPERATORS[cmp].test(prefix(x, n), c));
  };
  return { known, where };
}

function apply(step: Step, t: number): number {
  if (step.fn === "neg") return UNARY_OPERATORS.neg.evaluate(t) as number;
  if (step.fn === "rsub") return ARITHMETIC_OPERATORS.sub.evaluate(step.c, t);
  return ARITHMETIC_OPERATORS[step.fn].evaluate(t, step.c);
}

/** The chain as `a * x + b` with x the exact value of an input (units over 10^scale); each step's range in closed form. */
function exactChain(view: MonotoneView, universe: NumberSet): Chain {
  const unit = Rational.of(1n, 10n ** BigInt(view.domain.scale));
  let [a, b] = [unit, Rational.ZERO];
  const max = Rational.of(BigInt(MAX_MAGNITUDE));
  let known = universe;
  for (const step of view.steps) {
    const c = Rational.fromDecimal(step.c);
    if (step.fn === "neg") [a, b] = [a.neg(), b.neg()];
    else if (step.fn === "add") b = b.add(c);
    else if (step.fn === "sub") b = b.sub(c);
    else if (step.fn === "rsub") [a, b] = [a.neg(), c.sub(b)];
    else if (step.fn === "mul") [a, b] = [a.mul(c), b.mul(c)];
    else return { known: NumberSet.empty(true), where: () => NumberSet.empty(true) };
    known = known.intersect(affineWhere(a, b, "le", max)).intersect(affineWhere(a, b, "ge", max.neg()));
  }
  const where = (cmp: CompareOp, c: number): NumberSet => known.intersect(affineWhere(a, b, cmp, Rational.fromDecimal(c)));
  return { known, where };
}

/** The whole numbers n where `a * n + b cmp c`. */
export function affineWhere(a: Rational, b: Rational, cmp: CompareOp, c: Rational): NumberSet {
  const sign = a.sign();
  if (sign === 0)
    return COMPARISON_OPERATORS[cmp].test(b.compare(c), 0) ? NumberSet.span(true, -Infinity, Infinity) : NumberSet.empty(true);
  const r = c.sub(b).div(a);
  return wholeCompare(sign > 0 ? cmp : COMPARISON_OPERATORS[cmp].converse, r);
}

/** The whole numbers n where `n cmp r`, exactly. */
export function wholeCompare(cmp: CompareOp, r: Rational): NumberSet {
  const all = NumberSet.span(true, -Infinity, Infinity);
  switch (cmp) {
    case "le":
      return NumberSet.span(true, -Infinity, boundNumber(r.floor()));
    case "lt":
      return NumberSet.span(true, -Infinity, boundNumber(r.ceil() - 1n));
    case "ge":
      return NumberSet.span(true, boundNumber(r.ceil()), Infinity);
    case "gt":
      return NumberSet.span(true, boundNumber(r.floor() + 1n), Infinity);
    case "eq":
      return r.den === 1n ? NumberSet.span(true, boundNumber(r.num), boundNumber(r.num)) : NumberSet.empty(true);
    case "ne":
      return r.den === 1n ? all.intersect(wholeCompare("eq", r).complement()) : all;
  }
}

function reads(e: IrExpr): boolean {
  return irNodes(e).some((n) => n.op === "signal");
}

function constantNumber(e: IrExpr): number | null {
  try {
    const v = prepareExpression(e)({});
    return v !== UNKNOWN && isScalar(v) && typeof v === "number" ? v : null;
  } catch {
    // A constant that faults makes the whole condition a fault: not a chain (formula.ts reads it as one).
    return null;
  }
}

/** Binary search over an ordered domain for a predicate that is false, then true (firstTrue) or true, then false (lastTrue). */
interface Order {
  firstTrue(lo: number, hi: number, p: (x: number) => boolean): number | null;
  lastTrue(lo: number, hi: number, p: (x: number) => boolean): number | null;
}

/**
 * The values of `set` where `p` holds, for a `p` that on each span holds on a prefix or on a suffix of it (a
 * threshold test of a function monotone there): two ends tested, then one binary search per span.
 */
function monotoneWhere(order: Order, set: NumberSet, p: (x: number) => boolean): NumberSet {
  let out = NumberSet.empty(set.whole);
  for (const s of set.spans) {
    const [atLo, atHi] = [p(s.lo), p(s.hi)];
    if (atLo && atHi) out = out.union(NumberSet.span(set.whole, s.lo, s.hi));
    else if (atLo) out = out.union(NumberSet.span(set.whole, s.lo, order.lastTrue(s.lo, s.hi, p)!));
    else if (atHi) out = out.union(NumberSet.span(set.whole, order.firstTrue(s.lo, s.hi, p)!, s.hi));
  }
  return out;
}

const WHOLE: Order = {
  firstTrue(lo, hi, p) {
    if (lo > hi || !p(hi)) return null;
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (p(mid)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  },
  lastTrue(lo, hi, p) {
    if (lo > hi || !p(lo)) return null;
    while (lo < hi) {
      const mid = lo + Math.ceil((hi - lo) / 2);
      if (p(mid)) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  },
};

const bits = new DataView(new ArrayBuffer(8));

/** Doubles in order as integers: 0 is 0, the next double up is 1, and negatives mirror positives. */
function ordinal(x: number): bigint {
  if (x === 0) return 0n;
  bits.setFloat64(0, Math.abs(x));
  const n = bits.getBigInt64(0);
  return x < 0 ? -n : n;
}

function fromOrdinal(n: bigint): number {
  bits.setBigInt64(0, n < 0n ? -n : n);
  const x = bits.getFloat64(0);
  return n < 0n ? -x : x;
}

const DOUBLES_ORDER: Order = {
  firstTrue(lo, hi, p) {
    let [a, b] = [ordinal(lo), ordinal(hi)];
    if (a > b || !p(hi)) return null;
    while (a < b) {
      const mid = a + (b - a) / 2n;
      if (p(fromOrdinal(mid))) b = mid;
      else a = mid + 1n;
    }
    return fromOrdinal(a);
  },
  lastTrue(lo, hi, p) {
    let [a, b] = [ordinal(lo), ordinal(hi)];
    if (a > b || !p(lo)) return null;
    while (a < b) {
      const mid = a + (b - a + 1n) / 2n;
      if (p(fromOrdinal(mid))) a = mid;
      else b = mid - 1n;
    }
    return fromOrdinal(a);
  },
};
