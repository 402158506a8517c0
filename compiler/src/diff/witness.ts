import type { IrExpr, Scalar } from "@writ/runtime";
import { ChoiceSet } from "../analysis/choice-set.js";
import { NumberSet, nextDown, nextUp } from "../analysis/number-set.js";
import type { SignalSet } from "../analysis/signal-set.js";
import { StringSet } from "../analysis/string-set.js";
import { irNodes } from "./ir-operands.js";
import type { Box } from "./search.js";
import { instantText } from "./signal-domain.js";
import type { Side, Variable } from "./space.js";

/** A signal's state in a witness: a value, or absent. */
export const ABSENT = Symbol("absent");
export type State = Scalar | typeof ABSENT;
export type Assignment = ReadonlyMap<string, State>;

/** The requests an assignment makes: each version gets the signals it declares. */
export function requestsOf(assignment: Assignment, variables: readonly Variable[]): Record<Side, Record<string, Scalar>> {
  const out: Record<Side, Record<string, Scalar>> = { old: {}, new: {} };
  for (const v of variables) {
    const state = assignment.get(v.id);
    if (state === undefined || state === ABSENT) continue;
    if (v.names.old !== null) out.old[v.names.old] = state;
    if (v.names.new !== null) out.new[v.names.new] = state;
  }
  return out;
}

/**
 * The states a search for a witness tries for each variable of `box`: first a readable value (absent where a variable
 * only one version reads may be absent, so the request suits both), then each set's edges and the constants the
 * opaque atoms mention.
 */
export function candidates(box: Box, variables: readonly Variable[]): Map<string, State[]> {
  const hints = hintsOf([...box.opaque.values()].map((o) => o.atom.expr));
  const out = new Map<string, State[]>();
  for (const v of variables) {
    const set = box.states.get(v.id)!;
    const values = valuesOf(v, set, hints);
    const oneSided = v.names.old === null || v.names.new === null;
    const states: State[] = set.absent && (oneSided || values.length === 0) ? [ABSENT, ...values] : [...values];
    if (set.absent && !states.includes(ABSENT)) states.push(ABSENT);
    out.set(v.id, states);
  }
  return out;
}

function valuesOf(v: Variable, set: SignalSet, hints: Hints): Scalar[] {
  const values = set.values;
  if (values instanceof ChoiceSet) return values.members();
  if (values instanceof StringSet) return values.samples(hints.strings);
  if (values instanceof NumberSet) {
    const numbers = values.samples(v.kind === "timestamp" ? hints.instants : hints.numbers);
    return v.kind === "timestamp" ? numbers.map(instantText) : numbers;
  }
  return [];
}

interface Hints {
  readonly numbers: number[];
  readonly instants: number[];
  readonly strings: string[];
}

/** Constants the expressions mention, and numbers next to them, where an opaque atom is likely to change value. */
function hintsOf(exprs: readonly IrExpr[]): Hints {
  const numbers = new Set<number>();
  const instants = new Set<number>();
  const strings = new Set<string>();
  const literal = (value: Scalar): void => {
    if (typeof value === "number") {
      for (const n of [value, -value, value + 1, value - 1, nextUp(value), nextDown(value), value / 2, value * 2]) numbers.add(n);
    } else if (typeof value === "string") {
      strings.add(value);
      const ms = Date.parse(value);
      if (!Number.isNaN(ms)) [ms, ms - 1, ms + 1].forEach((t) => instants.add(t));
    }
  };
  for (const node of exprs.flatMap(irNodes)) {
    if (node.op === "lit") literal(node.value);
    else if (node.op === "in") node.set.forEach(literal);
  }
  return { numbers: [...numbers], instants: [...instants], strings: [...strings] };
}

/** A small deterministic generator (mulberry32), so a diff reports the same witnesses every run. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
