import type { ScalarValue, SignalDecl } from "../syntax/ast.js";

/**
 * Abstract domains for the analyze phase. A `Term` is a conjunction of facts about signals; a condition is
 * a disjunction of terms (DNF). Every fact is an over-approximation that is exact for the atoms it models,
 * so "term B implies term A" is only ever claimed when it holds.
 */
export interface Interval {
  readonly lo: number;
  readonly loIncl: boolean;
  readonly hi: number;
  readonly hiIncl: boolean;
}

/** Values a scalar signal may take: a finite set (`allowed`), or anything but `excluded`. */
export interface ValueSet {
  readonly allowed: ReadonlySet<ScalarValue> | null;
  readonly excluded: ReadonlySet<ScalarValue>;
}

export interface Term {
  readonly intervals: ReadonlyMap<string, Interval>;
  readonly sets: ReadonlyMap<string, ValueSet>;
  /** Signals the term needs present: any comparison of a signal is true only when it is present. */
  readonly present: ReadonlySet<string>;
  readonly absent: ReadonlySet<string>;
  /** Atoms the analysis does not model, by structural key; `!key` is the negation of `key`. */
  readonly opaque: ReadonlySet<string>;
}

export const FULL: Interval = { lo: -Infinity, loIncl: false, hi: Infinity, hiIncl: false };
export const TRUE_TERM: Term = { intervals: new Map(), sets: new Map(), present: new Set(), absent: new Set(), opaque: new Set() };

export function intersectIntervals(a: Interval, b: Interval): Interval {
  const lo = a.lo > b.lo ? a : a.lo < b.lo ? b : { lo: a.lo, loIncl: a.loIncl && b.loIncl };
  const hi = a.hi < b.hi ? a : a.hi > b.hi ? b : { hi: a.hi, hiIncl: a.hiIncl && b.hiIncl };
  return { lo: lo.lo, loIncl: lo.loIncl, hi: hi.hi, hiIncl: hi.hiIncl };
}

/** Integer signals: an open bound moves to the next integer, so `x > 1` and `x >= 2` are the same set. */
export function tighten(i: Interval, integer: boolean): Interval {
  if (!integer) return i;
  const lo = Number.isFinite(i.lo) ? (Number.isInteger(i.lo) && !i.loIncl ? i.lo + 1 : Math.ceil(i.lo)) : i.lo;
  const hi = Number.isFinite(i.hi) ? (Number.isInteger(i.hi) && !i.hiIncl ? i.hi - 1 : Math.floor(i.hi)) : i.hi;
  return { lo, loIncl: Number.isFinite(lo), hi, hiIncl: Number.isFinite(hi) };
}

export function isEmptyInterval(i: Interval): boolean {
  return i.lo > i.hi || (i.lo === i.hi && !(i.loIncl && i.hiIncl));
}

export function intervalWithin(inner: Interval, outer: Interval): boolean {
  if (isEmptyInterval(inner)) return true;
  const loOk = inner.lo > outer.lo || (inner.lo === outer.lo && (outer.loIncl || !inner.loIncl));
  const hiOk = inner.hi < outer.hi || (inner.hi === outer.hi && (outer.hiIncl || !inner.hiIncl));
  return loOk && hiOk;
}

export function intersectSets(a: ValueSet, b: ValueSet): ValueSet {
  const allowed = a.allowed && b.allowed ? new Set([...a.allowed].filter((v) => b.allowed!.has(v))) : (a.allowed ?? b.allowed);
  return { allowed, excluded: new Set([...a.excluded, ...b.excluded]) };
}

export function isEmptySet(s: ValueSet): boolean {
  return s.allowed !== null && [...s.allowed].every((v) => s.excluded.has(v));
}

export function setWithin(inner: ValueSet, outer: ValueSet): boolean {
  const innerValues = inner.allowed ? [...inner.allowed].filter((v) => !inner.excluded.has(v)) : null;
  if (outer.allowed) {
    return innerValues !== null && innerValues.every((v) => outer.allowed!.has(v) && !outer.excluded.has(v));
  }
  if (innerValues) return innerValues.every((v) => !outer.excluded.has(v));
  return [...outer.excluded].every((v) => inner.excluded.has(v));
}

/** What the signals schema already guarantees about a signal once validated. */
export function declaredInterval(s: SignalDecl): Interval {
  let i = FULL;
  if (s.type.kind !== "number" && s.type.kind !== "integer" && s.type.kind !== "decimal") return i;
  for (const c of s.type.constraints) {
    if (c.kind === "range") i = intersectIntervals(i, { lo: c.min.value, loIncl: true, hi: c.max.value, hiIncl: true });
    else if (c.op === ">=" || c.op === ">") i = intersectIntervals(i, { ...FULL, lo: c.value.value, loIncl: c.op === ">=" });
    else i = intersectIntervals(i, { ...FULL, hi: c.value.value, hiIncl: c.op === "<=" });
  }
  return tighten(i, s.type.kind === "integer");
}

export function declaredSet(s: SignalDecl): ValueSet {
  if (s.type.kind === "enum") return { allowed: new Set(s.type.values.map((v) => v.value)), excluded: new Set() };
  if (s.type.kind === "boolean") return { allowed: new Set([true, false]), excluded: new Set() };
  return { allowed: null, excluded: new Set() };
}
