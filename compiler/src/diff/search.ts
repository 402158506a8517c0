import type { NumberSet } from "../analysis/number-set.js";
import { intersect, isEmpty, within, type SignalSet } from "../analysis/signal-set.js";
import { convex, narrow, type Linear } from "./closure.js";
import { all, any, type Constraint } from "./constraint-tree.js";
import type { OpaqueAtom } from "./opaque-atom.js";
import type { Variable } from "./space.js";
import { EVERY, type Mask } from "./truth.js";

/**
 * A box of the signal space: for each variable the states it may take, for each opaque atom the truth values it may
 * have, and linear constraints relating pairs of variables (relation.ts). Every box `regions` yields is non-empty and
 * satisfies the constraint on all of its points that satisfy its linear constraints (each of their variables then
 * takes one span, so octagon closure decides them exactly: closure.ts), as far as the variables go; the opaque atoms'
 * values are what a concrete point must still be found to give them.
 */
export interface Box {
  readonly states: ReadonlyMap<string, SignalSet>;
  readonly opaque: ReadonlyMap<string, { readonly atom: OpaqueAtom; readonly allowed: Mask }>;
  readonly linear: readonly Linear[];
}

/** The search visited more boxes than its bound: the region is left undecided. */
export class SearchLimitError extends Error {}

const ALL = 2;
const SOME = 1;
const NONE = 0;

export class Search {
  private visited = 0;

  constructor(private readonly maxVisits: number) {}

  /** The boxes, together covering every point of `variables`' space that satisfies `goal`; none when it is empty. */
  *regions(goal: Constraint, variables: readonly Variable[]): Generator<Box> {
    const box: Box = { states: new Map(variables.map((v) => [v.id, v.universe])), opaque: new Map(), linear: [] };
    yield* this.solve([goal], box);
  }

  private *solve(pending: readonly Constraint[], from: Box): Generator<Box> {
    if (++this.visited > this.maxVisits) throw new SearchLimitError(`the search visited more than ${this.maxVisits} boxes`);
    const states = new Map(from.states);
    const opaque = new Map(from.opaque);
    const linear = [...from.linear];
    const box: Box = { states, opaque, linear };
    const queue = [...pending];
    let choices: Constraint[] = [];
    for (;;) {
      // Narrow the box by every constraint that does not branch.
      while (queue.length > 0) {
        const c = queue.pop()!;
        switch (c.kind) {
          case "true":
            break;
          case "false":
            return;
          case "states": {
            const next = intersect(states.get(c.variable.id)!, c.allowed);
            if (isEmpty(next)) return;
            states.set(c.variable.id, next);
            break;
          }
          case "opaque": {
            const allowed = (opaque.get(c.atom.key)?.allowed ?? EVERY) & c.allowed;
            if (allowed === 0) return;
            opaque.set(c.atom.key, { atom: c.atom, allowed });
            break;
          }
          case "linear":
            linear.push(c);
            break;
          case "all":
            queue.push(...c.items);
            break;
          case "any":
            choices.push(c);
        }
      }
      if (!narrow(states, linear)) return;
      // Drop the alternatives the box rules out, and the disjunctions it satisfies; one left is a constraint.
      const open: Constraint[] = [];
      for (const choice of choices) {
        const items = choice.kind === "any" ? choice.items : [choice];
        const alive = items.filter((i) => status(i, box) !== NONE);
        if (alive.length === 0) return;
        if (alive.some((i) => status(i, box) === ALL)) continue;
        if (alive.length === 1) queue.push(alive[0]!);
        else open.push(any(alive));
      }
      choices = open;
      if (queue.length === 0) break;
    }
    if (choices.length === 0) {
      for (const narrowed of convex(states, linear)) yield { states: narrowed, opaque, linear };
      return;
    }
    choices.sort((a, b) => width(a) - width(b));
    const [first, ...rest] = choices;
    for (const alternative of first!.kind === "any" ? first!.items : [first!]) yield* this.solve([alternative, all(rest)], box);
  }
}

function width(c: Constraint): number {
  return c.kind === "any" ? c.items.length : 1;
}

/** Whether `c` holds on all of `box`, on none of it, or on some (which may still be none). */
function status(c: Constraint, box: Box): number {
  switch (c.kind) {
    case "true":
      return ALL;
    case "false":
      return NONE;
    case "states": {
      const current = box.states.get(c.variable.id)!;
      if (isEmpty(intersect(current, c.allowed))) return NONE;
      return within(current, c.allowed) ? ALL : SOME;
    }
    case "opaque": {
      const current = box.opaque.get(c.atom.key)?.allowed ?? EVERY;
      if ((current & c.allowed) === 0) return NONE;
      return (current & ~c.allowed) === 0 ? ALL : SOME;
    }
    case "linear":
      return linearStatus(c, box);
    case "all": {
      let result = ALL;
      for (const i of c.items) {
        const s = status(i, box);
        if (s === NONE) return NONE;
        result = Math.min(result, s);
      }
      return result;
    }
    case "any": {
      let result = NONE;
      for (const i of c.items) {
        const s = status(i, box);
        if (s === ALL) return ALL;
        result = Math.max(result, s);
      }
      return result;
    }
  }
}

/** Whether `sum <= bound` holds on all of the box's hull, none of it, or some. */
function linearStatus(c: Linear, box: Box): number {
  let [lo, hi]: [bigint | null, bigint | null] = [0n, 0n];
  let absent = false;
  for (const t of c.terms) {
    const s = box.states.get(t.variable.id)!;
    const spans = (s.values as NumberSet).spans;
    if (spans.length === 0) return NONE;
    absent ||= s.absent;
    const [a, b] = [whole(spans[0]!.lo), whole(spans.at(-1)!.hi)];
    const [least, most] = t.sign > 0 ? [a, b] : [b === null ? null : -b, a === null ? null : -a];
    lo = lo === null || least === null ? null : lo + least;
    hi = hi === null || most === null ? null : hi + most;
  }
  if (lo !== null && lo > c.bound) return NONE;
  return !absent && hi !== null && hi <= c.bound ? ALL : SOME;
}

/** A span's end as a bigint; null when infinite. */
function whole(n: number): bigint | null {
  return Number.isFinite(n) ? BigInt(n) : null;
}
