/**
 * Seeded generator of random, VALID writ policy sources, for property tests and the compiler benchmark.
 *
 * Validity is by construction: every expression is generated for the type it must have (number, string,
 * enum, boolean, timestamp), enum comparisons only ever use values of that enum, timestamp comparisons only
 * RFC 3339 literals, `in NAME` only list constants, integer bounds only safe integers, and so on.
 * The sources exercise every signal type and constraint, scalar and list constants, and/or/not, all
 * comparison operators, `in [list]`, `in CONST`, `not in`, `in a..b`, the string operators, `matches`,
 * arithmetic, `len()`, `present()`, comments, escapes in strings, CRLF line endings and an optional
 * `otherwise`. Warnings (unused signals, shadowed rules, constant conditions) are expected and fine.
 *
 *   policySource(options)             fast-check arbitrary of source text
 *   policyModel(options)              the same, with the signals and constants it was built from
 *   generatePolicy({ seed, rules })   one deterministic source (the benchmark uses `rules: 1000`)
 */
import fc from "fast-check";

// ---------------------------------------------------------------------------------------------------------
// Public model

export interface PolicyOptions {
  /** Exact number of rules, or a range. Default 1..8. */
  readonly rules?: number | { readonly min: number; readonly max: number };
  /** Number of signals, or a range. Default grows with the rule count (3..8 for small policies). */
  readonly signals?: number | { readonly min: number; readonly max: number };
  /** Always (true) or never (false) end with `otherwise`; random when omitted. */
  readonly otherwise?: boolean;
  /**
   * Realistic mode, for benchmarks: no constant conditions (`true`, literal-vs-literal, `x not in []`), number
   * literals inside the compared signal's declared bounds, enums of two or more values, so no rule is
   * always true and a long policy is not cut short. Default: on when the policy may have 100 rules or more.
   */
  readonly realistic?: boolean;
  /**
   * Only atoms that compare one signal with constants (`x < 5`, `tier in ["a"]`, `at >= "2025-...Z"`, `present(x)`,
   * a boolean signal) or two enums or booleans with each other: no arithmetic, `len()`, string operators, `matches`
   * or other comparisons between signals. Whether such a condition holds is decided by where each signal lies among
   * the constants, so a grid of the constants, their neighbours and every enum value meets every region `writ diff`
   * can report (its brute-force test). Default off.
   */
  readonly exactAtoms?: boolean;
  /**
   * Also `%`, `abs`, `min` and `max` in arithmetic, `semver` and `ip` signals with their comparisons and `in_cidr`,
   * and calendar fields of timestamps in a zone. Default off, so the policies of tools that do not model them yet (`writ diff`, W606) are the ones they
   * were; the evaluation, explanation and formatting properties turn it on.
   */
  readonly remainderAndBounds?: boolean;
  /** Also `now`, the decision instant, among the timestamp operands. Default off, as `remainderAndBounds`. */
  readonly now?: boolean;
}

export interface Bound {
  readonly value: number;
  readonly inclusive: boolean;
}

export type SignalSpec = { readonly name: string; readonly optional: boolean } & (
  | { readonly kind: "number" | "integer"; readonly lo: Bound | null; readonly hi: Bound | null; readonly constraintText: string }
  | {
      readonly kind: "decimal";
      /** S of `decimal(S)`. */
      readonly places: number;
      readonly lo: Bound | null;
      readonly hi: Bound | null;
      readonly constraintText: string;
    }
  | {
      readonly kind: "string";
      readonly pattern: StringPattern | null;
      readonly length: readonly [number, number] | null;
      /** `normalized`: values are NFC. */
      readonly normalized: boolean;
      readonly constraintText: string;
    }
  | { readonly kind: "enum"; readonly values: readonly string[]; readonly constraintText: string }
  | { readonly kind: "boolean" | "timestamp" | "semver" | "ip"; readonly constraintText: string }
);

export type ConstSpec =
  | { readonly name: string; readonly kind: "number"; readonly value: number; readonly text: string }
  | { readonly name: string; readonly kind: "string"; readonly value: string; readonly text: string }
  | { readonly name: string; readonly kind: "boolean"; readonly value: boolean; readonly text: string }
  | {
      readonly name: string;
      readonly kind: "list";
      /** Type of the items; "empty" for `[]`. */
      readonly elem: "number" | "string" | "boolean" | "empty";
      /** Item values after resolving references to scalar constants. */
      readonly values: readonly (string | number | boolean)[];
      readonly text: string;
    };

export interface RuleSpec {
  readonly name: string;
  /** The condition's source text. */
  readonly when: string;
  readonly verdict: "approve" | "escalate" | "reject";
  /** The reason as a string literal (quoted, escaped). */
  readonly reason: string;
}

export interface PolicyModel {
  readonly source: string;
  readonly signals: readonly SignalSpec[];
  readonly consts: readonly ConstSpec[];
  readonly ruleCount: number;
  readonly hasOtherwise: boolean;
  /** The parts `source` was written from, for renderPolicy (which lays them out plainly). */
  readonly header: { readonly policyId: string; readonly version: string; readonly action: string; readonly binding: readonly string[] };
  readonly rules: readonly RuleSpec[];
  readonly otherwise: { readonly verdict: RuleSpec["verdict"]; readonly reason: string } | null;
}

/**
 * Regular expressions the generator uses in `matching /.../` constraints. Each knows which lengths (in code
 * points) it can match and how to build a matching value of a given length, so a signal-value generator
 * can satisfy `matching` and `length a..b` together. `maxLen` Infinity means unbounded.
 */
export interface StringPattern {
  /** The pattern as written between the slashes (and as it appears in the AST and the schema). */
  readonly source: string;
  readonly minLen: number;
  readonly maxLen: number;
  /** A value of exactly `length` code points that matches; `length` is within [minLen, maxLen]. */
  readonly value: (length: number) => fc.Arbitrary<string>;
}

// ---------------------------------------------------------------------------------------------------------
// Small helpers

const LOWER = "abcdefghijklmnopqrstuvwxyz";
const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS = "0123456789";
/** Code points that are letters (\p{L}), including astral ones that take two UTF-16 units. */
const LETTERS_UNICODE = ["a", "z", "Q", "é", "ß", "Ж", "λ", "中", "日", "𝒜", "𐐀", "ǅ"];
/** Anything but line terminators; astral, combining, zero-width and RTL code points included. */
const ANY_CHARS = [..."aZ09 _-./:#\"'\\", "é", "e\u0301".slice(1), "\u200d", "\u05d0", "😀", "𝒜", "\u00a0", "\t", "中", "\u{10ffff}"];

const chars = (alphabet: readonly string[] | string): fc.Arbitrary<string> => fc.constantFrom(...[...alphabet]);

function codePoints(alphabet: readonly string[] | string, length: number): fc.Arbitrary<string> {
  return fc.array(chars(alphabet), { minLength: length, maxLength: length }).map((a) => a.join(""));
}

/** fc.oneof over weighted alternatives, skipping absent ones (null), e.g. atoms that need a kind of signal. */
function weighted<T>(...alts: (readonly [number, fc.Arbitrary<T>] | null)[]): fc.Arbitrary<T> {
  const present = alts.filter((a): a is readonly [number, fc.Arbitrary<T>] => a !== null && a[0] > 0);
  if (present.length === 0) throw new Error("weighted(): no alternative available");
  return fc.oneof(...present.map(([weight, arbitrary]) => ({ weight, arbitrary })));
}

const when = <T>(cond: boolean, weight: number, arb: () => fc.Arbitrary<T>): readonly [number, fc.Arbitrary<T>] | null =>
  cond ? [weight, arb()] : null;

/**
 * A writ string literal for `value`. `style` picks among equivalent spellings: bit 0 escapes every non-ASCII
 * code unit as `\uXXXX` (surrogate pairs as two escapes), bit 1 escapes `/` as `\/`.
 */
export function encodeString(value: string, style = 0): string {
  let out = '"';
  for (const c of value) {
    const code = c.codePointAt(0)!;
    if (c === '"') out += '\\"';
    else if (c === "\\") out += "\\\\";
    else if (c === "/" && style & 2) out += "\\/";
    else if (c === "\n") out += "\\n";
    else if (c === "\r") out += "\\r";
    else if (c === "\t") out += style & 1 ? "\\u0009" : "\\t";
    else if (c === "\b") out += "\\b";
    else if (c === "\f") out += "\\f";
    else if (code < 0x20) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else if (code > 0x7e && style & 1) {
      for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, "0").toUpperCase()}`;
    } else out += c;
  }
  return `${out}"`;
}

const stringLit = (value: string): fc.Arbitrary<string> =>
  fc
    .oneof({ weight: 6, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }) })
    .map((s) => encodeString(value, s));

/** Source text of a non-negative number that reads back as `value` (exponent forms included). */
function numberText(value: number): string {
  return String(value); // e.g. "12", "0.5", "1e+21", "5e-7": all NumberLiteral spellings
}

const numberLiteralText: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: 0, max: 100 }).map(String) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 1_000_000 }).map(String) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "0",
      "1",
      "0.5",
      "2.5",
      "99.99",
      "1e3",
      "2.5E-2",
      "1e+2",
      "007",
      "0.1",
      "1e-7",
      "3.0",
      "9007199254740991",
      "4503599627370495.5",
      "0.000001",
    ),
  },
  { weight: 1, arbitrary: fc.double({ min: 0, max: 1e6, noNaN: true, noDefaultInfinity: true }).map(numberText) },
);

/** A literal beside a decimal: cents and other places, up to 6, some of them at a decimal's edge of exactness. */
const decimalLiteralText: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.tuple(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: 6 })).map(([u, p]) => (u / 10 ** p).toFixed(p)),
  },
  { weight: 1, arbitrary: fc.constantFrom("0.1", "0.2", "0.3", "1000.30", "0.29", "100", "9007199254740991", "0.000001") },
);

/** A signed literal where the grammar takes `signedNumber` (bounds, constants, list items). */
const signedNumberText = (value: number): string => (value < 0 || Object.is(value, -0) ? `-${numberText(-value)}` : numberText(value));

// ---------------------------------------------------------------------------------------------------------
// Timestamps

/** A duration literal: mostly short, sometimes long enough that an instant computed with it leaves ECMAScript's dates. */
export const durationArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fc.nat({ max: 100_000 }), fc.constantFrom("ms", "s", "m", "h", "d")).map(([n, u]) => `${n}${u}`) },
  { weight: 1, arbitrary: fc.integer({ min: 90_000_000, max: 104_249_991 }).map((n) => `${n}d`) },
);

/** An RFC 3339 timestamp with a mandatory offset, any fraction length, `Z` or `±hh:mm`. Always Date.parse-able. */
export const timestampArb: fc.Arbitrary<string> = fc
  .record({
    ms: fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2099, 11, 31) }),
    round: fc.constantFrom(1, 1000, 60_000, 86_400_000),
    offset: fc.constantFrom(0, 0, 0, 60, -300, 330, 345, -720, 840, -59),
    zulu: fc.constantFrom("Z", "+00:00", "-00:00"),
    fraction: fc.oneof({ weight: 3, arbitrary: fc.constant("") }, { weight: 1, arbitrary: fc.stringMatching(/^\.\d{1,9}$/) }),
  })
  .map(({ ms, round, offset, zulu, fraction }) => {
    const t = ms - (ms % round);
    const local = new Date(t + offset * 60_000).toISOString().slice(0, 19); // YYYY-MM-DDTHH:MM:SS
    const sign = offset < 0 ? "-" : "+";
    const abs = Math.abs(offset);
    const off = offset === 0 ? zulu : `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
    return `${local}${fraction}${off}`;
  });

// ---------------------------------------------------------------------------------------------------------
// Regular expressions

const UNBOUNDED = Number.POSITIVE_INFINITY;

export const STRING_PATTERNS: readonly StringPattern[] = [
  { source: "^[A-Z]{2}$", minLen: 2, maxLen: 2, value: (n) => codePoints(UPPER, n) },
  { source: "^[a-z]+$", minLen: 1, maxLen: UNBOUNDED, value: (n) => codePoints(LOWER, n) },
  { source: "^[a-z0-9_-]*$", minLen: 0, maxLen: UNBOUNDED, value: (n) => codePoints(`${LOWER}${DIGITS}_-`, n) },
  {
    source: "^\\d{3}-\\d{4}$",
    minLen: 8,
    maxLen: 8,
    value: () => fc.tuple(codePoints(DIGITS, 3), codePoints(DIGITS, 4)).map(([a, b]) => `${a}-${b}`),
  },
  { source: "^[\\p{L} ]+$", minLen: 1, maxLen: UNBOUNDED, value: (n) => codePoints([...LETTERS_UNICODE, " "], n) },
  {
    source: "[0-9]",
    minLen: 1,
    maxLen: UNBOUNDED,
    value: (n) =>
      fc.tuple(codePoints(ANY_CHARS, n - 1), chars(DIGITS), fc.nat()).map(([rest, d, at]) => {
        const cps = [...rest];
        cps.splice(at % (cps.length + 1), 0, d);
        return cps.join("");
      }),
  },
  {
    source: "^(?:foo|bar)\\.[a-z]{1,5}$",
    minLen: 5,
    maxLen: 9,
    value: (n) => fc.tuple(fc.constantFrom("foo", "bar"), codePoints(LOWER, n - 4)).map(([p, s]) => `${p}.${s}`),
  },
  { source: "^.{0,10}$", minLen: 0, maxLen: 10, value: (n) => codePoints(ANY_CHARS, n) },
  { source: "^a\\/b", minLen: 3, maxLen: UNBOUNDED, value: (n) => codePoints(ANY_CHARS, n - 3).map((s) => `a/b${s}`) },
  { source: "^\\S+@\\S+\\.[a-z]{2,}$", minLen: 6, maxLen: UNBOUNDED, value: (n) => emailOfLength(n) },
];

function emailOfLength(n: number): fc.Arbitrary<string> {
  // local@host.tld with local, host >= 1 and tld >= 2: n >= 6
  return fc.record({ a: fc.nat(), b: fc.nat() }).chain(({ a, b }) => {
    const room = n - 6; // spread extra characters over local, host and tld
    const extraLocal = room === 0 ? 0 : a % (room + 1);
    const extraHost = room - extraLocal === 0 ? 0 : b % (room - extraLocal + 1);
    const extraTld = room - extraLocal - extraHost;
    return fc
      .tuple(codePoints(`${LOWER}${DIGITS}.+`, 1 + extraLocal), codePoints(`${LOWER}-`, 1 + extraHost), codePoints(LOWER, 2 + extraTld))
      .map(([l, h, t]) => `${l}@${h}.${t}`);
  });
}

/** Patterns for `matches /.../` in conditions: values need not match, so anything valid with the `u` flag but E310. */
const MATCH_PATTERNS: readonly string[] = [
  ...STRING_PATTERNS.map((p) => p.source),
  "^$",
  "(?:ab)+",
  "^[A-Z]",
  "\\d$",
  "^\\p{Lu}",
  "é",
  "^.{3}$",
  "[\\u{1F600}-\\u{1F64F}]",
  '^[^"\\\\]*$',
  "foo|bar",
  "\\bx\\b",
  "(?<word>[a-z]+)-(?![0-9])",
];

// ---------------------------------------------------------------------------------------------------------
// Names

const SIGNAL_WORDS = [
  "amount",
  "currency",
  "risk_score",
  "country",
  "kyc_verified",
  "tier",
  "region",
  "attempts",
  "created_at",
  "expires_at",
  "email",
  "account",
  "channel",
  "balance",
  "limit_used",
  "age",
  "device",
  "ip_country",
  "merchant",
  "category",
  "is_admin",
  "mfa",
  "fee",
  "quantity",
  "price",
  "discount",
  "user_name",
  "role",
  "plan",
  "seats",
  "latency_ms",
  "error_rate",
  "env",
  "team",
  "owner",
  "approved_at",
  "ticket",
  "priority",
];
const CONST_WORDS = [
  "SANCTIONED",
  "LIMIT",
  "MAX_FEE",
  "REGIONS",
  "BLOCKED",
  "THRESHOLD",
  "CUTOFF",
  "ALLOWED",
  "VIP",
  "RATE",
  "HOLIDAYS",
  "TIERS",
  "STRICT",
  "CODES",
  "MIN_AGE",
  "PREFIX",
  "DOMAIN",
  "LAUNCH",
];
const RULE_WORDS = [
  "sanctioned",
  "risky",
  "large",
  "verified",
  "blocked",
  "small",
  "trusted",
  "expired",
  "weekend",
  "vip",
  "fraud",
  "manual_review",
  "fast_path",
  "new_user",
  "admin",
  "deny_list",
  "allow_list",
  "legacy",
  "limit",
];
const ENUM_POOL = [
  "USD",
  "EUR",
  "GBP",
  "JPY",
  "low",
  "medium",
  "high",
  "critical",
  "gold",
  "silver",
  "bronze",
  "web",
  "ios",
  "android",
  "a b",
  "é",
  "日本",
  'with "quote"',
  "x/y",
  "back\\slash",
  "tab\there",
  "",
  "😀",
];
const REASONS = [
  "destination is sanctioned",
  "risk too high",
  "large transfer needs a human",
  "verified customer within limits",
  "customer not verified",
  "outside business hours",
  "needs a second approver",
  "plan does not allow this",
  "Überweisung geprüft",
  "金額が大きすぎます",
  "emoji 🚫 blocked",
  'quoted "reason" with \\ backslash',
  "multi\nline\treason",
  "path a/b/c",
];

// ---------------------------------------------------------------------------------------------------------
// Signals

function numberSignal(name: string, optional: boolean, kind: "number" | "integer", realistic: boolean): fc.Arbitrary<SignalSpec> {
  const value =
    kind === "integer"
      ? fc.integer({ min: -1000, max: 100_000 })
      : fc.oneof(
          fc.integer({ min: -1000, max: 100_000 }),
          fc.double({ min: -1000, max: 100_000, noNaN: true, noDefaultInfinity: true }).map((d) => Math.round(d * 100) / 100),
        );
  return boundedSignal(value, realistic).map(({ lo, hi, text }) => ({
    name,
    optional,
    kind,
    lo,
    hi,
    constraintText: text ? `${kind} ${text}` : kind,
  }));
}

/** `decimal(S)`, S from 0 to 4, with bounds of at most S places. */
function decimalSignal(name: string, optional: boolean, realistic: boolean): fc.Arbitrary<SignalSpec> {
  return fc.integer({ min: 0, max: 4 }).chain((places) =>
    boundedSignal(
      fc.integer({ min: -100_000, max: 10_000_000 }).map((units) => units / 10 ** places),
      realistic,
      places,
    ).map(({ lo, hi, text }): SignalSpec => {
      const type = `decimal(${places})`;
      return { name, optional, kind: "decimal", places, lo, hi, constraintText: text ? `${type} ${text}` : type };
    }),
  );
}

/** Bounds of a number-like signal as a declaration writes them; `places`: the upper bound is rounded to that many. */
function boundedSignal(
  value: fc.Arbitrary<number>,
  realistic: boolean,
  places?: number,
): fc.Arbitrary<{ lo: Bound | null; hi: Bound | null; text: string }> {
  const shape = realistic
    ? fc.constantFrom("none", "lower", "upper", "both", "range", "range")
    : fc.constantFrom("none", "lower", "upper", "both", "range", "range", "point");
  return fc
    .record({
      shape,
      a: value,
      gap: fc.integer({ min: realistic ? 4 : 2, max: 10_000 }),
      loIncl: fc.boolean(),
      hiIncl: fc.boolean(),
      upperFirst: fc.boolean(),
    })
    .map(({ shape, a, gap, loIncl, hiIncl, upperFirst }) => {
      const b = places === undefined ? a + gap : Number((a + gap).toFixed(places));
      let lo: Bound | null = null;
      let hi: Bound | null = null;
      let text = "";
      const lower = (): string => `${loIncl ? ">=" : ">"} ${signedNumberText(a)}`;
      const upper = (): string => `${hiIncl ? "<=" : "<"} ${signedNumberText(b)}`;
      switch (shape) {
        case "lower":
          lo = { value: a, inclusive: loIncl };
          text = lower();
          break;
        case "upper":
          hi = { value: b, inclusive: hiIncl };
          text = upper();
          break;
        case "both":
          lo = { value: a, inclusive: loIncl };
          hi = { value: b, inclusive: hiIncl };
          text = upperFirst ? `${upper()} ${lower()}` : `${lower()} ${upper()}`;
          break;
        case "range":
          lo = { value: a, inclusive: true };
          hi = { value: b, inclusive: true };
          text = `${signedNumberText(a)}..${signedNumberText(b)}`;
          break;
        case "point":
          lo = { value: a, inclusive: true };
          hi = { value: a, inclusive: true };
          text = `${signedNumberText(a)} .. ${signedNumberText(a)}`;
          break;
      }
      return { lo, hi, text };
    });
}

function stringSignal(name: string, optional: boolean): fc.Arbitrary<SignalSpec> {
  return fc
    .record({
      pattern: fc.option(fc.constantFrom(...STRING_PATTERNS), { freq: 2 }),
      withLength: fc.boolean(),
      pick: fc.nat(),
      below: fc.integer({ min: 0, max: 5 }),
      above: fc.integer({ min: 0, max: 20 }),
      lengthFirst: fc.boolean(),
      normalized: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    })
    .map(({ pattern, withLength, pick, below, above, lengthFirst, normalized }) => {
      let length: [number, number] | null = null;
      if (withLength) {
        // A length range that overlaps what the pattern can match, so some value satisfies both.
        const pmin = pattern?.minLen ?? 0;
        const pmax = Math.min(pattern?.maxLen ?? 40, pmin + 10);
        const anchor = pmin + (pick % (pmax - pmin + 1));
        length = [Math.max(0, anchor - below), anchor + above];
      }
      const parts: string[] = [];
      if (pattern) parts.push(`matching /${pattern.source}/`);
      if (length) parts.push(`length ${length[0]}..${length[1]}`);
      if (lengthFirst) parts.reverse();
      if (normalized) parts.splice(lengthFirst ? 0 : parts.length, 0, "normalized");
      return { name, optional, kind: "string" as const, pattern, length, normalized, constraintText: ["string", ...parts].join(" ") };
    });
}

function enumSignal(name: string, optional: boolean, realistic: boolean): fc.Arbitrary<SignalSpec> {
  return fc
    .uniqueArray(fc.constantFrom(...ENUM_POOL), { minLength: realistic ? 2 : 1, maxLength: 5 })
    .chain((values) =>
      fc
        .tuple(fc.tuple(...values.map((v) => stringLit(v))), fc.constantFrom(" | ", "|", " |\n    "))
        .map(([lits, sep]): SignalSpec => ({ name, optional, kind: "enum", values, constraintText: lits.join(sep) })),
    );
}

function signalSpec(name: string, realistic: boolean, lexical = false): fc.Arbitrary<SignalSpec> {
  const optionalArb = fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) });
  const versionsAndAddresses = (optional: boolean) =>
    lexical
      ? (["semver", "ip"] as const).map((kind) => ({
          weight: 2,
          arbitrary: fc.constant<SignalSpec>({ name, optional, kind, constraintText: kind }),
        }))
      : [];
  return optionalArb.chain((optional) => {
    return fc.oneof(
      ...versionsAndAddresses(optional),
      { weight: 3, arbitrary: numberSignal(name, optional, "number", realistic) },
      { weight: 3, arbitrary: numberSignal(name, optional, "integer", realistic) },
      { weight: 2, arbitrary: decimalSignal(name, optional, realistic) },
      { weight: 3, arbitrary: stringSignal(name, optional) },
      { weight: 2, arbitrary: enumSignal(name, optional, realistic) },
      { weight: 2, arbitrary: fc.constant<SignalSpec>({ name, optional, kind: "boolean", constraintText: "boolean" }) },
      { weight: 2, arbitrary: fc.constant<SignalSpec>({ name, optional, kind: "timestamp", constraintText: "timestamp" }) },
    );
  });
}

// ---------------------------------------------------------------------------------------------------------
// Constants

function constSpecs(signals: readonly SignalSpec[], count: number, realistic: boolean): fc.Arbitrary<ConstSpec[]> {
  const enums = signals.flatMap((s) => (s.kind === "enum" ? [s.values] : []));
  const names: string[] = [];
  for (let i = 0; i < count; i++) names.push(`${CONST_WORDS[i % CONST_WORDS.length]!}${i >= CONST_WORDS.length ? `_${i}` : ""}`);

  const scalar = (name: string): fc.Arbitrary<ConstSpec> =>
    weighted<ConstSpec>(
      [
        3,
        fc.tuple(fc.integer({ min: -1000, max: 1_000_000 }), fc.boolean()).map(([v, frac]) => {
          const value = frac ? v / 4 : v;
          return { name, kind: "number", value, text: signedNumberText(value) };
        }),
      ],
      [
        2,
        fc
          .constantFrom("KP", "IR", "SY", "admin", "example.com", "pre_", "", "é/😀")
          .chain((value) => stringLit(value).map((text): ConstSpec => ({ name, kind: "string", value, text }))),
      ],
      [2, timestampArb.chain((value) => stringLit(value).map((text): ConstSpec => ({ name, kind: "string", value, text })))],
      when(enums.length > 0, 3, () =>
        fc
          .constantFrom(...enums)
          .chain((vs) => fc.constantFrom(...vs))
          .chain((value) => stringLit(value).map((text): ConstSpec => ({ name, kind: "string", value, text }))),
      ),
      [1, fc.boolean().map((value): ConstSpec => ({ name, kind: "boolean", value, text: String(value) }))],
    );

  /** A list whose items are literals or references to earlier scalar constants of the same type. */
  const list = (name: string, earlier: readonly ConstSpec[]): fc.Arbitrary<ConstSpec> => {
    const refsOf = (kind: "number" | "string" | "boolean", accept: (v: string | number | boolean) => boolean) =>
      earlier.filter((c) => c.kind === kind && accept(c.value)) as Extract<ConstSpec, { kind: "number" | "string" | "boolean" }>[];
    type Item = { readonly value: string | number | boolean; readonly text: string };
    const build = (
      elem: "number" | "string" | "boolean",
      item: fc.Arbitrary<Item>,
      refs: readonly Extract<ConstSpec, { value: unknown }>[],
    ) =>
      fc
        .array(
          refs.length > 0
            ? fc.oneof(
                { weight: 4, arbitrary: item },
                { weight: 1, arbitrary: fc.constantFrom(...refs).map((r) => ({ value: r.value, text: r.name })) },
              )
            : item,
          {
            minLength: 1,
            maxLength: 6,
          },
        )
        .map((items): ConstSpec => ({
          name,
          kind: "list",
          elem,
          values: items.map((i) => i.value),
          text: `[${items.map((i) => i.text).join(", ")}]`,
        }));
    const numberItem = fc.integer({ min: -50, max: 100_000 }).map((v): Item => ({ value: v, text: signedNumberText(v) }));
    const stringItem = (values: readonly string[]) =>
      fc.constantFrom(...values).chain((v) => stringLit(v).map((text): Item => ({ value: v, text })));
    return weighted<ConstSpec>(
      [
        3,
        build(
          "number",
          numberItem,
          refsOf("number", () => true),
        ),
      ],
      [
        2,
        build(
          "string",
          stringItem(["KP", "IR", "SY", "CU", "admin", "root", "é", ""]),
          refsOf("string", (v) => !isTimestampText(v)),
        ),
      ],
      [
        2,
        build(
          "string",
          timestampArb.chain((v) => stringLit(v).map((text): Item => ({ value: v, text }))),
          refsOf("string", isTimestampText),
        ),
      ],
      when(enums.length > 0, 3, () =>
        fc.constantFrom(...enums).chain((vs) =>
          build(
            "string",
            stringItem(realistic ? vs.slice(1) : vs),
            refsOf("string", (v) => (realistic ? vs.slice(1) : vs).includes(v as string)),
          ),
        ),
      ),
      when(!realistic, 1, () =>
        build(
          "boolean",
          fc.boolean().map((v): Item => ({ value: v, text: String(v) })),
          refsOf("boolean", () => true),
        ),
      ),
      when(!realistic, 1, () => fc.constant<ConstSpec>({ name, kind: "list", elem: "empty", values: [], text: "[]" })),
    );
  };

  // Scalars first, then lists that may refer to them.
  return fc.array(fc.boolean(), { minLength: count, maxLength: count }).chain((isList) => {
    const scalarNames = names.filter((_, i) => !isList[i]);
    const listNames = names.filter((_, i) => isList[i]);
    return fc
      .tuple(...scalarNames.map(scalar))
      .chain((scalars) => fc.tuple(...listNames.map((n) => list(n, scalars))).map((lists) => [...scalars, ...lists]));
  });
}

const TIMESTAMP_RE =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/u;
function isTimestampText(v: string | number | boolean): boolean {
  return typeof v === "string" && TIMESTAMP_RE.test(v) && !Number.isNaN(Date.parse(v));
}

// ---------------------------------------------------------------------------------------------------------
// Expressions, generated per type

type NumSig = Extract<SignalSpec, { kind: "number" | "integer" }>;
type DecSig = Extract<SignalSpec, { kind: "decimal" }>;
type EnumSig = Extract<SignalSpec, { kind: "enum" }>;
type StrConst = Extract<ConstSpec, { kind: "string" }>;
type ListConst = Extract<ConstSpec, { kind: "list" }>;

class Exprs {
  private readonly nums: NumSig[];
  private readonly decs: DecSig[];
  private readonly strs: SignalSpec[];
  private readonly enums: EnumSig[];
  private readonly bools: SignalSpec[];
  private readonly times: SignalSpec[];
  private readonly optionals: SignalSpec[];
  private readonly numConsts: ConstSpec[];
  private readonly strConsts: StrConst[];
  private readonly boolConsts: ConstSpec[];
  private readonly tsConsts: StrConst[];
  private readonly lists: ListConst[];

  readonly condition: fc.Arbitrary<string>;

  constructor(
    private readonly signals: readonly SignalSpec[],
    consts: readonly ConstSpec[],
    private readonly realistic: boolean,
    private readonly exactAtoms = false,
    private readonly remainderAndBounds = false,
    private readonly now = false,
  ) {
    this.nums = signals.filter((s): s is NumSig => s.kind === "number" || s.kind === "integer");
    this.decs = signals.filter((s): s is DecSig => s.kind === "decimal");
    this.strs = signals.filter((s) => s.kind === "string");
    this.enums = signals.filter((s): s is EnumSig => s.kind === "enum");
    this.bools = signals.filter((s) => s.kind === "boolean");
    this.times = signals.filter((s) => s.kind === "timestamp");
    this.optionals = signals.filter((s) => s.optional);
    this.numConsts = consts.filter((c) => c.kind === "number");
    this.strConsts = consts.filter((c): c is StrConst => c.kind === "string");
    this.boolConsts = consts.filter((c) => c.kind === "boolean");
    this.tsConsts = this.strConsts.filter((c) => isTimestampText(c.value));
    this.lists = consts.filter((c): c is ListConst => c.kind === "list");
    this.condition = this.buildCondition();
  }

  // --- numbers -------------------------------------------------------------------------------------------

  private numLeaf(): fc.Arbitrary<string> {
    return weighted(
      when(this.nums.length > 0, 8, () => fc.constantFrom(...this.nums).map((s) => s.name)),
      [4, numberLiteralText],
      [1, numberLiteralText.map((t) => `-${t}`)],
      when(this.numConsts.length > 0, 2, () => fc.constantFrom(...this.numConsts).map((c) => c.name)),
      when(!this.realistic || this.strs.length + this.enums.length > 0, 1, () => this.lenOperand().map((s) => `len(${s})`)),
      // Overflow: no literal may exceed 2^53, but products can; non-finite arithmetic is unknown.
      when(!this.realistic, 1, () =>
        fc
          .tuple(
            this.nums.length > 0 ? fc.constantFrom(...this.nums).map((s) => s.name) : fc.constant("9007199254740991"),
            fc.integer({ min: 18, max: 21 }),
          )
          .map(([first, n]) => `(${first}${" * 9007199254740991".repeat(n)})`),
      ),
    );
  }

  /** What `len()` measures; realistic policies measure signals, not constants the compiler folds. */
  private lenOperand(): fc.Arbitrary<string> {
    if (!this.realistic) return this.strOperand();
    return fc.constantFrom(...this.strs, ...this.enums).map((s) => s.name);
  }

  private numExpr(depth: number): fc.Arbitrary<string> {
    if (depth <= 0) return this.numLeaf();
    const sub = this.numExpr(depth - 1);
    return fc.oneof(
      { weight: 6, arbitrary: this.numLeaf() },
      {
        weight: 2,
        arbitrary: fc
          .tuple(sub, fc.constantFrom("+", "-", "*", "/"), sub, fc.boolean())
          .map(([a, op, b, paren]) => (paren ? `(${a} ${op} ${b})` : `${a} ${op} ${b}`)),
      },
      { weight: 1, arbitrary: sub.map((a) => `-(${a})`) },
      { weight: 1, arbitrary: sub.map((a) => `(${a})`) },
      ...this.remainderAndBoundsOf(sub),
    );
  }

  /** PolicyOptions.remainderAndBounds: `a % b`, `abs(a)`, `min(a, b)`, `max(a, b)` of the operands `sub` makes. */
  private remainderAndBoundsOf(sub: fc.Arbitrary<string>): { weight: number; arbitrary: fc.Arbitrary<string> }[] {
    if (!this.remainderAndBounds) return [];
    return [
      { weight: 1, arbitrary: fc.tuple(sub, sub, fc.boolean()).map(([a, b, paren]) => (paren ? `(${a} % ${b})` : `${a} % ${b}`)) },
      { weight: 1, arbitrary: sub.map((a) => `abs(${a})`) },
      { weight: 1, arbitrary: fc.tuple(fc.constantFrom("min", "max"), sub, sub).map(([f, a, b]) => `${f}(${a}, ${b})`) },
    ];
  }

  private numberAtom(): fc.Arbitrary<string> {
    const cmp = fc.constantFrom("==", "!=", "<", "<=", ">", ">=");
    const left = this.numExpr(1);
    const simpleLeft = this.nums.length > 0 ? fc.constantFrom(...this.nums).map((s) => s.name) : this.numLeaf();
    const notIn = fc.constantFrom("in", "in", "not in");
    if (this.realistic && this.nums.length > 0) {
      // `signal op literal` and `signal in lo..hi` with literals strictly inside the declared bounds.
      const inside = fc.constantFrom(...this.nums).chain((s) => fc.tuple(fc.constant(s.name), insideValues(s)));
      return weighted(
        [10, fc.tuple(inside, cmp).map(([[name, [v]], op]) => `${name} ${op} ${literalExpr(v)}`)],
        [
          2,
          fc
            .tuple(simpleLeft, fc.constantFrom("+", "-", "*", "/"), this.numExpr(0), cmp, this.numExpr(1))
            .map(([a, op, b, c, d]) => `${a} ${op} ${b} ${c} ${d}`),
        ],
        [
          2,
          fc
            .tuple(inside, notIn)
            .map(([[name, [v, w]], op]) => `${name} ${op} ${literalExpr(Math.min(v, w))}..${literalExpr(Math.max(v, w))}`),
        ],
        [
          1,
          fc
            .tuple(
              simpleLeft,
              notIn,
              fc.array(fc.integer({ min: -10, max: 100_000 }).map(signedNumberText), { minLength: 1, maxLength: 6 }),
            )
            .map(([a, op, xs]) => `${a} ${op} [${xs.join(", ")}]`),
        ],
      );
    }
    const numberLists = this.lists.filter((l) => l.elem === "number" || l.elem === "empty");
    const listItem = fc.oneof(
      { weight: 4, arbitrary: fc.integer({ min: -10, max: 100_000 }).map(signedNumberText) },
      { weight: 1, arbitrary: fc.double({ min: -100, max: 100, noNaN: true, noDefaultInfinity: true }).map(signedNumberText) },
      ...(this.numConsts.length > 0 ? [{ weight: 1, arbitrary: fc.constantFrom(...this.numConsts).map((c) => c.name) }] : []),
    );
    return weighted(
      [8, fc.tuple(simpleLeft, cmp, this.numExpr(0)).map(([a, op, b]) => `${a} ${op} ${b}`)],
      [3, fc.tuple(left, cmp, this.numExpr(1)).map(([a, op, b]) => `${a} ${op} ${b}`)],
      [2, fc.tuple(left, notIn, fc.array(listItem, { maxLength: 6 })).map(([a, op, xs]) => `${a} ${op} [${xs.join(", ")}]`)],
      when(numberLists.length > 0, 2, () =>
        fc.tuple(left, notIn, fc.constantFrom(...numberLists)).map(([a, op, l]) => `${a} ${op} ${l.name}`),
      ),
      [
        2,
        fc
          .tuple(simpleLeft, notIn, this.numExpr(0), this.numExpr(0), fc.boolean())
          .map(([a, op, lo, hi, sp]) => `${a} ${op} ${lo}${sp ? " .. " : ".."}${hi}`),
      ],
    );
  }

  // --- decimals -----------------------------------------------------------------------------------------
  // Decimals meet decimals, integers and literals only (E510), and are never divided (E509).

  private decLeaf(): fc.Arbitrary<string> {
    const integers = this.nums.filter((s) => s.kind === "integer");
    return weighted(
      [8, fc.constantFrom(...this.decs).map((s) => s.name)],
      [3, decimalLiteralText],
      [2, numberLiteralText],
      when(integers.length > 0, 2, () => fc.constantFrom(...integers).map((s) => s.name)),
      when(this.numConsts.length > 0, 1, () => fc.constantFrom(...this.numConsts).map((c) => c.name)),
      when(this.strs.length + this.enums.length > 0, 1, () => this.lenOperand().map((s) => `len(${s})`)),
    );
  }

  private decExpr(depth: number): fc.Arbitrary<string> {
    if (depth <= 0) return this.decLeaf();
    const sub = this.decExpr(depth - 1);
    return fc.oneof(
      { weight: 5, arbitrary: this.decLeaf() },
      {
        weight: 3,
        arbitrary: fc
          .tuple(sub, fc.constantFrom("+", "-", "*"), sub, fc.boolean())
          .map(([a, op, b, paren]) => (paren ? `(${a} ${op} ${b})` : `${a} ${op} ${b}`)),
      },
      { weight: 1, arbitrary: sub.map((a) => `-(${a})`) },
      ...this.remainderAndBoundsOf(sub),
    );
  }

  private decimalAtom(): fc.Arbitrary<string> | null {
    if (this.decs.length === 0) return null;
    const dec = fc.constantFrom(...this.decs).map((s) => s.name);
    const cmp = fc.constantFrom("==", "!=", "<", "<=", ">", ">=");
    const notIn = fc.constantFrom("in", "in", "not in");
    return weighted(
      [6, fc.tuple(dec, cmp, decimalLiteralText).map(([a, op, b]) => `${a} ${op} ${b}`)],
      [5, fc.tuple(this.decExpr(2), cmp, this.decExpr(1)).map(([a, op, b]) => `${a} ${op} ${b}`)],
      [
        2,
        fc
          .tuple(this.decExpr(1), notIn, fc.array(decimalLiteralText, { maxLength: 5 }))
          .map(([a, op, xs]) => `${a} ${op} [${xs.join(", ")}]`),
      ],
      [2, fc.tuple(this.decExpr(1), notIn, decimalLiteralText, decimalLiteralText).map(([a, op, lo, hi]) => `${a} ${op} ${lo}..${hi}`)],
    );
  }

  // --- strings and enums -----------------------------------------------------------------------------------

  /** Any string-typed operand; enum signals are strings too (operators that do not check enum values). */
  private strOperand(): fc.Arbitrary<string> {
    return weighted(
      when(this.strs.length > 0, 5, () => fc.constantFrom(...this.strs).map((s) => s.name)),
      when(this.enums.length > 0, 2, () => fc.constantFrom(...this.enums).map((s) => s.name)),
      when(this.strs.length + this.enums.length > 0, 1, () => fc.constantFrom(...this.strs, ...this.enums).map((s) => `lower(${s.name})`)),
      [3, fc.constantFrom("a", "KP", "", "é", "😀", "foo.", "@example.com", "x/y", "A").chain(stringLit)],
      when(this.strConsts.length > 0, 2, () => fc.constantFrom(...this.strConsts).map((c) => c.name)),
    );
  }

  /** A string operand that is not an enum and carries no enum-checked literal: signals, literals, constants. */
  private plainStrOperand(): fc.Arbitrary<string> {
    return weighted(
      when(this.strs.length > 0, 5, () => fc.constantFrom(...this.strs).map((s) => s.name)),
      when(!this.realistic && this.strs.length > 0, 1, () => fc.constantFrom(...this.strs).map((s) => `lower(${s.name})`)),
      [3, fc.constantFrom("a", "KP", "", "é", "admin", "x/y").chain(stringLit)],
      when(this.strConsts.length > 0, 2, () => fc.constantFrom(...this.strConsts).map((c) => c.name)),
    );
  }

  /** Operands that may stand beside enum `e` in `==`, `!=` or `in`: its values, compatible constants and signals. */
  private enumPartner(e: EnumSig): fc.Arbitrary<string> {
    const consts = this.strConsts.filter((c) => e.values.includes(c.value));
    const overlapping = this.enums.filter((o) => o.values.some((v) => e.values.includes(v)));
    return weighted(
      [5, fc.constantFrom(...e.values).chain(stringLit)],
      when(consts.length > 0, 2, () => fc.constantFrom(...consts).map((c) => c.name)),
      when(this.strs.length > 0, 1, () => fc.constantFrom(...this.strs).map((s) => s.name)),
      when(overlapping.length > 0, 1, () => fc.constantFrom(...overlapping).map((s) => s.name)),
    );
  }

  private swap = ([a, op, b, swap]: readonly [string, string, string, boolean]): string => (swap ? `${b} ${op} ${a}` : `${a} ${op} ${b}`);

  private stringAtom(): fc.Arbitrary<string> | null {
    if (this.strs.length === 0 && this.enums.length === 0 && this.strConsts.length === 0) return null;
    const eq = fc.constantFrom("==", "!=");
    const notIn = fc.constantFrom("in", "in", "not in");
    const plain = this.plainStrOperand();
    const strLists = this.lists.filter((l) => l.elem === "string" || l.elem === "empty");
    // Realistic lists are non-empty and, for an enum, leave out its first value (never all of them).
    const listLit = (all: readonly string[], allConsts: readonly StrConst[], isEnum: boolean) => {
      const values = this.realistic && isEnum ? all.slice(1) : all;
      const consts = allConsts.filter((c) => values.includes(c.value) || !isEnum);
      if (values.length === 0) return fc.constant("[]");
      return fc
        .array(
          consts.length > 0
            ? fc.oneof(
                { weight: 3, arbitrary: fc.constantFrom(...values).chain(stringLit) },
                { weight: 1, arbitrary: fc.constantFrom(...consts).map((c) => c.name) },
              )
            : fc.constantFrom(...values).chain(stringLit),
          { minLength: this.realistic ? 1 : 0, maxLength: 5 },
        )
        .map((xs) => `[${xs.join(", ")}]`);
    };
    const enumAtom = (e: EnumSig): fc.Arbitrary<string> => {
      const consts = this.strConsts.filter((c) => e.values.includes(c.value));
      const lists = this.lists.filter(
        (l) => l.elem === "empty" || (l.elem === "string" && l.values.every((v) => e.values.includes(v as string))),
      );
      return weighted(
        [5, fc.tuple(fc.constant(e.name), eq, this.enumPartner(e), fc.boolean()).map(this.swap)],
        [3, fc.tuple(notIn, listLit(e.values, consts, true)).map(([op, l]) => `${e.name} ${op} ${l}`)],
        when(lists.length > 0, 2, () => fc.tuple(notIn, fc.constantFrom(...lists)).map(([op, l]) => `${e.name} ${op} ${l.name}`)),
      );
    };
    return weighted(
      when(this.enums.length > 0, 5, () => fc.constantFrom(...this.enums).chain(enumAtom)),
      [
        4,
        fc
          .tuple(this.realistic && this.strs.length > 0 ? fc.constantFrom(...this.strs).map((s) => s.name) : plain, eq, plain, fc.boolean())
          .map(this.swap),
      ],
      [
        3,
        fc
          .tuple(this.strOperand(), fc.constantFrom("starts_with", "ends_with", "contains"), this.strOperand())
          .map(([a, op, b]) => `${a} ${op} ${b}`),
      ],
      [3, fc.tuple(this.strOperand(), fc.constantFrom(...MATCH_PATTERNS)).map(([a, p]) => `${a} matches /${p}/`)],
      [
        2,
        fc
          .tuple(plain, notIn, listLit(["KP", "IR", "a", "", "é", "admin", "😀"], this.strConsts, false))
          .map(([a, op, l]) => `${a} ${op} ${l}`),
      ],
      when(strLists.length > 0, 2, () => fc.tuple(plain, notIn, fc.constantFrom(...strLists)).map(([a, op, l]) => `${a} ${op} ${l.name}`)),
      when(!this.realistic || this.strs.length + this.enums.length > 0, 2, () =>
        fc
          .tuple(this.lenOperand(), fc.constantFrom("==", "!=", "<", "<=", ">", ">="), this.numExpr(0))
          .map(([s, op, n]) => `len(${s}) ${op} ${n}`),
      ),
    );
  }

  // --- booleans ------------------------------------------------------------------------------------------

  private booleanAtom(): fc.Arbitrary<string> | null {
    if (this.realistic && this.bools.length === 0) return null;
    const boolOperand = weighted(
      when(this.bools.length > 0, 4, () => fc.constantFrom(...this.bools).map((s) => s.name)),
      [2, fc.constantFrom("true", "false")],
      when(this.boolConsts.length > 0, 1, () => fc.constantFrom(...this.boolConsts).map((c) => c.name)),
    );
    const boolLists = this.lists.filter((l) => l.elem === "boolean" || l.elem === "empty");
    return weighted(
      when(this.bools.length > 0, 6, () => fc.constantFrom(...this.bools).map((s) => s.name)),
      when(this.bools.length > 0, 3, () =>
        fc
          .tuple(
            fc.constantFrom(...this.bools).map((s) => s.name),
            fc.constantFrom("==", "!="),
            boolOperand,
            fc.boolean(),
          )
          .map(this.swap),
      ),
      when(this.bools.length > 0, 1, () =>
        fc
          .tuple(
            fc.constantFrom(...this.bools).map((s) => s.name),
            fc.constantFrom("in", "not in"),
            fc.array(fc.constantFrom("true", "false"), this.realistic ? { minLength: 1, maxLength: 1 } : { maxLength: 2 }),
          )
          .map(([a, op, xs]) => `${a} ${op} [${xs.join(", ")}]`),
      ),
      when(this.bools.length > 0 && boolLists.length > 0 && !this.realistic, 1, () =>
        fc
          .tuple(
            fc.constantFrom(...this.bools).map((s) => s.name),
            fc.constantFrom("in", "not in"),
            fc.constantFrom(...boolLists),
          )
          .map(([a, op, l]) => `${a} ${op} ${l.name}`),
      ),
      when(this.boolConsts.length > 0 && !this.realistic, 1, () => fc.constantFrom(...this.boolConsts).map((c) => c.name)),
      when(!this.realistic, 1, () => fc.constantFrom("true", "false")),
    );
  }

  // --- timestamps ----------------------------------------------------------------------------------------

  private timestampAtom(): fc.Arbitrary<string> | null {
    if (this.times.length === 0 && !this.now) return null;
    const ts = fc.constantFrom(...this.times.map((s) => s.name), ...(this.now ? ["now"] : []));
    const cmp = fc.constantFrom("==", "!=", "<", "<=", ">", ">=");
    const other = weighted(
      [4, timestampArb.chain(stringLit)],
      [1, ts],
      when(this.tsConsts.length > 0, 2, () => fc.constantFrom(...this.tsConsts).map((c) => c.name)),
    );
    const tsLists = this.lists.filter((l) => l.elem === "empty" || (l.elem === "string" && l.values.every(isTimestampText)));
    const item =
      this.tsConsts.length > 0
        ? fc.oneof(
            { weight: 3, arbitrary: timestampArb.chain(stringLit) },
            { weight: 1, arbitrary: fc.constantFrom(...this.tsConsts).map((c) => c.name) },
          )
        : timestampArb.chain(stringLit);
    return weighted(
      [6, fc.tuple(ts, cmp, other, fc.boolean()).map(([a, op, b, swap]) => (swap ? `${b} ${flip(op)} ${a}` : `${a} ${op} ${b}`))],
      // Arithmetic on time: `a < b + 30d`, `a - 1h >= "..."`, `a - b > 12h` (durations compare as durations).
      [2, fc.tuple(ts, cmp, ts, fc.constantFrom("+", "-"), durationArb).map(([a, op, b, sign, d]) => `${a} ${op} ${b} ${sign} ${d}`)],
      [
        1,
        fc
          .tuple(ts, fc.constantFrom("+", "-"), durationArb, cmp, timestampArb.chain(stringLit))
          .map(([a, sign, d, op, t]) => `${a} ${sign} ${d} ${op} ${t}`),
      ],
      [2, fc.tuple(ts, ts, cmp, durationArb, durationArb).map(([a, b, op, d, e]) => `${a} - ${b} ${op} ${d} - ${e}`)],
      [
        2,
        fc
          .tuple(ts, fc.constantFrom("in", "not in"), fc.array(item, { maxLength: 4 }))
          .map(([a, op, xs]) => `${a} ${op} [${xs.join(", ")}]`),
      ],
      when(tsLists.length > 0, 1, () =>
        fc.tuple(ts, fc.constantFrom("in", "not in"), fc.constantFrom(...tsLists)).map(([a, op, l]) => `${a} ${op} ${l.name}`),
      ),
      when(this.remainderAndBounds, 6, () => this.calendarAtom(ts, cmp)),
    );
  }

  /** PolicyOptions.remainderAndBounds: a calendar field of a timestamp, shifted or not, in a zone, compared or in a range. */
  private calendarAtom(ts: fc.Arbitrary<string>, cmp: fc.Arbitrary<string>): fc.Arbitrary<string> {
    const instant = fc.oneof(
      { weight: 3, arbitrary: ts },
      { weight: 1, arbitrary: fc.tuple(ts, fc.constantFrom("+", "-"), durationArb).map(([a, sign, d]) => `${a} ${sign} ${d}`) },
    );
    const field = fc
      .tuple(
        fc.constantFrom("weekday", "local_hour", "local_minute_of_day"),
        instant,
        fc.constantFrom("Europe/London", "America/New_York", "Asia/Kathmandu", "Australia/Lord_Howe", "UTC"),
      )
      .map(([fn, at, zone]) => `${fn}(${at}, "${zone}")`);
    const bound = fc.oneof(fc.integer({ min: 0, max: 24 }), fc.integer({ min: -1, max: 1440 }));
    return fc.oneof(
      fc.tuple(field, cmp, bound).map(([f, op, n]) => `${f} ${op} ${n}`),
      fc
        .tuple(field, fc.constantFrom("in", "not in"), bound, bound)
        .map(([f, op, a, b]) => `${f} ${op} ${Math.min(a, b)}..${Math.max(a, b)}`),
    );
  }

  // --- presence and composition --------------------------------------------------------------------------

  private presenceAtom(): fc.Arbitrary<string> | null {
    if (this.optionals.length === 0) return null;
    return fc.tuple(fc.constantFrom(...this.optionals), fc.boolean()).map(([s, neg]) => `${neg ? "not " : ""}present(${s.name})`);
  }

  private atom(): fc.Arbitrary<string> {
    return weighted(
      [6, this.numberAtom()],
      ((a) => (a ? ([4, a] as const) : null))(this.decimalAtom()),
      ((a) => (a ? ([5, a] as const) : null))(this.stringAtom()),
      ((a) => (a ? ([3, a] as const) : null))(this.booleanAtom()),
      ((a) => (a ? ([3, a] as const) : null))(this.timestampAtom()),
      ((a) => (a ? ([2, a] as const) : null))(this.presenceAtom()),
      ((a) => (a ? ([3, a] as const) : null))(this.versionAtom()),
      ((a) => (a ? ([3, a] as const) : null))(this.addressAtom()),
    );
  }

  /** A `semver` signal beside versions: ordered, equal (build metadata aside), in a list. */
  private versionAtom(): fc.Arbitrary<string> | null {
    const versions = this.signals.filter((s) => s.kind === "semver").map((s) => s.name);
    if (versions.length === 0) return null;
    const literal = fc.constantFrom("2.4.0", "2.4.0-rc.1", "2.4.0+b.7", "1.0.0", "2.10.0", "3.0.0-alpha", "3.0.0-0").map((v) => `"${v}"`);
    const cmp = fc.constantFrom("==", "!=", "<", "<=", ">", ">=");
    return fc.oneof(
      fc.tuple(fc.constantFrom(...versions), cmp, literal).map(([v, op, l]) => `${v} ${op} ${l}`),
      fc.tuple(fc.constantFrom(...versions), cmp, fc.constantFrom(...versions)).map(([v, op, w]) => `${v} ${op} ${w}`),
      fc.tuple(fc.constantFrom(...versions), fc.array(literal, { maxLength: 3 })).map(([v, ls]) => `${v} in [${ls.join(", ")}]`),
    );
  }

  /** An `ip` signal in CIDR ranges, or beside an address. */
  private addressAtom(): fc.Arbitrary<string> | null {
    const addresses = this.signals.filter((s) => s.kind === "ip").map((s) => s.name);
    if (addresses.length === 0) return null;
    const ranges = fc
      .constantFrom("10.0.0.0/8", "10.1.0.0/16", "2001:db8::/32", "::ffff:0:0/96", "192.0.2.0/24", "0.0.0.0/0", "::/0")
      .map((r) => `"${r}"`);
    return fc.oneof(
      fc
        .tuple(fc.constantFrom(...addresses), fc.constantFrom("in_cidr", "not in_cidr"), fc.array(ranges, { maxLength: 3 }))
        .map(([a, op, rs]) => `${a} ${op} [${rs.join(", ")}]`),
      fc
        .tuple(fc.constantFrom(...addresses), fc.constantFrom("==", "!="), fc.constantFrom("10.1.2.3", "::ffff:10.1.2.3", "2001:db8::5"))
        .map(([a, op, l]) => `${a} ${op} "${l}"`),
    );
  }

  /** PolicyOptions.exactAtoms: one signal beside constants, in every form the language has for its type. */
  private exactAtom(): fc.Arbitrary<string> {
    const name = <T extends { readonly name: string }>(xs: readonly T[]) => fc.constantFrom(...xs).map((x) => x.name);
    const notIn = fc.constantFrom("in", "in", "not in");
    const numberConstant = weighted(
      [4, numberLiteralText],
      [1, numberLiteralText.map((t) => `-${t}`)],
      when(this.numConsts.length > 0, 2, () => name(this.numConsts)),
    );
    const numberLists = this.lists.filter((l) => l.elem === "number" || l.elem === "empty");
    const stringLists = this.lists.filter((l) => l.elem === "string" || l.elem === "empty");
    const list = (items: fc.Arbitrary<string>) => fc.array(items, { maxLength: 5 }).map((xs) => `[${xs.join(", ")}]`);
    const plainStrings = weighted(
      [3, fc.constantFrom("a", "KP", "", "é", "admin", "x/y", "AB", "foo.bar").chain(stringLit)],
      when(this.strConsts.length > 0, 1, () => name(this.strConsts)),
    );
    const enumPairs = this.enums.flatMap((a) =>
      this.enums.filter((b) => b !== a && b.values.some((v) => a.values.includes(v))).map((b) => [a.name, b.name] as const),
    );
    const timeConstant = weighted(
      [3, timestampArb.chain(stringLit)],
      when(this.tsConsts.length > 0, 1, () => name(this.tsConsts)),
    );
    const enumAtom = (e: EnumSig): fc.Arbitrary<string> => {
      const consts = this.strConsts.filter((c) => e.values.includes(c.value));
      const value = weighted(
        [4, fc.constantFrom(...e.values).chain(stringLit)],
        when(consts.length > 0, 1, () => name(consts)),
      );
      const lists = stringLists.filter((l) => l.values.every((v) => e.values.includes(v as string)));
      return weighted(
        [
          4,
          fc
            .tuple(value, fc.constantFrom("==", "!="), fc.boolean())
            .map(([v, op, swap]) => (swap ? `${v} ${op} ${e.name}` : `${e.name} ${op} ${v}`)),
        ],
        [3, fc.tuple(notIn, list(value)).map(([op, l]) => `${e.name} ${op} ${l}`)],
        when(lists.length > 0, 1, () => fc.tuple(notIn, name(lists)).map(([op, l]) => `${e.name} ${op} ${l}`)),
      );
    };
    return weighted(
      when(this.nums.length > 0, 6, () =>
        fc
          .constantFrom(...this.nums)
          .chain((s) => fc.tuple(fc.constant(s.name), weighted([3, nearBounds(s)], [2, numberConstant])))
          .chain(([a, b]) =>
            fc
              .tuple(fc.constantFrom("==", "!=", "<", "<=", ">", ">="), fc.boolean())
              .map(([op, swap]) => (swap ? `${b} ${flip(op)} ${a}` : `${a} ${op} ${b}`)),
          ),
      ),
      when(this.nums.length > 0, 2, () => fc.tuple(name(this.nums), notIn, list(numberConstant)).map(([a, op, l]) => `${a} ${op} ${l}`)),
      when(this.nums.length > 0 && numberLists.length > 0, 1, () =>
        fc.tuple(name(this.nums), notIn, name(numberLists)).map(([a, op, l]) => `${a} ${op} ${l}`),
      ),
      when(this.nums.length > 0, 2, () =>
        fc.tuple(name(this.nums), notIn, numberConstant, numberConstant).map(([a, op, lo, hi]) => `${a} ${op} ${lo}..${hi}`),
      ),
      when(this.enums.length > 0, 5, () => fc.constantFrom(...this.enums).chain(enumAtom)),
      when(this.strs.length > 0, 3, () =>
        weighted(
          [3, fc.tuple(name(this.strs), fc.constantFrom("==", "!="), plainStrings).map(([a, op, b]) => `${a} ${op} ${b}`)],
          [2, fc.tuple(name(this.strs), notIn, list(plainStrings)).map(([a, op, l]) => `${a} ${op} ${l}`)],
          when(stringLists.length > 0, 1, () => fc.tuple(name(this.strs), notIn, name(stringLists)).map(([a, op, l]) => `${a} ${op} ${l}`)),
        ),
      ),
      when(this.bools.length > 0, 3, () =>
        weighted(
          [3, name(this.bools)],
          [
            2,
            fc
              .tuple(name(this.bools), fc.constantFrom("==", "!="), fc.constantFrom("true", "false", ...this.boolConsts.map((c) => c.name)))
              .map(([a, op, b]) => `${a} ${op} ${b}`),
          ],
          [1, fc.tuple(name(this.bools), notIn, list(fc.constantFrom("true", "false"))).map(([a, op, l]) => `${a} ${op} ${l}`)],
        ),
      ),
      when(this.times.length > 0, 3, () =>
        fc
          .tuple(name(this.times), fc.constantFrom("==", "!=", "<", "<=", ">", ">="), timeConstant, fc.boolean())
          .map(([a, op, b, swap]) => (swap ? `${b} ${flip(op)} ${a}` : `${a} ${op} ${b}`)),
      ),
      ((a) => (a ? ([2, a] as const) : null))(this.presenceAtom()),
      // Two finite choices compared: every combination of their values is on the grid too.
      when(this.bools.length > 1, 4, () =>
        fc.tuple(name(this.bools), fc.constantFrom("==", "!="), name(this.bools)).map(([a, op, b]) => `${a} ${op} ${b}`),
      ),
      when(enumPairs.length > 0, 6, () =>
        fc.tuple(fc.constantFrom(...enumPairs), fc.constantFrom("==", "!=")).map(([[a, b], op]) => `${a} ${op} ${b}`),
      ),
      [1, fc.constantFrom("true", "false")],
    );
  }

  private buildCondition(): fc.Arbitrary<string> {
    const atom = this.exactAtoms ? this.exactAtom() : this.atom();
    // Boolean-valued comparisons of whole conditions: `(a > 1) == (b < 2)`, `(c) in [true]`.
    const boolCompare = fc.tuple(atom, fc.constantFrom("==", "!="), atom).map(([a, op, b]) => `(${a}) ${op} (${b})`);
    const unit = fc.oneof({ weight: 30, arbitrary: atom }, { weight: 1, arbitrary: boolCompare });
    return fc
      .record({
        atoms: fc.array(unit, { minLength: 1, maxLength: 4 }),
        ops: fc.array(fc.constantFrom("and", "or"), { minLength: 3, maxLength: 3 }),
        nots: fc.array(fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }), {
          minLength: 5,
          maxLength: 5,
        }),
        parens: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
        rightNested: fc.boolean(),
        newline: fc.oneof({ weight: 6, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      })
      .map(({ atoms, ops, nots, parens, rightNested, newline }) => {
        const sep = newline ? "\n    " : " ";
        const term = (a: string, i: number): string => {
          const t = parens[i] ? `(${a})` : a;
          return nots[i] ? `not ${nots[i + 1] ? "(" + t + ")" : t}` : t;
        };
        if (rightNested && atoms.length >= 3) {
          // a op1 (b op2 c ...): a parenthesized right group.
          const [first, ...rest] = atoms;
          const inner = rest.map((a, i) => (i === 0 ? term(a, i + 1) : `${ops[i]!} ${term(a, i + 1)}`)).join(sep);
          return `${term(first!, 0)}${sep}${ops[0]!} (${inner})`;
        }
        let acc = term(atoms[0]!, 0);
        for (let i = 1; i < atoms.length; i++) {
          const grouped = parens[i - 1] && i > 1 ? `(${acc})` : acc;
          acc = `${grouped}${sep}${ops[i - 1]!} ${term(atoms[i]!, i)}`;
        }
        return nots[4] && atoms.length > 1 ? `not (${acc})` : acc;
      });
  }
}

/** Two numbers strictly inside a number signal's declared bounds (or near zero when unbounded). */
function insideValues(s: NumSig): fc.Arbitrary<readonly [number, number]> {
  const lo = s.lo?.value ?? (s.hi ? s.hi.value - 10_000 : -1000);
  const hi = s.hi?.value ?? lo + 10_000;
  // Integer signals: the smallest and largest values the bounds admit, then strictly between those.
  const min = s.lo && !s.lo.inclusive ? lo + 1 : lo;
  const max = s.hi && !s.hi.inclusive ? hi - 1 : hi;
  const one =
    s.kind === "integer"
      ? fc.integer({ min: min + 1, max: Math.max(min + 1, max - 1) })
      : fc.double({ min: lo, max: hi, noNaN: true, minExcluded: true, maxExcluded: true }).map((d) => {
          const r = Math.round(d * 100) / 100;
          return r > lo && r < hi ? r : (lo + hi) / 2;
        });
  return fc.tuple(one, one);
}

/** A number at, beside or between a number signal's declared bounds (near 0 when it has none), as a condition writes it. */
function nearBounds(s: NumSig): fc.Arbitrary<string> {
  const bounds = [s.lo?.value, s.hi?.value].filter((v): v is number => v !== undefined);
  const anchors = bounds.length === 2 ? [...bounds, (bounds[0]! + bounds[1]!) / 2] : bounds.length === 1 ? bounds : [0];
  return fc
    .tuple(fc.constantFrom(...anchors), fc.constantFrom(0, 0, 1, -1, 0.5, 3, -7, 100))
    .map(([v, d]) => literalExpr(s.kind === "integer" ? Math.round(v + d) : v + d));
}

/** A number in a condition: negative values as unary minus. */
function literalExpr(v: number): string {
  return v < 0 ? `-${numberText(-v)}` : numberText(v);
}

function flip(op: string): string {
  return ({ "<": ">", "<=": ">=", ">": "<", ">=": "<=" } as Record<string, string>)[op] ?? op;
}

// ---------------------------------------------------------------------------------------------------------
// Whole policies

const range = (r: number | { readonly min: number; readonly max: number } | undefined, fallback: { min: number; max: number }) =>
  r === undefined ? fallback : typeof r === "number" ? { min: r, max: r } : r;

const comment: fc.Arbitrary<string> = fc
  .oneof(
    fc.constantFrom(
      "",
      " checks",
      " TODO: tighten",
      ' "quoted" and /slashes/',
      " é 日本 😀",
      " # nested hash",
      ' rule x when y reject "z"',
    ),
    fc.string({ maxLength: 30 }).map((s) => ` ${s.replace(/[\r\n\u2028\u2029]/g, " ")}`),
  )
  .map((s) => `#${s}`);

const POLICY_IDS = fc.constantFrom("payments.transfer", "a", "acme-corp.billing_refund", "x1.y2.z3", "deploy.prod", "p0");
const VERSIONS = fc.constantFrom("1.2.0", "0.0.1", "10.20.30", "1.0.0-rc.1", "2.0.0-alpha.beta.7", "0.1.0-0");
const ACTIONS = fc.constantFrom("transfer.execute", "payments:refund", "deploy", "A-b_c.D:e", "user.delete");

export function policyModel(options: PolicyOptions = {}): fc.Arbitrary<PolicyModel> {
  const ruleRange = range(options.rules, { min: 1, max: 8 });
  const big = ruleRange.max >= 100;
  const realistic = options.realistic ?? big;
  const signalRange = range(options.signals, big ? { min: 30, max: 40 } : { min: 3, max: 8 });
  const constRange = big ? { min: 12, max: 16 } : { min: 0, max: 5 };

  return fc
    .record({
      signalCount: fc.integer(signalRange),
      constCount: fc.integer(constRange),
      ruleCount: fc.integer(ruleRange),
      wordOffset: fc.nat(SIGNAL_WORDS.length - 1),
    })
    .chain(({ signalCount, constCount, ruleCount, wordOffset }) => {
      const names = Array.from({ length: signalCount }, (_, i) => {
        const w = SIGNAL_WORDS[(wordOffset + i) % SIGNAL_WORDS.length]!;
        return i < SIGNAL_WORDS.length ? w : `${w}_${i}`;
      });
      return fc
        .tuple(...names.map((n) => signalSpec(n, realistic, options.remainderAndBounds)))
        .chain((signals) => constSpecs(signals, constCount, realistic).map((consts) => ({ signals, consts, ruleCount })));
    })
    .chain(({ signals, consts, ruleCount }) => {
      const exprs = new Exprs(signals, consts, realistic, options.exactAtoms, options.remainderAndBounds, options.now);
      const rule = fc.record({
        word: fc.constantFrom(...RULE_WORDS),
        when: exprs.condition,
        verdict: fc.constantFrom("approve", "escalate", "reject"),
        reason: fc.constantFrom(...REASONS).chain(stringLit),
        comment: fc.option(comment, { freq: 8 }),
        trailing: fc.option(comment, { freq: 10 }),
        layout: fc.constantFrom("one-line", "one-line", "one-line", "split"),
      });
      return fc
        .record({
          rules: fc.array(rule, { minLength: ruleCount, maxLength: ruleCount }),
          otherwise: options.otherwise === undefined ? fc.boolean() : fc.constant(options.otherwise),
          otherwiseVerdict: fc.constantFrom("approve", "escalate", "reject"),
          otherwiseReason: fc.constantFrom(...REASONS).chain(stringLit),
          policyId: POLICY_IDS,
          version: VERSIONS,
          action: ACTIONS,
          binding: fc.subarray(
            signals.map((s) => s.name),
            { maxLength: Math.min(3, signals.length) },
          ),
          headerComment: fc.option(comment, { freq: 2 }),
          signalComments: fc.array(fc.option(comment, { freq: 6 }), { minLength: signals.length, maxLength: signals.length }),
          questionSpace: fc.array(fc.boolean(), { minLength: signals.length, maxLength: signals.length }),
          compactSignals: fc.oneof({ weight: 8, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
          crlf: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
          indent: fc.constantFrom("  ", "    ", "\t"),
        })
        .map((p): PolicyModel => {
          const out: string[] = [];
          if (p.headerComment) out.push(p.headerComment);
          out.push(`policy ${encodeString(p.policyId)} version ${encodeString(p.version)}`);
          out.push(`governs ${encodeString(p.action)}${p.binding.length > 0 ? ` binding ${p.binding.join(", ")}` : ""}`);
          out.push("");
          const decls = signals.map((s, i) => `${s.name}${s.optional ? (p.questionSpace[i] ? " ?" : "?") : ""}: ${s.constraintText}`);
          if (p.compactSignals) out.push(`signals { ${decls.join(" ")} }`);
          else {
            out.push("signals {");
            decls.forEach((d, i) => {
              const c = p.signalComments[i];
              if (c) out.push(`${p.indent}${c}`);
              out.push(`${p.indent}${d}`);
            });
            out.push("}");
          }
          out.push("");
          for (const c of consts) out.push(`const ${c.name} = ${c.text}`);
          if (consts.length > 0) out.push("");
          p.rules.forEach((r, i) => {
            if (r.comment) out.push(r.comment);
            const name = `${r.word}_${i}`;
            const tail = r.trailing ? `  ${r.trailing}` : "";
            if (r.layout === "split") out.push(`rule ${name}\n  when ${r.when}\n  ${r.verdict} ${r.reason}${tail}`);
            else out.push(`rule ${name} when ${r.when} ${r.verdict} ${r.reason}${tail}`);
          });
          if (p.otherwise) out.push(`otherwise ${p.otherwiseVerdict} ${p.otherwiseReason}`);
          const eol = p.crlf ? "\r\n" : "\n";
          const source = `${out.join("\n")}\n`.replace(/\r?\n/g, eol);
          return {
            source,
            signals,
            consts,
            ruleCount: p.rules.length,
            hasOtherwise: p.otherwise,
            header: { policyId: p.policyId, version: p.version, action: p.action, binding: p.binding },
            rules: p.rules.map((r, i) => ({ name: `${r.word}_${i}`, when: r.when, verdict: r.verdict, reason: r.reason })),
            otherwise: p.otherwise ? { verdict: p.otherwiseVerdict, reason: p.otherwiseReason } : null,
          };
        });
    });
}

/** A policy's parts written out plainly: one signal, constant and rule per line, no comments. */
export function renderPolicy(m: Pick<PolicyModel, "header" | "signals" | "consts" | "rules" | "otherwise">): string {
  const { policyId, version, action, binding } = m.header;
  return [
    `policy ${encodeString(policyId)} version ${encodeString(version)}`,
    `governs ${encodeString(action)}${binding.length > 0 ? ` binding ${binding.join(", ")}` : ""}`,
    "",
    "signals {",
    ...m.signals.map((s) => `  ${s.name}${s.optional ? "?" : ""}: ${s.constraintText}`),
    "}",
    "",
    ...m.consts.map((c) => `const ${c.name} = ${c.text}`),
    "",
    ...m.rules.map((r) => `rule ${r.name} when ${r.when} ${r.verdict} ${r.reason}`),
    ...(m.otherwise ? [`otherwise ${m.otherwise.verdict} ${m.otherwise.reason}`] : []),
    "",
  ].join("\n");
}

/** Arbitrary of valid policy sources. */
export function policySource(options: PolicyOptions = {}): fc.Arbitrary<string> {
  return policyModel(options).map((m) => m.source);
}

/** One deterministic policy source: the same seed and options always give the same text. */
export function generatePolicy({
  seed,
  rules,
  otherwise,
  realistic,
}: {
  readonly seed: number;
  readonly rules?: number;
  readonly otherwise?: boolean;
  readonly realistic?: boolean;
}): string {
  const options: PolicyOptions = {
    ...(rules === undefined ? {} : { rules }),
    ...(otherwise === undefined ? {} : { otherwise }),
    ...(realistic === undefined ? {} : { realistic }),
  };
  const [source] = fc.sample(policySource(options), { seed, numRuns: 1 });
  return source!;
}
