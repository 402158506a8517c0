import {
  ARITHMETIC_OPERATORS,
  COMPARISON_OPERATORS,
  UNARY_OPERATORS,
  UNKNOWN,
  isScalar,
  prepareExpression,
  type CompareOp,
  type IrExpr,
} from "@writ/runtime";
import { NumberSet } from "../analysis/number-set.js";
import { irNodes } from "./ir-operands.js";
import { MAX_NUMBER } from "./signal-domain.js";

/**
 * Arithmetic on one signal with constants, `amount * 2 + 100 > LIMIT` or `len(purpose) - 1 >= 20`, decided exactly.
 * Such an operand is a chain of steps from the signal (or its length) outwards, each adding, subtracting, multiplying
 * or dividing by a constant or negating: each step is monotone in IEEE-754 (rounding preserves order), so the chain
 * is. Where a step's result is not finite the operand is unknown, and since each step is monotone those inputs lie
 * below or above an interval K of inputs where it is known. Within K, the inputs that satisfy a comparison with a
 * constant are an interval found by binary search over the doubles (or whole numbers) in order: exact, not sampled.
 * A signal read twice (`x * x`) or divided by (`100 / x`, not monotone across 0) is not such a chain.
 */
export interface MonotoneView {
  /** What the chain starts from: the signal's value, or the length of a string signal. */
  readonly of: "value" | "length";
  readonly whole: boolean;
  /** The steps, applied from the signal outwards: each maps a finite value to a possibly non-finite one. */
  readonly steps: readonly Step[];
}

interface Step {
  readonly apply: (t: number) => number;
  /** 1 increasing, -1 decreasing, 0 constant. */
  readonly sign: 1 | -1 | 0;
}

/** The chain `e` is, over a numeric signal (`whole` for an integer signal), or null when it is not one. */
export function monotoneView(e: IrExpr, whole: boolean): MonotoneView | null {
  const steps: Step[] = [];
  let at = e;
  for (;;) {
    if (at.op === "signal") return { of: "value", whole, steps: steps.reverse() };
    if (at.op === "len" && at.arg.op === "signal") return { of: "length", whole: true, steps: steps.reverse() };
    if (at.op === "neg") {
      steps.push({ apply: (t) => UNARY_OPERATORS.neg.evaluate(t) as number, sign: -1 });
      at = at.arg;
      continue;
    }
    if (at.op !== "arith") return null;
    const [leftReads, rightReads] = [reads(at.left), reads(at.right)];
    if (leftReads === rightReads) return null;
    const c = constantNumber(leftReads ? at.right : at.left);
    if (c === null) return null;
    const { evaluate } = ARITHMETIC_OPERATORS[at.fn];
    const signOfC = c > 0 ? 1 : c < 0 ? -1 : 0;
    switch (at.fn) {
      case "add":
        steps.push({ apply: (t) => evaluate(t, c), sign: 1 });
        break;
      case "sub":
        steps.push(leftReads ? { apply: (t) => evaluate(t, c), sign: 1 } : { apply: (t) => evaluate(c, t), sign: -1 });
        break;
      case "mul":
        steps.push({ apply: (t) => evaluate(t, c), sign: signOfC });
        break;
      case "div":
        if (!leftReads) return null;
        steps.push({ apply: (t) => evaluate(t, c), sign: signOfC });
        break;
    }
    at = leftReads ? at.left : at.right;
  }
}

/**
 * The inputs (values, or lengths) for which `view op c` is true, false, and unknown (present but not finite).
 */
export function monotoneSets(
  view: MonotoneView,
  op: CompareOp | "in" | "range",
  constants: readonly number[],
): readonly [NumberSet, NumberSet, NumberSet] {
  const whole = view.whole;
  const domain = view.of === "length" ? { lo: 0, hi: MAX_NUMBER } : { lo: -MAX_NUMBER, hi: MAX_NUMBER };
  const order = whole ? WHOLE : DOUBLES;
  const run = (x: number) => evaluateChain(view, x);
  // K: the inputs where every step is finite. Below it a step overflowed one way, above it the other.
  const lo = order.firstTrue(domain.lo, domain.hi, (x) => run(x).position !== "below");
  const hi = lo === null ? null : order.lastTrue(lo, domain.hi, (x) => run(x).position !== "above");
  if (lo === null || hi === null) return [NumberSet.empty(whole), NumberSet.empty(whole), NumberSet.span(whole, -Infinity, Infinity)];
  const known = NumberSet.span(whole, lo, hi);
  const sign = view.steps.reduce<number>((s, step) => s * step.sign, 1);
  const f = (x: number): number => run(x).value!;
  /** The inputs of K where `f(x) cmp c`, an interval since f is monotone on K. */
  const where = (cmp: CompareOp, c: number): NumberSet => {
    const test = (x: number) => COMPARISON_OPERATORS[cmp].test(f(x), c);
    if (sign === 0) return test(lo) ? known : NumberSet.empty(whole);
    if (cmp === "eq") return where("le", c).intersect(where("ge", c));
    if (cmp === "ne") return known.intersect(where("eq", c).complement());
    // `f(x) < c` holds on a prefix of K when f increases, on a suffix when it decreases.
    const prefix = (cmp === "lt" || cmp === "le") === sign > 0;
    if (prefix) {
      const last = order.lastTrue(lo, hi, test);
      return last === null ? NumberSet.empty(whole) : NumberSet.span(whole, lo, last);
    }
    const first = order.firstTrue(lo, hi, test);
    return first === null ? NumberSet.empty(whole) : NumberSet.span(whole, first, hi);
  };
  let t: NumberSet;
  if (op === "in") t = constants.reduce((acc, c) => acc.union(where("eq", c)), NumberSet.empty(whole));
  else if (op === "range") t = where("ge", constants[0]!).intersect(where("le", constants[1]!));
  else t = where(op, constants[0]!);
  return [t, known.intersect(t.complement()), known.complement()];
}

type Position = "below" | "inside" | "above";

function evaluateChain(view: MonotoneView, x: number): { position: Position; value?: number } {
  let v = x;
  let sign = 1;
  for (const step of view.steps) {
    v = step.apply(v);
    sign *= step.sign;
    if (!Number.isFinite(v)) {
      // A constant chain that overflows does so for every input: call it above, so K is empty.
      if (sign === 0 || Number.isNaN(v)) return { position: "above" };
      return { position: v > 0 === sign > 0 ? "above" : "below" };
    }
  }
  return { position: "inside", value: v };
}

function reads(e: IrExpr): boolean {
  return irNodes(e).some((n) => n.op === "signal");
}

function constantNumber(e: IrExpr): number | null {
  const v = prepareExpression(e)({});
  return v !== UNKNOWN && isScalar(v) && typeof v === "number" ? v : null;
}

/** Binary search over an ordered domain for a predicate that is false, then true (firstTrue) or true, then false (lastTrue). */
interface Order {
  firstTrue(lo: number, hi: number, p: (x: number) => boolean): number | null;
  lastTrue(lo: number, hi: number, p: (x: number) => boolean): number | null;
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

const DOUBLES: Order = {
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
