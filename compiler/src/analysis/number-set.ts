import type { CompareOp } from "@writ/runtime";

/**
 * A set of numbers as a union of closed spans, exact for the values a signal can take: IEEE-754 doubles, or whole
 * numbers only (`integer` signals, timestamps as milliseconds, string lengths). An open bound is stored as the next
 * representable value (`x > 1` is `x >= 1.0000000000000002`, or `x >= 2` for whole numbers), so two spans that leave
 * no double between them are one span, and emptiness is exact. Bounds may be infinite (lengths have no upper bound).
 */
export interface Span {
  readonly lo: number;
  readonly hi: number;
}

const view = new DataView(new ArrayBuffer(8));

/** The double after `x` (towards +Infinity); -0 is 0. */
export function nextUp(x: number): number {
  if (Number.isNaN(x) || x === Infinity) return x;
  if (x === 0) return Number.MIN_VALUE;
  view.setFloat64(0, x);
  const bits = view.getBigInt64(0);
  view.setBigInt64(0, x > 0 ? bits + 1n : bits - 1n);
  return view.getFloat64(0);
}

/** The double before `x` (towards -Infinity); -0 is 0. */
export function nextDown(x: number): number {
  return -nextUp(-x);
}

export class NumberSet {
  private constructor(
    /** Whole numbers only. */
    readonly whole: boolean,
    /** Sorted, disjoint and not adjacent. */
    readonly spans: readonly Span[],
  ) {}

  static empty(whole: boolean): NumberSet {
    return new NumberSet(whole, []);
  }

  /** The closed span lo..hi (rounded inwards to whole numbers when `whole`). */
  static span(whole: boolean, lo: number, hi: number): NumberSet {
    return NumberSet.of(whole, [{ lo, hi }]);
  }

  static points(whole: boolean, values: readonly number[]): NumberSet {
    return NumberSet.of(
      whole,
      values.map((v) => ({ lo: v, hi: v })),
    );
  }

  /** `{v | v op c}` within lo..hi. */
  static compare(whole: boolean, op: CompareOp, c: number, lo = -Infinity, hi = Infinity): NumberSet {
    const below = whole ? (Number.isInteger(c) ? c - 1 : Math.floor(c)) : nextDown(c);
    const above = whole ? (Number.isInteger(c) ? c + 1 : Math.ceil(c)) : nextUp(c);
    switch (op) {
      case "lt":
        return NumberSet.span(whole, lo, Math.min(hi, below));
      case "le":
        return NumberSet.span(whole, lo, Math.min(hi, c));
      case "gt":
        return NumberSet.span(whole, Math.max(lo, above), hi);
      case "ge":
        return NumberSet.span(whole, Math.max(lo, c), hi);
      case "eq":
        return c >= lo && c <= hi ? NumberSet.points(whole, [c]) : NumberSet.empty(whole);
      case "ne":
        return NumberSet.of(whole, [
          { lo, hi: Math.min(hi, below) },
          { lo: Math.max(lo, above), hi },
        ]);
    }
  }

  private static of(whole: boolean, spans: readonly Span[]): NumberSet {
    const rounded = spans
      .map((s) => (whole ? { lo: Math.ceil(s.lo), hi: Math.floor(s.hi) } : { lo: s.lo === 0 ? 0 : s.lo, hi: s.hi === 0 ? 0 : s.hi }))
      .filter((s) => s.lo <= s.hi)
      .sort((a, b) => a.lo - b.lo);
    const merged: Span[] = [];
    for (const s of rounded) {
      const last = merged[merged.length - 1];
      if (last && s.lo <= (whole ? last.hi + 1 : nextUp(last.hi))) merged[merged.length - 1] = { lo: last.lo, hi: Math.max(last.hi, s.hi) };
      else merged.push(s);
    }
    return new NumberSet(whole, merged);
  }

  isEmpty(): boolean {
    return this.spans.length === 0;
  }

  has(v: number): boolean {
    return (!this.whole || Number.isInteger(v)) && this.spans.some((s) => v >= s.lo && v <= s.hi);
  }

  intersect(other: NumberSet): NumberSet {
    const whole = this.whole || other.whole;
    const out: Span[] = [];
    for (const a of this.spans) {
      for (const b of other.spans) {
        const lo = Math.max(a.lo, b.lo);
        const hi = Math.min(a.hi, b.hi);
        if (lo <= hi) out.push({ lo, hi });
      }
    }
    return NumberSet.of(whole, out);
  }

  union(other: NumberSet): NumberSet {
    return NumberSet.of(this.whole || other.whole, [...this.spans, ...other.spans]);
  }

  /** Everything (every double, or every whole number) not in this set. */
  complement(): NumberSet {
    const out: Span[] = [];
    let from: number | null = -Infinity;
    for (const s of this.spans) {
      if (from !== null && s.lo !== -Infinity) out.push({ lo: from, hi: this.whole ? s.lo - 1 : nextDown(s.lo) });
      from = s.hi === Infinity ? null : this.whole ? s.hi + 1 : nextUp(s.hi);
    }
    if (from !== null) out.push({ lo: from, hi: Infinity });
    return NumberSet.of(this.whole, out);
  }

  /**
   * A value of the set, chosen to read well: 0, else the whole number nearest 0, else the shortest decimal inside
   * the first span. Undefined when the set is empty.
   */
  pick(): number | undefined {
    let best: number | undefined;
    for (const s of this.spans) {
      const candidate = s.lo > 0 ? Math.ceil(s.lo) : s.hi < 0 ? Math.floor(s.hi) : 0;
      if (candidate >= s.lo && candidate <= s.hi && (best === undefined || Math.abs(candidate) < Math.abs(best))) best = candidate;
    }
    if (best !== undefined) return best === 0 ? 0 : best;
    const first = this.spans[0];
    if (!first) return undefined;
    return shortestInside(first);
  }

  /** A few values of the set for a search: each span's ends, their neighbours, its pick, and `hints` that fall inside. */
  samples(hints: readonly number[] = []): number[] {
    const out = new Set<number>();
    const pick = this.pick();
    if (pick !== undefined) out.add(pick);
    for (const s of this.spans) {
      for (const v of [s.lo, s.hi, this.whole ? s.lo + 1 : nextUp(s.lo), this.whole ? s.hi - 1 : nextDown(s.hi), shortestInside(s)]) {
        if (Number.isFinite(v) && this.has(v)) out.add(v);
      }
    }
    for (const h of hints) if (this.has(h)) out.add(h);
    return [...out];
  }

  toString(): string {
    if (this.spans.length === 0) return "nothing";
    return this.spans.map((s) => (s.lo === s.hi ? `${s.lo}` : `${s.lo}..${s.hi}`)).join(", ");
  }
}

/** The value of span `s` written with the fewest significant digits (its midpoint's neighbourhood first). */
function shortestInside(s: Span): number {
  const lo = Number.isFinite(s.lo) ? s.lo : Math.min(s.hi, 0) - 1;
  const hi = Number.isFinite(s.hi) ? s.hi : Math.max(lo, 0) + 1;
  const mid = lo + (hi - lo) / 2;
  for (let p = 1; p <= 17; p++) {
    const v = Number(mid.toPrecision(p));
    if (v >= s.lo && v <= s.hi) return v === 0 ? 0 : v;
  }
  return Number.isFinite(mid) && mid >= s.lo && mid <= s.hi ? mid : lo;
}
