import {
  MAX_DECISION_INSTANT,
  MAX_INSTANT,
  MIN_DECISION_INSTANT,
  MIN_INSTANT,
  instantText as runtimeInstantText,
  type IrSignal,
  type Scalar,
} from "@writ/runtime";
import { ChoiceSet } from "../analysis/choice-set.js";
import { Language } from "../analysis/language.js";
import { NumberSet, nextDown, nextUp } from "../analysis/number-set.js";
import { intersectValues, present, type SignalSet } from "../analysis/signal-set.js";
import { StringSet } from "../analysis/string-set.js";
import {
  DOUBLES,
  INTEGERS,
  commonNumberDomain,
  convertSet,
  inUnits,
  unitsOfValue,
  valueOfUnits,
  type NumberDomain,
} from "./number-domain.js";

/** One property of a bundle's signals schema (docs/language.md "Signals schema"), as the compiler emits it. */
export interface SchemaProperty {
  readonly type?: string;
  readonly enum?: readonly string[];
  readonly pattern?: string;
  readonly format?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly exclusiveMaximum?: number;
}

export interface SignalsSchema {
  readonly properties: Readonly<Record<string, SchemaProperty>>;
  readonly required: readonly string[];
}

/**
 * How `writ diff` represents a signal's values: numbers (timestamps as whole milliseconds), strings, a choice, or a
 * choice among the pieces of an ordered domain (`ip`, `semver`: ordered-domain.ts).
 */
export type DomainKind = "number" | "timestamp" | "string" | "choice" | "ip" | "semver";

/** What one policy's schema accepts for one signal, exactly, or with the part it could not model named. */
export interface SignalDomain {
  readonly kind: DomainKind;
  readonly accepted: SignalSet;
  /** How its numbers are held (number-domain.ts); DOUBLES where it has none. */
  readonly numbers: NumberDomain;
  /** The signal as declared, in the language's syntax: `amount: number > 0 <= 1000000`. */
  readonly declaration: string;
  /** Why `accepted` may hold values the schema refuses (a pattern the string domain does not model); else null. */
  readonly unmodelled: string | null;
}

/**
 * The decision instant (`now`) as `writ diff` reads it: one more timestamp, never absent, the same for both versions (one
 * request is decided at one instant), its instants those a clock gives (time.ts `decisionInstant`: years 0000 to 9999 in
 * UTC). Its variable's name is one no signal can have.
 */
export const NOW_VARIABLE = "$now";
export const NOW_DOMAIN: SignalDomain = {
  kind: "timestamp",
  accepted: { absent: false, values: NumberSet.span(true, MIN_DECISION_INSTANT, MAX_DECISION_INSTANT) },
  numbers: INTEGERS,
  declaration: "now: timestamp",
  unmodelled: null,
};

/** The largest magnitude a signal's number may have: the strict JSON parser refuses larger ones. */
export const MAX_NUMBER = Number.MAX_SAFE_INTEGER;
/** Decimals of up to 15 significant digits each have a double of their own: units below this are all accepted. */
const DISTINCT_UNITS = 1e15;

export function signalDomain(name: string, signal: IrSignal, property: SchemaProperty, required: boolean): SignalDomain {
  const head = `${name}${required ? "" : "?"}: `;
  const absent = !required;
  switch (signal.type) {
    case "boolean":
      return {
        kind: "choice",
        accepted: { absent, values: ChoiceSet.all([true, false]) },
        numbers: DOUBLES,
        declaration: `${head}boolean`,
        unmodelled: null,
      };
    case "enum": {
      const values = property.enum ?? [];
      return {
        kind: "choice",
        accepted: { absent, values: ChoiceSet.all(values) },
        numbers: DOUBLES,
        declaration: `${head}${values.map((v) => JSON.stringify(v)).join(" | ")}`,
        unmodelled: null,
      };
    }
    case "timestamp":
      return {
        kind: "timestamp",
        accepted: { absent, values: NumberSet.span(true, MIN_INSTANT, MAX_INSTANT) },
        numbers: INTEGERS,
        declaration: `${head}timestamp`,
        unmodelled: null,
      };
    case "number":
    case "integer":
    case "decimal": {
      const numbers: NumberDomain =
        signal.type === "integer" ? INTEGERS : signal.type === "decimal" ? { whole: true, scale: signal.scale ?? 0 } : DOUBLES;
      let lo = -MAX_NUMBER;
      let hi = MAX_NUMBER;
      const bounds: string[] = [];
      if (property.minimum !== undefined) [lo, bounds[0]] = [Math.max(lo, property.minimum), `>= ${property.minimum}`];
      if (property.exclusiveMinimum !== undefined)
        [lo, bounds[0]] = [Math.max(lo, nextUp(property.exclusiveMinimum)), `> ${property.exclusiveMinimum}`];
      if (property.maximum !== undefined) [hi, bounds[1]] = [Math.min(hi, property.maximum), `<= ${property.maximum}`];
      if (property.exclusiveMaximum !== undefined)
        [hi, bounds[1]] = [Math.min(hi, nextDown(property.exclusiveMaximum)), `< ${property.exclusiveMaximum}`];
      const range =
        property.minimum !== undefined && property.maximum !== undefined
          ? [`${property.minimum}..${property.maximum}`]
          : bounds.filter(Boolean);
      const declaration = [`${head}${signal.type === "decimal" ? `decimal(${signal.scale ?? 0})` : signal.type}`, ...range].join(" ");
      const values = convertSet(NumberSet.span(false, lo, hi), DOUBLES, numbers).intersect(
        NumberSet.span(numbers.whole, -MAX_NUMBER, MAX_NUMBER),
      );
      // A decimal of more than 15 significant digits may share its double with another, and is then refused (VAL-012):
      // past 10^15 units the set holds values the schema refuses.
      const past = inUnits(numbers) && values.spans.some((s) => Math.abs(s.lo) >= DISTINCT_UNITS || Math.abs(s.hi) >= DISTINCT_UNITS);
      return {
        kind: "number",
        accepted: { absent, values },
        numbers,
        declaration,
        unmodelled: past ? `the values of \`${name}\` past 15 significant digits, which VAL-012 refuses in part` : null,
      };
    }
    case "string": {
      let values = new StringSet(Language.JSON_STRINGS, null);
      let unmodelled: string | null = null;
      const parts = [`${head}string`];
      if (property.pattern !== undefined) {
        parts.push(`matching /${property.pattern}/`);
        const language = Language.search(property.pattern);
        if (language instanceof Language) values = values.intersect(new StringSet(language, null));
        else unmodelled = `the pattern /${property.pattern}/ of \`${name}\`: ${language.unsupported}`;
      }
      if (property.minLength !== undefined || property.maxLength !== undefined) {
        const min = property.minLength ?? 0;
        const max = property.maxLength ?? Infinity;
        parts.push(`length ${min}..${max}`);
        values = values.intersect(StringSet.ofLengths(NumberSet.span(true, min, max)));
      }
      return { kind: "string", accepted: { absent, values }, numbers: DOUBLES, declaration: parts.join(" "), unmodelled };
    }
  }
}

/**
 * The states both schemas accept, when the two declarations are of kinds that share values (numbers with integers
 * and decimals, strings with enums), with how its numbers are held; null when they share none.
 */
export function commonDomain(a: SignalDomain, b: SignalDomain): { kind: DomainKind; accepted: SignalSet; numbers: NumberDomain } | null {
  const absent = a.accepted.absent && b.accepted.absent;
  const [x, y] = [a.accepted.values, b.accepted.values];
  let common: { kind: DomainKind; accepted: SignalSet; numbers: NumberDomain } | null = null;
  if (x instanceof NumberSet && y instanceof NumberSet && a.kind === b.kind) {
    const numbers = commonNumberDomain(a.numbers, b.numbers);
    const values = convertSet(x, a.numbers, numbers).intersect(convertSet(y, b.numbers, numbers));
    common = { kind: a.kind, accepted: { absent, values }, numbers };
  } else if (a.kind === b.kind && a.kind !== "choice")
    common = { kind: a.kind, accepted: { absent, values: intersectValues(x, y) }, numbers: a.numbers };
  else if (x instanceof ChoiceSet && y instanceof ChoiceSet)
    common = { kind: "choice", accepted: { absent, values: choiceOf(x, (v) => y.values.has(v)) }, numbers: DOUBLES };
  else if (x instanceof ChoiceSet && y instanceof StringSet)
    common = { kind: "choice", accepted: { absent, values: choiceOf(x, (v) => typeof v === "string" && y.has(v)) }, numbers: DOUBLES };
  else if (x instanceof StringSet && y instanceof ChoiceSet)
    common = { kind: "choice", accepted: { absent, values: choiceOf(y, (v) => typeof v === "string" && x.has(v)) }, numbers: DOUBLES };
  if (common === null || (!common.accepted.absent && common.accepted.values.isEmpty())) return null;
  return common;
}

/** The values of `c` that `keep` keeps, as a choice among them alone. */
function choiceOf(c: ChoiceSet, keep: (v: Scalar) => boolean): ChoiceSet {
  return ChoiceSet.all(c.members().filter(keep));
}

/** A state `a` accepts and `b` does not, or null when `b` accepts every state `a` does. */
export function acceptedOnlyBy(a: SignalDomain, b: SignalDomain): { absent: true } | { value: Scalar } | null {
  if (a.accepted.absent && !b.accepted.absent) return { absent: true };
  const value = valueOnlyIn(a, b);
  return value === null ? null : { value };
}

function valueOnlyIn(a: SignalDomain, b: SignalDomain): Scalar | null {
  const [x, y] = [a.accepted.values, b.accepted.values];
  if (x instanceof ChoiceSet) {
    return (
      x
        .members()
        .find((v) => (y instanceof ChoiceSet ? !y.values.has(v) : !(y instanceof StringSet && typeof v === "string" && y.has(v)))) ?? null
    );
  }
  if (a.kind !== b.kind) return witnessValue(a.kind, present(x), a.numbers);
  if (x instanceof NumberSet && y instanceof NumberSet) {
    if (a.numbers.whole === b.numbers.whole && a.numbers.scale === b.numbers.scale)
      return witnessValue(a.kind, present(x.intersect(y.complement())), a.numbers);
    // Held differently (a number and a decimal): a value of `a`'s at its spans' ends and beside them that `b` refuses.
    const refused = x
      .samples()
      .map((n) => valueOfUnits(a.numbers, n))
      .find((v) => {
        const held = unitsOfValue(b.numbers, v);
        return held === null || !y.has(held);
      });
    return refused ?? null;
  }
  if (x instanceof StringSet && y instanceof StringSet) {
    // A string `b` refuses breaks its pattern or its lengths: one piece each, since b's set has both parts.
    const pieces = [new StringSet(y.language, null), new StringSet(null, y.lengths)].filter(
      (p) => p.language !== null || p.lengths !== null,
    );
    for (const piece of pieces) {
      const member = x.intersect(piece.complement()).member();
      if (member !== null) return member;
    }
  }
  return null;
}

/**
 * A readable present value of `s`, as a signal would carry it (a timestamp as RFC 3339, a decimal as its number), or
 * null if it has none.
 */
export function witnessValue(kind: DomainKind, s: SignalSet, numbers: NumberDomain): Scalar | null {
  const v = s.values;
  if (v instanceof ChoiceSet) return v.members()[0] ?? null;
  if (v instanceof StringSet) return v.member();
  const n = v.pick();
  if (n === undefined) return null;
  return kind === "timestamp" ? instantText(n) : valueOfUnits(numbers, n);
}

/** An instant (ms) of a timestamp signal's domain as an RFC 3339 timestamp the schema accepts (time.ts in the runtime). */
export function instantText(ms: number): string {
  const text = ms >= MIN_INSTANT && ms <= MAX_INSTANT ? runtimeInstantText(ms) : null;
  if (text === null) throw new Error(`instant ${ms} is outside the timestamps' domain`);
  return text;
}
