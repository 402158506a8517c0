import type { IrExpr, Scalar } from "@writ/runtime";
import { ChoiceSet } from "../analysis/choice-set.js";
import { NumberSet, nextDown, nextUp } from "../analysis/number-set.js";
import type { SignalSet } from "../analysis/signal-set.js";
import { StringSet } from "../analysis/string-set.js";
import { irNodes } from "./ir-operands.js";
import type { Box } from "./search.js";
import { Rational } from "../analysis/rational.js";
import { point } from "./closure.js";
import { linearComparison } from "./linear.js";
import { unitsOfValue, valueOfUnits, type NumberDomain } from "./number-domain.js";
import { MAX_NUMBER, instantText } from "./signal-domain.js";
import type { Side, Variable } from "./space.js";

/** A signal's state in a witness: a value, or absent. */
export const ABSENT = Symbol("absent");
export type State = Scalar | typeof ABSENT;
export type Assignment = ReadonlyMap<string, State>;

/**
 * The requests an assignment makes: each version gets the signals it declares (a timestamp read by calendar fields
 * holds the instant calendar-link.ts chose for its minute-of-the-week variable's state).
 */
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
 * opaque atoms mention, and `instants` (where the versions' zone tables differ).
 */
export function candidates(box: Box, variables: readonly Variable[], instants: readonly number[] = []): Map<string, State[]> {
  const found = hintsOf(hintSources(box, variables));
  const hints = { ...found, instants: [...found.instants, ...instants] };
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
    if (v.kind === "timestamp") return values.samples(hints.instants).map(instantText);
    const held = hints.numbers.flatMap((h) => unitsOfValue(v.numbers, h) ?? []);
    return values.samples(held).map((n) => valueOfUnits(v.numbers, n));
  }
  return [];
}

interface Hints {
  readonly numbers: number[];
  readonly instants: number[];
  readonly strings: string[];
}

/** Constants the expressions mention, and numbers next to them, where an opaque atom is likely to change value. */
/**
 * The expressions whose constants hint at values: the opaque atoms', and each arithmetic term's with the values the
 * box leaves it (`x * y` that must be 1 hints 1, and so 0.5 and 2).
 */
function hintSources(box: Box, variables: readonly Variable[]): IrExpr[] {
  const out = [...box.opaque.values()].map((o) => o.atom.expr);
  for (const v of variables) {
    const set = box.states.get(v.id)?.values;
    if (v.term === undefined || !(set instanceof NumberSet)) continue;
    const ends = set.spans.flatMap((s) => [s.lo, s.hi]).filter((n) => Number.isFinite(n) && Math.abs(n) < MAX_NUMBER);
    out.push(v.term, ...ends.map((value): IrExpr => ({ op: "lit", value })));
  }
  return out;
}

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

/**
 * The witness `assignment` as it reads best: each number, in turn, replaced by the most readable value its signal
 * accepts that `decides` still accepts (whole numbers, short decimals and round numbers near its value and its spans'
 * ends, the constants `box`'s atoms mention), so a search's `5e-324` becomes `1` or `0.01` wherever that is decided
 * the same. Each replacement is run through `decides` (both versions' validators and evaluators), so the witness
 * stays one.
 */
export function simplify(
  assignment: Assignment,
  box: Box,
  variables: readonly Variable[],
  decides: (a: Assignment) => boolean,
): Assignment {
  const hints = hintsOf(hintSources(box, variables)).numbers;
  const out = new Map(assignment);
  // Again while a pass changes something (`x / y > 0` frees `x` only once `y` is no longer tiny), a few passes at most.
  for (let pass = 0, changed = true; changed && pass < 4; pass++) {
    changed = false;
    for (const v of variables) {
      const current = out.get(v.id);
      const set = v.universe.values;
      if (
        typeof current !== "number" ||
        v.kind !== "number" ||
        v.term !== undefined ||
        v.calendar !== undefined ||
        !(set instanceof NumberSet)
      )
        continue;
      for (const candidate of readableNear(acceptedBy(set, v.numbers), current, hints)) {
        out.set(v.id, candidate);
        if (decides(out)) {
          changed = true;
          break;
        }
        out.set(v.id, current);
      }
    }
  }
  return out;
}

/** How a number reads in a witness: the length of its text, and an exponent worst of all. Lower reads better. */
export function readability(n: number): number {
  const text = String(n);
  return text.length + (text.includes("e") ? 100 : 0);
}

/** Whole numbers, then one, two and three decimals. */
const STEPS = [1, 0.1, 0.01, 0.001];
/** 1, 2 and 5 times the powers of ten from 0.001 to 10^15, either sign. */
const ROUND = [-3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15].flatMap((k) =>
  [1, 2, 5].flatMap((m) => [Number(`${m}e${k}`), -Number(`${m}e${k}`)]),
);

/** The values a variable's set accepts, as signals carry them: a membership test, its spans' ends, and its pick. */
interface Accepted {
  has(v: number): boolean;
  readonly ends: readonly number[];
  readonly pick: number | undefined;
}

function acceptedBy(set: NumberSet, numbers: NumberDomain): Accepted {
  const value = (n: number): number => valueOfUnits(numbers, n);
  const pick = set.pick();
  return {
    has: (v) => {
      const held = unitsOfValue(numbers, v);
      return held !== null && set.has(held);
    },
    ends: set.spans.flatMap((s) => [s.lo, s.hi].map((n) => (Number.isFinite(n) ? value(n) : n))),
    pick: pick === undefined ? undefined : value(pick),
  };
}

/** Values of `set` that read better than `current`, best first (nearest `current` among equals). */
function readableNear(set: Accepted, current: number, hints: readonly number[]): number[] {
  const found = new Set<number>([...ROUND, 0, ...hints]);
  const multiples = (x: number): void => {
    if (!Number.isFinite(x)) return;
    for (const [decimals, step] of STEPS.entries()) {
      found.add(Number((Math.ceil(x / step) * step).toFixed(decimals)));
      found.add(Number((Math.floor(x / step) * step).toFixed(decimals)));
    }
  };
  // Near the value itself, which a search found at or next to a boundary.
  multiples(current);
  for (let p = 1; p <= 3; p++) found.add(Number(current.toPrecision(p)));
  // Near the ends of the spans: where `x > 0` puts `5e-324`, these put 0.001 to 1.
  set.ends.forEach(multiples);
  if (set.pick !== undefined) found.add(set.pick);
  const limit = readability(current);
  return [...found]
    .map((n) => (n === 0 ? 0 : n))
    .filter((n) => Number.isFinite(n) && set.has(n) && readability(n) < limit)
    .sort((a, b) => readability(a) - readability(b) || Math.abs(a - current) - Math.abs(b - current) || a - b);
}

/**
 * Values for the variables of the box's linear constraints that satisfy them (closure.ts): the most readable value
 * each can take once the ones before it are fixed on the first try, random ones within its bounds after.
 */
export function linearPoint(box: Box, variables: readonly Variable[], first: boolean, next: () => number): Map<string, State> {
  const byId = new Map(variables.map((v) => [v.id, v]));
  const chosen = point(box.states, box.linear, (_, values) => (first ? values.pick()! : randomIn(values, next)));
  return new Map(
    [...chosen].map(([id, n]) => {
      const v = byId.get(id)!;
      return [id, v.kind === "timestamp" ? instantText(n) : valueOfUnits(v.numbers, n)];
    }),
  );
}

/** A whole number of the set: one of its samples (ends, neighbours, pick) half the time, else anywhere in a span. */
function randomIn(set: NumberSet, next: () => number): number {
  const samples = set.samples();
  if (next() < 0.5) return samples[Math.floor(next() * samples.length)]!;
  const s = set.spans[Math.floor(next() * set.spans.length)]!;
  return s.lo + Math.floor(next() * (s.hi - s.lo + 1));
}

/**
 * Aims `assignment` at what the box needs of sums of `number` signals, which IEEE-754 rounds: for each term variable
 * (SignalSpace.termVariable), at the value the assignment gives it; for each opaque atom comparing sums, at its
 * boundary. One signal of the sum, chosen at random, is set where the exact sum would meet the target given the
 * others, or beside it (the doubles either side, the whole numbers either side); the witness is still checked by
 * evaluating both versions.
 */
export function aimAtBoundary(assignment: Map<string, State>, box: Box, variables: readonly Variable[], next: () => number): void {
  const targets: { readonly expr: IrExpr; readonly side: Side }[] = [...box.opaque.values()].map(({ atom }) => atom);
  for (const v of variables) {
    const value = assignment.get(v.id);
    // A term reads its signals by the names of the version it was first read in: either side finds them.
    if (v.term !== undefined && typeof value === "number")
      targets.push({ expr: { op: "cmp", cmp: "eq", kind: "number", left: v.term, right: { op: "lit", value } }, side: "new" });
  }
  for (const { expr, side } of targets) aim(expr, side, assignment, box, variables, next);
}

function aim(expr: IrExpr, side: Side, assignment: Map<string, State>, box: Box, variables: readonly Variable[], next: () => number): void {
  const comparison = linearComparison(expr, () => "other", true);
  if (comparison === null) return;
  const terms = [...comparison.form.coefficients].flatMap(([name, c]) => {
    const v = variables.find((x) => x.names[side] === name) ?? variables.find((x) => x.names[side === "new" ? "old" : "new"] === name);
    return v && v.kind === "number" ? [{ v, c }] : [];
  });
  if (terms.length !== comparison.form.coefficients.size || terms.length < 2) return;
  const target = terms[Math.floor(next() * terms.length)]!;
  const others = terms.filter((t) => t.v !== target.v);
  const values = others.map(({ v }) => assignment.get(v.id));
  if (!values.every((x): x is number => typeof x === "number")) return;
  const rest = others.reduce((sum, { c }, i) => sum.add(c.mul(Rational.fromDouble(values[i]!))), comparison.form.constant);
  const y = Number(rest.neg().div(target.c).toDecimal());
  const options = [y, nextUp(y), nextDown(y), Math.floor(y), Math.ceil(y), Math.floor(y) - 1, Math.ceil(y) + 1];
  const choice = options[Math.floor(next() * options.length)]!;
  const set = box.states.get(target.v.id)!.values;
  const held = unitsOfValue(target.v.numbers, choice);
  if (Number.isFinite(choice) && held !== null && set instanceof NumberSet && set.has(held)) assignment.set(target.v.id, choice);
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
