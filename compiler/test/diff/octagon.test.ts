/**
 * The octagon closure `writ diff` decides relations between two signals with, against enumeration: on random
 * conjunctions of `±x ± y <= c` and bounds over small boxes of integers, the tight closure finds a conjunction empty
 * exactly when no integer point satisfies it, and the point read off one variable at a time satisfies every
 * constraint; the bounds it derives for each variable are exactly the least and greatest values it takes.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Octagon, type OctagonTerm } from "../../src/analysis/octagon.js";

const SIZE = 3;
const BOX = 4;

interface Row {
  readonly terms: readonly OctagonTerm[];
  readonly bound: bigint;
}

const term = (index: number, sign: 1 | -1): OctagonTerm => ({ index, sign });
const row: fc.Arbitrary<Row> = fc.oneof(
  fc.tuple(fc.nat(SIZE - 1), fc.constantFrom<1 | -1>(1, -1), fc.integer({ min: -6, max: 6 })).map(([i, s, c]) => ({
    terms: [term(i, s)],
    bound: BigInt(c),
  })),
  fc
    .tuple(
      fc.nat(SIZE - 1),
      fc.nat(SIZE - 2),
      fc.constantFrom<1 | -1>(1, -1),
      fc.constantFrom<1 | -1>(1, -1),
      fc.integer({ min: -8, max: 8 }),
    )
    .map(([i, j0, s, t, c]) => {
      const j = j0 >= i ? j0 + 1 : j0;
      return { terms: [term(i, s), term(j, t)], bound: BigInt(c) };
    }),
);

const holds = (point: readonly number[], r: Row): boolean =>
  BigInt(r.terms.reduce((sum, t) => sum + t.sign * point[t.index]!, 0)) <= r.bound;

function* points(): Generator<number[]> {
  const total = (2 * BOX + 1) ** SIZE;
  for (let k = 0; k < total; k++) {
    const p: number[] = [];
    let rest = k;
    for (let i = 0; i < SIZE; i++) {
      p.push((rest % (2 * BOX + 1)) - BOX);
      rest = Math.floor(rest / (2 * BOX + 1));
    }
    yield p;
  }
}

function octagonOf(rows: readonly Row[]): Octagon {
  const o = new Octagon(SIZE);
  for (let i = 0; i < SIZE; i++) o.bound(i, BigInt(-BOX), BigInt(BOX));
  for (const r of rows) o.add(r.terms, r.bound);
  return o;
}

describe("octagon closure over the integers", () => {
  it("is empty exactly when no integer point satisfies the constraints; else its bounds are exact and a point is read off", () => {
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 7 }), (rows) => {
        const solutions = [...points()].filter((p) => rows.every((r) => holds(p, r)));
        const o = octagonOf(rows);
        expect(o.close()).toBe(solutions.length > 0);
        if (solutions.length === 0) return;
        for (let i = 0; i < SIZE; i++) {
          const values = solutions.map((p) => p[i]!);
          expect(o.range(i)).toEqual({ lo: BigInt(Math.min(...values)), hi: BigInt(Math.max(...values)) });
        }
        // One variable at a time, any value within the bounds the closure leaves keeps the rest satisfiable.
        const fixed = octagonOf(rows);
        const point: number[] = [];
        for (let i = 0; i < SIZE; i++) {
          expect(fixed.close()).toBe(true);
          const { lo, hi } = fixed.range(i);
          const v = Number(hi! - lo!) % 2 === 0 ? Number(lo!) : Number(hi!);
          point.push(v);
          fixed.bound(i, BigInt(v), BigInt(v));
        }
        expect(rows.every((r) => holds(point, r))).toBe(true);
      }),
      { numRuns: 3000, seed: 39 },
    );
  });
});
