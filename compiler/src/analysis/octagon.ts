/**
 * Octagons over the integers: conjunctions of `±x ± y <= c` and `±x <= c` (difference-bound constraints with unit
 * coefficients, Miné's octagon domain), decided by closure, exactly, on bigints. Variable i has two nodes, 2i for +x
 * and 2i + 1 for -x; entry m[a][b] bounds `V_b - V_a` (null: no bound). Emptiness is decided by the tight closure of
 * Bagnara, Hill and Zaffanella ("Weakly-relational shapes for numeric abstractions", 2009): shortest paths, then each
 * unary bound made even (integers), then strengthening; the octagon is empty exactly when the closure finds a negative
 * cycle or crossed unary bounds, and once closed every variable can take any whole number within its bounds with the
 * others still satisfiable, so a point is read off one variable at a time.
 */
export type Bound = bigint | null;

export interface OctagonTerm {
  /** The variable's index. */
  readonly index: number;
  readonly sign: 1 | -1;
}

const bar = (a: number): number => a ^ 1;
const node = (t: OctagonTerm): number => 2 * t.index + (t.sign > 0 ? 0 : 1);
const min = (a: Bound, b: Bound): Bound => (a === null ? b : b === null ? a : a < b ? a : b);
const plus = (a: Bound, b: Bound): Bound => (a === null || b === null ? null : a + b);
/** The largest even number not above `c`, halved: `floor(c / 2)`. */
const half = (c: bigint): bigint => (c >= 0n ? c / 2n : -((-c + 1n) / 2n));

export class Octagon {
  private readonly m: Bound[][];

  constructor(readonly size: number) {
    this.m = Array.from({ length: 2 * size }, (_, a) => Array.from({ length: 2 * size }, (_, b) => (a === b ? 0n : null)));
  }

  clone(): Octagon {
    const o = new Octagon(this.size);
    this.m.forEach((row, a) => row.forEach((v, b) => (o.m[a]![b] = v)));
    return o;
  }

  /** Adds `sum of sign * x <= bound` over one or two distinct variables. */
  add(terms: readonly OctagonTerm[], bound: bigint): void {
    if (terms.length === 1) {
      // `x <= c` is `V_x - V_-x <= 2c`.
      const p = node(terms[0]!);
      this.tighten(bar(p), p, 2n * bound);
      return;
    }
    const [p, q] = [node(terms[0]!), node(terms[1]!)];
    // `s1 x + s2 y = V_p - V_bar(q)`, and coherently `V_q - V_bar(p)`.
    this.tighten(bar(q), p, bound);
    this.tighten(bar(p), q, bound);
  }

  /** `lo <= x <= hi` for variable `index` (either end may be absent). */
  bound(index: number, lo: bigint | null, hi: bigint | null): void {
    if (hi !== null) this.add([{ index, sign: 1 }], hi);
    if (lo !== null) this.add([{ index, sign: -1 }], -lo);
  }

  private tighten(a: number, b: number, c: bigint): void {
    this.m[a]![b] = min(this.m[a]![b]!, c);
  }

  /** Tight closure; false when the octagon has no integer point. */
  close(): boolean {
    const n = 2 * this.size;
    const m = this.m;
    for (let k = 0; k < n; k++) {
      for (let a = 0; a < n; a++) {
        const ak = m[a]![k]!;
        if (ak === null) continue;
        for (let b = 0; b < n; b++) {
          const via = plus(ak, m[k]![b]!);
          if (via !== null && (m[a]![b] === null || via < m[a]![b]!)) m[a]![b] = via;
        }
      }
    }
    for (let a = 0; a < n; a++) if (m[a]![a]! < 0n) return false;
    for (let a = 0; a < n; a++) {
      const u = m[a]![bar(a)]!;
      if (u !== null) m[a]![bar(a)] = 2n * half(u);
    }
    for (let a = 0; a < n; a++) {
      const [u, v] = [m[a]![bar(a)]!, m[bar(a)]![a]!];
      if (u !== null && v !== null && u + v < 0n) return false;
    }
    for (let a = 0; a < n; a++) {
      for (let b = 0; b < n; b++) {
        const [u, v] = [m[a]![bar(a)]!, m[bar(b)]![b]!];
        if (u !== null && v !== null) m[a]![b] = min(m[a]![b]!, half(u + v));
      }
    }
    return true;
  }

  /** The bounds of variable `index` in a closed octagon: `lo <= x <= hi`, null where unbounded. */
  range(index: number): { lo: bigint | null; hi: bigint | null } {
    const [p, q] = [2 * index, 2 * index + 1];
    const hi = this.m[q]![p]!;
    const lo = this.m[p]![q]!;
    return { lo: lo === null ? null : -half(lo), hi: hi === null ? null : half(hi) };
  }
}
