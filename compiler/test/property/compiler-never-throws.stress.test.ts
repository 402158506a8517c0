/**
 * Property: `compile()` never throws on user input, and what it returns is well formed.
 *
 * Over 50,000 sources per run: (a) generated valid policies, (b) mutations of generated policies (characters and
 * tokens deleted, inserted, duplicated, swapped; truncation; lone surrogates, NUL, CR, very long lines, names and
 * numbers), (c) random strings, token soups from the grammar's vocabulary, and "semantic soups": policies with
 * the right shape but random names, types, constraints and calls, which reach the resolve and type-check phases.
 *
 * Every input must give `valid: true` with an AST, IR and bundle, or `valid: false` with at least one error and
 * no IR; every diagnostic has a known code with its catalogued severity, a 1-based line:column that matches its
 * offset, an in-file span, and the list is sorted and free of duplicates.
 *
 * Reproducible: the seed is fixed (WRIT_FUZZ_SEED=<n> picks another, WRIT_FUZZ_SEED=random a fresh one); on
 * failure fast-check prints the seed and counterexample path, and `check` prints the offending source.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compile, DIAGNOSTICS, type CompileResult, type Diagnostic } from "@writ/compiler";
import { KEYWORDS } from "../../src/syntax/tokens.js";
import { encodeString, policySource } from "../support/generate-policy.js";

const SEED =
  process.env["WRIT_FUZZ_SEED"] === "random" ? Math.floor(Math.random() * 2 ** 31) : Number(process.env["WRIT_FUZZ_SEED"] ?? 20_260_401);
const FILE = "fuzz.writ";

/** Inputs per family; the total must stay at or above 50,000. */
const RUNS = {
  valid: 4_000,
  mutationBases: 3_000,
  mutantsPerBase: 10,
  randomStrings: 8_000,
  tokenSoups: 6_000,
  semanticSoups: 4_000,
};

let inputs = 0;
const byFamily = new Map<string, { total: number; valid: number }>();
/** Diagnostic codes seen, to show the inputs reach every phase, not just the lexer. */
const codesSeen = new Map<string, number>();

// ---------------------------------------------------------------------------------------------------------
// The contract

/** Line starts computed independently of the compiler's LineIndex: `\r\n`, `\n` and a lone `\r` end a line. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\n") starts.push(i + 1);
    else if (text[i] === "\r" && text[i + 1] !== "\n") starts.push(i + 1);
  }
  return starts;
}

function describeInput(text: string): string {
  const shown = text.length > 2_000 ? `${text.slice(0, 2_000)}… (${text.length} chars)` : text;
  return JSON.stringify(shown);
}

/** A position is in the file, 1-based, and its line:column is where its offset is. */
function checkPosition(d: Diagnostic, which: "start" | "end", text: string, starts: readonly number[]): void {
  const p = d.span[which];
  const where = `${d.code} ${which} ${p.line}:${p.column}@${p.offset} (${d.message})`;
  if (!Number.isInteger(p.offset) || p.offset < 0 || p.offset > text.length) throw new Error(`${where}: offset outside the file`);
  let line = 0;
  while (line + 1 < starts.length && starts[line + 1]! <= p.offset) line++;
  const column = p.offset - starts[line]! + 1;
  if (p.line !== line + 1 || p.column !== column) throw new Error(`${where}: expected ${line + 1}:${column} for that offset`);
  if (p.line < 1 || p.column < 1 || p.line > starts.length) throw new Error(`${where}: not a 1-based position in the file`);
}

function checkDiagnostics(list: readonly Diagnostic[], severity: "error" | "warning", text: string, starts: readonly number[]): void {
  list.forEach((d, i) => {
    const info = (DIAGNOSTICS as Record<string, { severity: string }>)[d.code];
    if (!info) throw new Error(`unknown diagnostic code ${String(d.code)}`);
    if (d.severity !== severity || info.severity !== severity)
      throw new Error(`${d.code} has severity ${d.severity} in the ${severity} list`);
    if (d.file !== FILE) throw new Error(`${d.code} names file ${d.file}`);
    if (typeof d.message !== "string" || d.message.trim() === "") throw new Error(`${d.code} has an empty message`);
    checkPosition(d, "start", text, starts);
    checkPosition(d, "end", text, starts);
    if (d.span.end.offset < d.span.start.offset) throw new Error(`${d.code} span ends before it starts`);
    const prev = list[i - 1];
    if (prev) {
      const order =
        prev.span.start.offset - d.span.start.offset ||
        (prev.code < d.code ? -1 : prev.code > d.code ? 1 : 0) ||
        (prev.message < d.message ? -1 : prev.message > d.message ? 1 : 0);
      if (order > 0)
        throw new Error(`diagnostics out of order: ${prev.code}@${prev.span.start.offset} before ${d.code}@${d.span.start.offset}`);
    }
  });
  const keys = list.map((d) => `${d.code}\u0000${d.span.start.offset}\u0000${d.message}`);
  if (new Set(keys).size !== keys.length) throw new Error("duplicate diagnostics (same code, place and message)");
}

/** Compiles one input and checks the whole contract; throws (with the input) on any breach. */
function check(family: string, text: string, options: { expectValid?: boolean; twice?: boolean } = {}): CompileResult {
  inputs++;
  const stats = byFamily.get(family) ?? { total: 0, valid: 0 };
  byFamily.set(family, stats);
  stats.total++;
  let result: CompileResult;
  try {
    result = compile(FILE, text);
  } catch (e) {
    throw new Error(`compile() threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)} on ${describeInput(text)}`, {
      cause: e,
    });
  }
  try {
    const starts = lineStarts(text);
    if (result.valid !== (result.errors.length === 0)) throw new Error("`valid` disagrees with the error count");
    if (result.valid) {
      stats.valid++;
      if (!result.ast || !result.ir || !result.bundle) throw new Error("valid result without AST, IR or bundle");
      if (result.ir.rules.length > result.ast.rules.length) throw new Error("IR has more rules than the source");
    } else if (result.ir !== null || result.bundle !== null) throw new Error("invalid result with an IR or bundle");
    checkDiagnostics(result.errors, "error", text, starts);
    checkDiagnostics(result.warnings, "warning", text, starts);
    for (const d of [...result.errors, ...result.warnings]) codesSeen.set(d.code, (codesSeen.get(d.code) ?? 0) + 1);
    if (options.expectValid && !result.valid) {
      throw new Error(
        `generated policy is invalid: ${result.errors.map((e) => `${e.span.start.line}:${e.span.start.column} ${e.code} ${e.message}`).join("; ")}`,
      );
    }
    if (options.twice) {
      const again = compile(FILE, text);
      const shape = (r: CompileResult) => JSON.stringify([r.valid, r.errors, r.warnings, r.ir]);
      if (shape(again) !== shape(result)) throw new Error("compiling the same text twice gave different results");
    }
  } catch (e) {
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n  on ${describeInput(text)}`, { cause: e });
  }
  return result;
}

const params = (numRuns: number): fc.Parameters<unknown> => ({ seed: SEED, numRuns, endOnFailure: true });

// ---------------------------------------------------------------------------------------------------------
// Vocabulary

const PUNCTUATION = [
  "{",
  "}",
  "(",
  ")",
  "[",
  "]",
  ",",
  ":",
  "?",
  "|",
  "..",
  "==",
  "!=",
  "<=",
  ">=",
  "<",
  ">",
  "=",
  "+",
  "-",
  "*",
  "/",
  "%",
];
const NAMES = [
  "amount",
  "currency",
  "x",
  "present",
  "len",
  "abs",
  "min",
  "max",
  "foo",
  "K",
  "SANCTIONED",
  "_",
  "a1",
  "risk_score",
  "country",
];
const LITERALS = [
  '"a"',
  '"2.4.0-rc.1"',
  '"10.0.0.0/8"',
  '""',
  '"USD"',
  '"2025-01-01T00:00:00Z"',
  '"2025-13-01T00:00:00Z"',
  '"1.2.0"',
  '"payments.transfer"',
  '"\\u12"',
  '"\\ud800"',
  '"\\q"',
  '"\\"',
  "/^[A-Z]{2}$/",
  "/(/",
  "/[/",
  "/a{2,1}/",
  "/\\p{Nope}/",
  "//",
  "0",
  "1",
  "1.5",
  "-1",
  "1e400",
  "99999999999999999999",
  "1e-400",
  "9007199254740993",
  "0.1",
  "007",
  "1e",
  "1.",
  ".5",
];
const ODD = [
  "\u0000",
  "\r",
  "\n",
  "\r\n",
  "\t",
  "\v",
  "\f",
  "\uD800",
  "\uDC00",
  "\uDBFF\uDBFF",
  "\uFEFF",
  "\u2028",
  "\u2029",
  "\u00A0",
  "\u200B",
  "😀",
  "é",
  "\u0301",
  "\u007F",
  "\\",
  '"',
  "/",
  "#",
  "`",
  "'",
  "@",
  "$",
  "~",
  "^",
  "&",
  ";",
  "%",
  "!",
  ".",
  "\u{10FFFF}",
  "\uFFFE",
];
const VOCABULARY = [...KEYWORDS, ...PUNCTUATION, ...NAMES, ...LITERALS];

/** Any UTF-16 string, lone surrogates and control characters included. */
const anyChar = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
  { weight: 2, arbitrary: fc.constantFrom(...ODD) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c)) },
);
const junk = (maxLength: number) => fc.array(anyChar, { maxLength }).map((a) => a.join(""));

const long = fc.integer({ min: 1_000, max: 20_000 });
/** Insertions: odd characters, vocabulary, broken literals, and very long names, lines and numbers. */
const insertion: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...VOCABULARY).map((t) => ` ${t} `) },
  { weight: 3, arbitrary: fc.constantFrom(...VOCABULARY) },
  { weight: 4, arbitrary: junk(8) },
  { weight: 1, arbitrary: long.map((n) => "a".repeat(n)) },
  { weight: 1, arbitrary: long.map((n) => `# ${"x".repeat(n)}`) },
  { weight: 1, arbitrary: long.map((n) => `"${"y".repeat(n)}"`) },
  { weight: 1, arbitrary: fc.integer({ min: 20, max: 2_000 }).map((n) => "9".repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 400 }).map((n) => `0.${"0".repeat(n)}1`) },
  { weight: 1, arbitrary: fc.constantFrom("1e400", "99999999999999999999", "-1e400", "1.7976931348623157e309", "1e-400", "-0", "0e0") },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 8 }).map((n) => "(".repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 8 }).map((n) => ")".repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 200 }).map((n) => Array(n).fill("x").join(" and ")) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 200 }).map((n) => "[" + Array(n).fill("1").join(", ") + "]") },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 300 }).map((n) => "\n".repeat(n)) },
);

// ---------------------------------------------------------------------------------------------------------
// (b) Mutations, as data so a counterexample prints readably

const TOKEN = /\s+|#[^\r\n]*|"(?:[^"\\\r\n]|\\.)*"?|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|[A-Za-z_][A-Za-z0-9_]*|\.\.|[=!<>]=|[\s\S]/gu;

type Mutation =
  | { readonly op: "delete"; readonly at: number; readonly length: number }
  | { readonly op: "insert"; readonly at: number; readonly text: string }
  | { readonly op: "duplicate"; readonly at: number; readonly length: number }
  | { readonly op: "swap-units"; readonly at: number; readonly other: number }
  | { readonly op: "truncate"; readonly at: number }
  | { readonly op: "token-delete" | "token-duplicate"; readonly token: number }
  | { readonly op: "token-swap"; readonly token: number; readonly other: number }
  | { readonly op: "token-insert" | "token-replace"; readonly token: number; readonly text: string }
  | { readonly op: "line-endings"; readonly to: "\r" | "\r\n" | "\u2028" | "" }
  | { readonly op: "replace-number"; readonly token: number; readonly text: string }
  | { readonly op: "replace-string"; readonly token: number; readonly text: string };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant("delete" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ op: fc.constant("insert" as const), at: fc.nat(), text: insertion }),
  fc.record({ op: fc.constant("duplicate" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 60 }) }),
  fc.record({ op: fc.constant("swap-units" as const), at: fc.nat(), other: fc.nat() }),
  fc.record({ op: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ op: fc.constantFrom("token-delete" as const, "token-duplicate" as const), token: fc.nat() }),
  fc.record({ op: fc.constant("token-swap" as const), token: fc.nat(), other: fc.nat() }),
  fc.record({ op: fc.constantFrom("token-insert" as const, "token-replace" as const), token: fc.nat(), text: insertion }),
  fc.record({
    op: fc.constant("line-endings" as const),
    to: fc.constantFrom("\r" as const, "\r\n" as const, "\u2028" as const, "" as const),
  }),
  fc.record({
    op: fc.constant("replace-number" as const),
    token: fc.nat(),
    text: fc.constantFrom("1e400", "99999999999999999999", "9007199254740993", "1.5", "-0", "0.1e-999", "12345678901234567890.5"),
  }),
  fc.record({
    op: fc.constant("replace-string" as const),
    token: fc.nat(),
    text: fc.oneof(
      fc.constantFrom('"\\u12"', '"\\ud800"', '"\\udc00\\ud800"', '"\\x41"', '"\\q"', '"\u0001"', '""', '"   "', '"a', '"\\"'),
      junk(6).map((s) => encodeString(s)),
      junk(6).map((s) => `"${s}"`),
    ),
  }),
);

function applyMutation(text: string, m: Mutation): string {
  const pos = (n: number) => (text.length === 0 ? 0 : n % (text.length + 1));
  switch (m.op) {
    case "delete": {
      const i = pos(m.at);
      return text.slice(0, i) + text.slice(i + m.length);
    }
    case "insert": {
      const i = pos(m.at);
      return text.slice(0, i) + m.text + text.slice(i);
    }
    case "duplicate": {
      const i = pos(m.at);
      return text.slice(0, i + m.length) + text.slice(i, i + m.length) + text.slice(i + m.length);
    }
    case "swap-units": {
      if (text.length < 2) return text;
      const units = text.split("");
      const i = m.at % units.length;
      const j = m.other % units.length;
      [units[i], units[j]] = [units[j]!, units[i]!];
      return units.join("");
    }
    case "truncate":
      return text.slice(0, pos(m.at));
    case "line-endings":
      return text.replace(/\r?\n/g, m.to);
    default:
      break;
  }
  // Token-level: operate on the non-blank tokens, keep the blanks where they were.
  const tokens = text.match(TOKEN) ?? [];
  const solid = tokens.map((t, i) => (/^\s+$/.test(t) ? -1 : i)).filter((i) => i >= 0);
  if (solid.length === 0) return text;
  const pick = (n: number) => solid[n % solid.length]!;
  const i = pick(m.token);
  switch (m.op) {
    case "token-delete":
      tokens[i] = "";
      break;
    case "token-duplicate":
      tokens[i] = `${tokens[i]!} ${tokens[i]!}`;
      break;
    case "token-swap": {
      const j = pick(m.other);
      [tokens[i], tokens[j]] = [tokens[j]!, tokens[i]!];
      break;
    }
    case "token-insert":
      tokens[i] = `${m.text} ${tokens[i]!}`;
      break;
    case "token-replace":
      tokens[i] = m.text;
      break;
    case "replace-number": {
      const numbers = tokens.map((t, k) => (/^\d/.test(t) ? k : -1)).filter((k) => k >= 0);
      if (numbers.length > 0) tokens[numbers[m.token % numbers.length]!] = m.text;
      break;
    }
    case "replace-string": {
      const strings = tokens.map((t, k) => (t.startsWith('"') ? k : -1)).filter((k) => k >= 0);
      if (strings.length > 0) tokens[strings[m.token % strings.length]!] = m.text;
      break;
    }
  }
  return tokens.join("");
}

// ---------------------------------------------------------------------------------------------------------
// (c) Token soups and semantic soups

const separator = fc.constantFrom(" ", " ", " ", "", "\n", "\t", "\r\n", "  ");
const soupToken = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...VOCABULARY) },
  { weight: 1, arbitrary: fc.constantFrom(...ODD) },
  { weight: 1, arbitrary: fc.constantFrom("# comment", "#", "# é😀\uD800") },
);
const HEADERS = [
  "",
  'policy "a" version "1.0.0"\ngoverns "x"\n',
  'policy "a" version "1.0.0"\ngoverns "x" binding n\nsignals { n: number s?: string b: boolean e: "A" | "B" t: timestamp }\n',
  'policy "a" version "1.0.0"\ngoverns "x"\nsignals { n: integer 0..10 s: string matching /^a/ length 1..3 }\nconst K = [1, 2]\nrule r when ',
];
const tokenSoup = fc
  .tuple(fc.constantFrom(...HEADERS), fc.array(fc.tuple(soupToken, separator), { maxLength: 60 }))
  .map(([head, parts]) => head + parts.map(([t, s]) => t + s).join(""));

/** The right shape with random content: reaches build-ast, resolve and type-check with everything wrong. */
const ident = fc.constantFrom("n", "i", "s", "e", "b", "t", "o", "K", "L", "S", "B", "E", "nope", "len", "present", "amount", "x1");
const anyScalar = fc.oneof(
  fc.constantFrom(
    "0",
    "1",
    "-1",
    "2.5",
    "1e400",
    "99999999999999999999",
    "true",
    "false",
    '"A"',
    '"C"',
    '""',
    '"2025-01-01T00:00:00Z"',
    '"2025-02-30T00:00:00Z"',
    '"not a time"',
    '"\\ud800"',
  ),
  fc.integer({ min: -5, max: 5 }).map(String),
);
const semanticSoup = fc.letrec<{ expr: string; leaf: string; policy: string }>((tie) => ({
  leaf: fc.oneof(
    { weight: 3, arbitrary: ident },
    { weight: 2, arbitrary: anyScalar },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom("len", "present", "foo", "n"), fc.array(tie("leaf"), { maxLength: 2 }))
        .map(([f, a]) => `${f}(${a.join(", ")})`),
    },
    { weight: 1, arbitrary: fc.array(fc.oneof(anyScalar, ident), { maxLength: 4 }).map((xs) => `[${xs.join(", ")}]`) },
  ),
  expr: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 4, arbitrary: tie("leaf") },
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          tie("expr"),
          fc.constantFrom(
            "==",
            "!=",
            "<",
            "<=",
            ">",
            ">=",
            "+",
            "-",
            "*",
            "/",
            "and",
            "or",
            "in",
            "not in",
            "starts_with",
            "ends_with",
            "contains",
            "..",
          ),
          tie("expr"),
        )
        .map(([a, op, b]) => `${a} ${op} ${b}`),
    },
    { weight: 1, arbitrary: tie("expr").map((a) => `not ${a}`) },
    { weight: 1, arbitrary: tie("expr").map((a) => `(${a})`) },
    { weight: 1, arbitrary: tie("expr").map((a) => `-${a}`) },
    {
      weight: 1,
      arbitrary: fc.tuple(tie("expr"), fc.constantFrom("/^a/", "/(/", "/\\d/", "/\\p{L}/")).map(([a, r]) => `${a} matches ${r}`),
    },
    { weight: 1, arbitrary: fc.tuple(tie("expr"), tie("leaf"), tie("leaf")).map(([a, lo, hi]) => `${a} in ${lo}..${hi}`) },
  ),
  policy: fc
    .record({
      id: fc.constantFrom('"a"', '"A"', '"a..b"', '""', '"payments.transfer"', `"${"a".repeat(129)}"`),
      version: fc.constantFrom('"1.0.0"', '"1.0"', '"v1.0.0"', '"1.0.0+build"', '"01.0.0"'),
      action: fc.constantFrom('"x"', '"a b"', '""', '"a::b"', '"deploy:prod"'),
      binding: fc.array(ident, { maxLength: 3 }),
      signals: fc.array(
        fc.tuple(
          ident,
          fc.boolean(),
          fc.constantFrom(
            "number",
            "integer",
            "string",
            "boolean",
            "timestamp",
            '"A" | "B"',
            '"A" | "A"',
            '""',
            "number 5..1",
            "integer 1.5..3",
            "integer >= 1 >= 2",
            "number > 1e400",
            "string length 3..1",
            "string length -1..2",
            "string length 1.5..2",
            "string matching /(/",
            "string matching /a/ matching /b/",
            "integer 0..9007199254740993",
            "number -0..0",
            "number < 0 > 10",
          ),
        ),
        { maxLength: 6 },
      ),
      consts: fc.array(
        fc.tuple(
          ident,
          fc.oneof(
            anyScalar,
            fc.array(fc.oneof(anyScalar, ident), { maxLength: 4 }).map((xs) => `[${xs.join(", ")}]`),
          ),
        ),
        { maxLength: 4 },
      ),
      rules: fc.array(
        fc.tuple(ident, tie("expr"), fc.constantFrom("approve", "escalate", "reject"), fc.constantFrom('"ok"', '""', '"  "', '"\\u0000"')),
        {
          minLength: 1,
          maxLength: 4,
        },
      ),
      otherwise: fc.option(fc.constantFrom('approve "ok"', 'reject ""'), { nil: null }),
    })
    .map((p) =>
      [
        `policy ${p.id} version ${p.version}`,
        `governs ${p.action}${p.binding.length > 0 ? ` binding ${p.binding.join(", ")}` : ""}`,
        `signals {\n${p.signals.map(([n, opt, t]) => `  ${n}${opt ? "?" : ""}: ${t}`).join("\n")}\n}`,
        ...p.consts.map(([n, v]) => `const ${n} = ${v}`),
        ...p.rules.map(([n, e, v, r]) => `rule ${n} when ${e} ${v} ${r}`),
        ...(p.otherwise ? [`otherwise ${p.otherwise}`] : []),
        "",
      ].join("\n"),
    ),
})).policy;

// ---------------------------------------------------------------------------------------------------------

describe(`compile() never throws (seed ${SEED})`, () => {
  it(`(a) ${RUNS.valid} generated policies compile valid, with an IR`, () => {
    let n = 0;
    fc.assert(
      fc.property(policySource(), (text) => {
        check("valid", text, { expectValid: true, twice: n++ % 10 === 0 });
      }),
      params(RUNS.valid),
    );
  });

  it(`(b) ${RUNS.mutationBases * RUNS.mutantsPerBase} mutations of generated policies`, () => {
    const mutants = fc.array(fc.array(mutation, { minLength: 1, maxLength: 4 }), {
      minLength: RUNS.mutantsPerBase,
      maxLength: RUNS.mutantsPerBase,
    });
    fc.assert(
      fc.property(policySource({ rules: { min: 1, max: 5 } }), mutants, (text, plans) => {
        for (const plan of plans) check("mutation", plan.reduce(applyMutation, text), { twice: plan.length === 4 });
      }),
      params(RUNS.mutationBases),
    );
  });

  it(`(c) ${RUNS.randomStrings} random strings`, () => {
    const text = fc.oneof(
      { weight: 3, arbitrary: junk(200) },
      { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 300 }) },
      { weight: 2, arbitrary: fc.string({ unit: "grapheme-ascii", maxLength: 300 }) },
      { weight: 1, arbitrary: fc.constantFrom(...HEADERS).chain((h) => junk(80).map((j) => h + j)) },
    );
    fc.assert(
      fc.property(text, (t) => void check("random", t)),
      params(RUNS.randomStrings),
    );
  });

  it(`(c) ${RUNS.tokenSoups} token soups from the grammar's vocabulary`, () => {
    fc.assert(
      fc.property(tokenSoup, (t) => void check("token-soup", t)),
      params(RUNS.tokenSoups),
    );
  });

  it(`(c) ${RUNS.semanticSoups} policy-shaped soups with random names, types and calls`, () => {
    fc.assert(
      fc.property(semanticSoup, (t) => void check("semantic-soup", t, { twice: true })),
      params(RUNS.semanticSoups),
    );
  });

  it("edge inputs", () => {
    const edges = [
      "",
      " ",
      "\n",
      "\r",
      "\r\n",
      "\u0000",
      "\uFEFF",
      "\uD800",
      "#",
      "# only a comment",
      '"',
      "/",
      "policy",
      'policy "a"',
      'policy "a" version "1.0.0" governs "x" signals {}',
      'policy "a" version "1.0.0" governs "x" signals {} otherwise approve "y"',
      'policy "a" version "1.0.0" governs "x" signals { n: number } rule r when n > 1e400 approve "y"',
      'policy "a" version "1.0.0" governs "x" signals { n: number } rule r when n matches /a/ approve "y"',
      'policy "a" version "1.0.0" governs "x" signals { s: string } rule r when s matches /(/ approve "y"',
      'policy "a" version "1.0.0" governs "x" signals { s: string } rule r when present() approve "y"',
      'policy "a" version "1.0.0" governs "x" signals { s: string } rule r when len(s, s) > 1 approve "y"',
      'policy "a" version "1.0.0" governs "x" signals { s: string } rule r when s in s approve "y"',
      `${"\r".repeat(1000)}policy`,
      "a".repeat(200_000),
      `# ${"é😀".repeat(50_000)}`,
    ];
    for (const e of edges) check("edge", e);
  });

  it("fed at least 50,000 inputs", () => {
    const summary = [...byFamily].map(([f, s]) => `${f}: ${s.total} (${s.valid} valid)`).join(", ");
    const codes = [...codesSeen].sort(([a], [b]) => (a < b ? -1 : 1));
    console.info(
      `compiler-never-throws: ${inputs} inputs, seed ${SEED}: ${summary}\ncodes: ${codes.map(([c, n]) => `${c}×${n}`).join(" ")}`,
    );
    expect(inputs).toBeGreaterThanOrEqual(50_000);
    // The inputs must not all stop at the first phase: they reach every phase's diagnostics.
    expect(byFamily.get("mutation")!.valid).toBeGreaterThan(0);
    for (const phase of ["E1", "E2", "E3", "E4", "E5", "W4", "W6"]) {
      expect(
        codes.some(([c]) => c.startsWith(phase)),
        `no ${phase}xx diagnostic seen`,
      ).toBe(true);
    }
  });
});

/** Deep nesting and very long conditions are diagnostics (E202, E203), never a stack overflow. */
describe("deep nesting and long chains are reported, not thrown", () => {
  const head = 'policy "a" version "1.0.0"\ngoverns "x"\nsignals { n: number }\n';
  const cases: [string, string][] = [
    ["200 unclosed `(` in a condition", `${head}rule r when ${"(".repeat(200)}n > 1 approve "x"\n`],
    ["1,000 balanced parentheses", `${head}rule r when ${"(".repeat(1000)}n > 1${")".repeat(1000)} approve "x"\n`],
    ["10,000 `not`", `${head}rule r when ${"not ".repeat(10_000)}n > 1 approve "x"\n`],
    ["10,000-term sum", `${head}rule r when ${Array(10_000).fill("n").join(" + ")} > 1 approve "x"\n`],
  ];
  for (const [name, text] of cases) {
    it(name, () => {
      const r = check("limits", text);
      expect(r.errors.map((e) => e.code).some((c) => c === "E202" || c === "E203")).toBe(true);
    });
  }
});
