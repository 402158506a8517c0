import { NumberSet } from "../analysis/number-set.js";
import { Octagon } from "../analysis/octagon.js";
import { boundNumber } from "../analysis/rational.js";
import { intersect, present, type SignalSet } from "../analysis/signal-set.js";
import type { Constraint } from "./constraint-tree.js";

/** A constraint `sum of sign * n <= bound` over two variables (relation.ts). */
export type Linear = Extract<Constraint, { kind: "linear" }>;

type States = Map<string, SignalSet>;

/**
 * The linear constraints of a box decided by octagon closure (octagon.ts) over its variables' values, bounded by each
 * variable's set: `narrow` closes over the sets' hulls, dropping absence (a linear constraint needs both present) and
 * cutting each set to the bounds the closure derives, or says the box is empty; `convex` splits a box into boxes whose
 * linear variables each take one span, each decided exactly; `point` reads a point off a closed one.
 */
function variablesOf(linear: readonly Linear[]): string[] {
  return [...new Set(linear.flatMap((c) => c.terms.map((t) => t.variable.id)))];
}

function octagonOf(states: ReadonlyMap<string, SignalSet>, linear: readonly Linear[], ids: readonly string[]): Octagon {
  const index = new Map(ids.map((id, i) => [id, i]));
  const o = new Octagon(ids.length);
  ids.forEach((id, i) => {
    const spans = (states.get(id)!.values as NumberSet).spans;
    const [lo, hi] = [spans[0]?.lo ?? 1, spans.at(-1)?.hi ?? 0];
    o.bound(i, Number.isFinite(lo) ? BigInt(lo) : null, Number.isFinite(hi) ? BigInt(hi) : null);
  });
  for (const c of linear)
    o.add(
      c.terms.map((t) => ({ index: index.get(t.variable.id)!, sign: t.sign })),
      c.bound,
    );
  return o;
}

/** Narrows `states` in place by the closure over the hulls; false when the linear constraints have no point in them. */
export function narrow(states: States, linear: readonly Linear[]): boolean {
  if (linear.length === 0) return true;
  const ids = variablesOf(linear);
  for (const id of ids) {
    const s = states.get(id)!;
    if (s.values.isEmpty()) return false;
    if (s.absent) states.set(id, present(s.values));
  }
  const o = octagonOf(states, linear, ids);
  if (!o.close()) return false;
  ids.forEach((id, i) => {
    const { lo, hi } = o.range(i);
    const cut = NumberSet.span(true, lo === null ? -Infinity : boundNumber(lo), hi === null ? Infinity : boundNumber(hi));
    states.set(id, intersect(states.get(id)!, present(cut)));
  });
  return ids.every((id) => !states.get(id)!.values.isEmpty());
}

/** The boxes of `states` in which each variable of a linear constraint takes one span of its set, and which are not empty. */
export function* convex(states: ReadonlyMap<string, SignalSet>, linear: readonly Linear[]): Generator<States> {
  const ids = variablesOf(linear);
  const choose = function* (at: number, chosen: States): Generator<States> {
    if (at === ids.length) {
      const narrowed = new Map(chosen);
      if (narrow(narrowed, linear)) yield narrowed;
      return;
    }
    const id = ids[at]!;
    for (const s of (chosen.get(id)!.values as NumberSet).spans) {
      yield* choose(at + 1, new Map(chosen).set(id, present(NumberSet.span(true, s.lo, s.hi))));
    }
  };
  yield* choose(0, new Map(states));
}

/**
 * A point of a box whose linear variables each take one span: one variable at a time, a value `choose` picks within the
 * bounds the closure leaves it, then fixed; by the closure's exactness the rest stay satisfiable.
 */
export function point(
  states: ReadonlyMap<string, SignalSet>,
  linear: readonly Linear[],
  choose: (id: string, values: NumberSet) => number,
): Map<string, number> {
  const ids = variablesOf(linear);
  const fixed = new Map(states);
  const out = new Map<string, number>();
  for (const id of ids) {
    const o = octagonOf(fixed, linear, ids);
    if (!o.close()) throw new Error("internal: a box the closure called non-empty has no point");
    const { lo, hi } = o.range(ids.indexOf(id));
    const within = (fixed.get(id)!.values as NumberSet).intersect(
      NumberSet.span(true, lo === null ? -Infinity : boundNumber(lo), hi === null ? Infinity : boundNumber(hi)),
    );
    const value = choose(id, within);
    out.set(id, value);
    fixed.set(id, present(NumberSet.points(true, [value])));
  }
  return out;
}
