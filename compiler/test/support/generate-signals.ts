/**
 * Seeded generator of signal sets for a compiled policy, for property tests: values per declared type and bounds,
 * around the literals the policy mentions (so comparisons are hit at their boundaries), optional signals sometimes
 * absent. A few timestamps the schema accepts but Date.parse reads differently (ODD_TIMESTAMPS) are mixed in; a
 * runtime may refuse them, so tests skip a set whose validation fails on one of them.
 */
import fc from "fast-check";
import { operandsOf, type Expr, type ListItem, type PolicyAst, type ScalarValue, type SignalDecl } from "../../src/syntax/ast.js";
import { isSemver, placesOf } from "@writ/runtime";
import { STRING_PATTERNS, timestampArb } from "./generate-policy.js";

/** Literals the policy mentions: values near them hit the boundaries of comparisons and equalities. */
function literalsOf(ast: PolicyAst): { numbers: number[]; strings: string[] } {
  const numbers = new Set<number>([0]);
  const strings = new Set<string>([""]);
  const add = (v: ScalarValue): void => {
    if (typeof v === "number") [v, -v, v + 1, v - 1, v + 0.5, v - 0.5].forEach((x) => numbers.add(x));
    else if (typeof v === "string") strings.add(v);
  };
  const items = (xs: readonly ListItem[]): void => xs.forEach((i) => i.kind === "scalar" && add(i.value));
  const visit = (e: Expr): void => {
    if (e.kind === "literal") add(e.value);
    if (e.kind === "in" && e.set.kind === "list") items(e.set.items);
    operandsOf(e).forEach(visit);
  };
  ast.rules.forEach((r) => visit(r.when));
  for (const c of ast.consts) {
    if (c.value.kind === "scalar") add(c.value.value);
    else items(c.value.items);
  }
  return { numbers: [...numbers], strings: [...strings] };
}

const ANY_CHARS = [..."abcXYZ019 _-./@:", "é", "\u0301", "😀", "𝒜", "中", "\u00a0", "\t", "\n", "\u200d", "\u05d0"];
const codePoints = (n: number) => fc.array(fc.constantFrom(...ANY_CHARS), { minLength: n, maxLength: n }).map((a) => a.join(""));

function pad(n: number, width = 2): string {
  return String(n).padStart(width, "0");
}

/** The same instant written with another offset, e.g. `...T00:00:00Z` as `...T01:00:00+01:00`. */
function withOffset(ms: number, offsetMinutes: number): string {
  const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 23);
  const abs = Math.abs(offsetMinutes);
  return `${local}${offsetMinutes < 0 ? "-" : "+"}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** Schema-valid timestamps Date.parse reads differently or not at all (a leap second; Feb 31). */
export const ODD_TIMESTAMPS = ["2016-12-31T23:59:60Z", "2025-02-31T00:00:00Z", "2025-03-03T00:00:00Z", "2024-02-29T12:00:00+14:00"];

function numberArb(s: SignalDecl, literals: readonly number[]): fc.Arbitrary<number> {
  const t = s.type;
  if (t.kind !== "number" && t.kind !== "integer" && t.kind !== "decimal") throw new Error("not a number signal");
  let lo = -Infinity;
  let loIncl = false;
  let hi = Infinity;
  let hiIncl = false;
  const lower = (v: number, incl: boolean) => {
    if (v > lo || (v === lo && !incl)) [lo, loIncl] = [v, incl];
  };
  const upper = (v: number, incl: boolean) => {
    if (v < hi || (v === hi && !incl)) [hi, hiIncl] = [v, incl];
  };
  for (const c of t.constraints) {
    if (c.kind === "range") {
      lower(c.min.value, true);
      upper(c.max.value, true);
    } else if (c.op === ">=" || c.op === ">") lower(c.value.value, c.op === ">=");
    else upper(c.value.value, c.op === "<=");
  }
  const integer = t.kind === "integer";
  const places = t.kind === "decimal" ? t.places.value : null;
  const ok = (v: number): boolean =>
    (v > lo || (loIncl && v === lo)) &&
    (v < hi || (hiIncl && v === hi)) &&
    (integer ? Number.isSafeInteger(v) : Number.isFinite(v)) &&
    (places === null || placesOf(v) <= places);
  if (places !== null) return decimalArb(lo, hi, places, literals, ok);
  // Signals are JSON numbers the strict parser accepts: no integer beyond ±(2^53 - 1).
  const extremes = integer
    ? [Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER]
    : [Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 52 - 0.5, Number.MIN_VALUE, 1e-300, -0];
  const candidates = [...literals, lo, hi, lo + 1, hi - 1, ...extremes].filter(ok);
  const min = Number.isFinite(lo) ? lo : Math.min(hi, 0) - 1e6;
  const max = Number.isFinite(hi) ? hi : Math.max(lo, 0) + 1e6;
  const base = integer
    ? fc.integer({
        min: Math.ceil(loIncl ? min : min + (Number.isInteger(min) ? 1 : 0)),
        max: Math.floor(hiIncl ? max : max - (Number.isInteger(max) ? 1 : 0)),
      })
    : fc.double({
        min,
        max,
        minExcluded: Number.isFinite(lo) && !loIncl,
        maxExcluded: Number.isFinite(hi) && !hiIncl,
        noNaN: true,
        noDefaultInfinity: true,
      });
  const safeBase = base.filter(ok);
  return candidates.length > 0
    ? fc.oneof({ weight: 2, arbitrary: safeBase }, { weight: 1, arbitrary: fc.constantFrom(...candidates) })
    : safeBase;
}

/** Values of a `decimal(S)` signal: at most S places, within its bounds, near the policy's literals. */
function decimalArb(lo: number, hi: number, places: number, literals: readonly number[], ok: (v: number) => boolean): fc.Arbitrary<number> {
  const scale = 10 ** places;
  // Bounds have at most `places` places, so scaled they are whole numbers but for the double's rounding.
  const min = Math.round((Number.isFinite(lo) ? lo : Math.min(hi, 0) - 1e6) * scale);
  const max = Math.round((Number.isFinite(hi) ? hi : Math.max(lo, 0) + 1e6) * scale);
  const base = fc.integer({ min, max: Math.max(min, max) }).map((u) => Number((u / scale).toFixed(places)));
  const near = literals.flatMap((l) => [l, l + 1 / scale, l - 1 / scale].map((v) => Number(v.toFixed(places)))).filter(ok);
  const candidates = [...near, lo, hi].filter(ok);
  const safe = base.filter(ok);
  return candidates.length > 0 ? fc.oneof({ weight: 2, arbitrary: safe }, { weight: 1, arbitrary: fc.constantFrom(...candidates) }) : safe;
}

function stringArb(s: SignalDecl, literals: readonly string[]): fc.Arbitrary<string> {
  const t = s.type;
  if (t.kind !== "string") throw new Error("not a string signal");
  let minLen = 0;
  let maxLen = Infinity;
  let pattern: string | null = null;
  let normalized = false;
  for (const c of t.constraints) {
    if (c.kind === "length") [minLen, maxLen] = [c.min.value, c.max.value];
    else if (c.kind === "matching") pattern = c.regex.pattern;
    else normalized = true;
  }
  const family = pattern === null ? null : STRING_PATTERNS.find((p) => p.source === pattern);
  if (family === undefined) throw new Error(`no value generator for /${pattern}/: update STRING_PATTERNS`);
  const re = pattern === null ? null : new RegExp(pattern, "u");
  const ok = (v: string) => {
    const n = [...v].length;
    return n >= minLen && n <= maxLen && (re === null || re.test(v)) && (!normalized || v === v.normalize("NFC"));
  };
  const from = Math.max(minLen, family?.minLen ?? 0);
  const to = Math.min(maxLen, family?.maxLen ?? Infinity, from + 12);
  if (from > to) throw new Error(`no value satisfies ${s.name.name}'s constraints`);
  const generated = fc.integer({ min: from, max: to }).chain((n) => (family ? family.value(n) : codePoints(n)));
  // NFC text only, for a `normalized` signal: a combining mark after a letter it composes with is refused.
  const base = normalized ? generated.filter((v) => v === v.normalize("NFC")) : generated;
  const near =
    literals.length > 0
      ? fc
          .tuple(fc.constantFrom(...literals), codePoints(1), fc.constantFrom(0, 1, 2))
          .map(([l, c, how]) => (how === 0 ? l : how === 1 ? l + c : c + l))
      : null;
  // A literal (or one character off) when it satisfies the declaration, a generated value otherwise.
  return near
    ? fc.oneof({ weight: 2, arbitrary: base }, { weight: 1, arbitrary: fc.tuple(near, base).map(([n, b]) => (ok(n) ? n : b)) })
    : base;
}

function timestampValueArb(literals: readonly string[]): fc.Arbitrary<string> {
  const instants = literals.map((l) => Date.parse(l)).filter((ms) => !Number.isNaN(ms));
  const alts: { weight: number; arbitrary: fc.Arbitrary<string> }[] = [{ weight: 4, arbitrary: timestampArb }];
  if (instants.length > 0) {
    alts.push({
      weight: 3,
      arbitrary: fc
        .tuple(fc.constantFrom(...instants), fc.constantFrom(0, 60, -300, 330, 840), fc.constantFrom(-1, 0, 0, 1000))
        .map(([ms, off, delta]) => withOffset(ms + delta, off)),
    });
    const exact = literals.filter((l) => !Number.isNaN(Date.parse(l)));
    if (exact.length > 0) alts.push({ weight: 2, arbitrary: fc.constantFrom(...exact) });
  }
  alts.push({ weight: 1, arbitrary: fc.constantFrom(...ODD_TIMESTAMPS) });
  return fc.oneof(...alts);
}

/** Versions around the policy's version literals: pre-releases, build metadata, neighbours of each number. */
export function semverArb(literals: readonly string[]): fc.Arbitrary<string> {
  const n = fc.oneof(fc.integer({ min: 0, max: 12 }), fc.constant(9007199254740991));
  const id = fc.oneof(fc.integer({ min: 0, max: 12 }).map(String), fc.constantFrom("alpha", "beta", "rc", "a-1", "RC", "x9"));
  const generated = fc
    .tuple(
      n,
      n,
      n,
      fc.option(fc.array(id, { minLength: 1, maxLength: 3 }), { freq: 2 }),
      fc.option(fc.constantFrom("b.1", "sha.5114f85"), { freq: 4 }),
    )
    .map(([a, b, c, pre, build]) => `${a}.${b}.${c}${pre ? `-${pre.join(".")}` : ""}${build ? `+${build}` : ""}`);
  return literals.length === 0
    ? generated
    : fc.oneof(
        generated,
        fc.constantFrom(...literals),
        fc.constantFrom(...literals).map((l) => (l.includes("+") ? l : `${l}+b.7`)),
      );
}

/** Addresses of both families, IPv4-mapped ones included, in several spellings. */
export const ipArb: fc.Arbitrary<string> = fc.oneof(
  fc.ipV4(),
  fc.ipV6().filter((a) => !a.includes("%")),
  fc.ipV4().map((a) => `::ffff:${a}`),
  fc.constantFrom("10.0.0.1", "10.255.255.255", "11.0.0.0", "2001:db8::1", "2001:DB8:0:0:0:0:0:1", "::", "::1"),
);

const ABSENT = Symbol("absent");

/** Signal sets for a policy: each declared signal by its type and bounds, near its literals, optional ones sometimes absent. */
export function signalsArb(ast: PolicyAst): fc.Arbitrary<Record<string, unknown>> {
  const { numbers, strings } = literalsOf(ast);
  const timestamps = strings.filter((v) => /^\d{4}-\d\d-\d\dT/.test(v));
  const entries = ast.signals.map((s): fc.Arbitrary<readonly [string, unknown]> => {
    let value: fc.Arbitrary<unknown>;
    switch (s.type.kind) {
      case "number":
      case "integer":
      case "decimal":
        value = numberArb(s, numbers);
        break;
      case "string":
        value = stringArb(s, strings);
        break;
      case "enum":
        value = fc.constantFrom(...s.type.values.map((v) => v.value));
        break;
      case "boolean":
        value = fc.boolean();
        break;
      case "timestamp":
        value = timestampValueArb(timestamps);
        break;
      case "semver":
        value = semverArb(strings.filter(isSemver));
        break;
      case "ip":
        value = ipArb;
        break;
    }
    const withAbsence = s.optional ? fc.oneof({ weight: 3, arbitrary: value }, { weight: 1, arbitrary: fc.constant(ABSENT) }) : value;
    return withAbsence.map((v) => [s.name.name, v] as const);
  });
  return fc.tuple(...entries).map((pairs) => Object.fromEntries(pairs.filter(([, v]) => v !== ABSENT)));
}
