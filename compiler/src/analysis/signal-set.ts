import { ChoiceSet } from "./choice-set.js";
import { NumberSet } from "./number-set.js";
import { StringSet } from "./string-set.js";

/**
 * The states a signal may be in: absent, or present with one of `values`. The values are numbers (doubles, or whole
 * numbers for integers and timestamps in milliseconds), strings, or a choice among an enum's values or the booleans.
 */
export type Values = NumberSet | StringSet | ChoiceSet;

export interface SignalSet {
  readonly absent: boolean;
  readonly values: Values;
}

export function intersectValues(a: Values, b: Values): Values {
  if (a instanceof NumberSet && b instanceof NumberSet) return a.intersect(b);
  if (a instanceof StringSet && b instanceof StringSet) return a.intersect(b);
  if (a instanceof ChoiceSet && b instanceof ChoiceSet) return a.intersect(b);
  throw new Error("internal: values of two kinds intersected");
}

export function intersect(a: SignalSet, b: SignalSet): SignalSet {
  return { absent: a.absent && b.absent, values: intersectValues(a.values, b.values) };
}

/** Every state not in `s`. A string set must have one part (a language or lengths): see StringSet.complement. */
export function complement(s: SignalSet): SignalSet {
  return { absent: !s.absent, values: s.values.complement() };
}

export function isEmpty(s: SignalSet): boolean {
  return !s.absent && s.values.isEmpty();
}

/** Whether every state of `inner` is in `outer`, which must have a complement. */
export function within(inner: SignalSet, outer: SignalSet): boolean {
  return isEmpty(intersect(inner, complement(outer)));
}

/** Present with any value of `values`. */
export function present(values: Values): SignalSet {
  return { absent: false, values };
}

/** Only absent, for values of the kind of `like`. */
export function absentOnly(like: Values): SignalSet {
  return { absent: true, values: nothingLike(like) };
}

export function nothingLike(like: Values): Values {
  if (like instanceof NumberSet) return NumberSet.empty(like.whole);
  if (like instanceof ChoiceSet) return new ChoiceSet(like.universe, new Set());
  return StringSet.NONE;
}

export function everythingLike(like: Values): Values {
  if (like instanceof NumberSet) return NumberSet.span(like.whole, -Infinity, Infinity);
  if (like instanceof ChoiceSet) return ChoiceSet.all(like.universe);
  return StringSet.ALL;
}
