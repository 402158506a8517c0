import type { TokenType } from "chevrotain";
import { FUNCTION_NAMES, OPERATORS as OPERATOR_TABLE } from "../syntax/operators.js";
import { allTokens, KEYWORDS, type Keyword } from "../syntax/tokens.js";

/**
 * What an editor needs to know about each word and symbol of the language: its role (which a syntax
 * highlighter turns into a colour) and a one-line doc (shown on hover and in completion). Keywords are typed
 * by the lexer's KEYWORDS, so a new keyword does not compile until it has a role and a doc here; operators
 * are read from the token table, and a test fails when one has no entry.
 */
export type KeywordRole = "declaration" | "verdict" | "logical" | "word-operator" | "type" | "constraint" | "boolean" | "instant";
export type OperatorRole = "comparison" | "arithmetic" | "assignment" | "range" | "enum" | "optional" | "separator" | "bracket";

export interface LexiconEntry<Role> {
  readonly role: Role;
  readonly doc: string;
}

export const KEYWORD_INFO: Readonly<Record<Keyword, LexiconEntry<KeywordRole>>> = {
  policy: { role: "declaration", doc: '`policy "ID" version "VERSION"`: the header naming the policy and its semantic version.' },
  version: { role: "declaration", doc: '`version "MAJOR.MINOR.PATCH"` in the header: the policy\'s semantic version.' },
  governs: { role: "declaration", doc: '`governs "ACTION"`: the action this policy decides, optionally with `binding`.' },
  binding: { role: "declaration", doc: "`binding NAME, ...`: signals the executed action must echo unchanged." },
  signals: { role: "declaration", doc: "`signals { ... }`: the typed inputs a caller sends, one declaration per line." },
  const: { role: "declaration", doc: "`const NAME = VALUE`: a named scalar or list, inlined when the policy is lowered." },
  rule: {
    role: "declaration",
    doc: '`rule NAME when CONDITION VERDICT "REASON"`: rules are tried in order; the first whose condition is true decides.',
  },
  when: { role: "declaration", doc: "`when CONDITION`: the boolean condition of a rule." },
  otherwise: { role: "declaration", doc: '`otherwise VERDICT "REASON"`: decides when no rule does.' },
  approve: { role: "verdict", doc: "Verdict: the action may go ahead." },
  escalate: { role: "verdict", doc: "Verdict: a human must decide." },
  reject: { role: "verdict", doc: "Verdict: the action is refused." },
  and: { role: "logical", doc: "`a and b`: true when both are true (Kleene logic: false wins over unknown)." },
  or: { role: "logical", doc: "`a or b`: true when either is true (Kleene logic: true wins over unknown)." },
  not: { role: "logical", doc: "`not a`: negation; `a not in L` tests that `a` is not in the list or range." },
  in: { role: "word-operator", doc: "`a in [x, y]`, `a in LIST`, `a in MIN..MAX`: membership in a list or an inclusive range." },
  true: { role: "boolean", doc: "The boolean true." },
  false: { role: "boolean", doc: "The boolean false." },
  string: { role: "type", doc: "Signal type: a JSON string; takes `matching /RE/` and `length MIN..MAX`." },
  number: { role: "type", doc: "Signal type: a JSON number; takes bounds (`> 0`, `<= 100`) or a range `MIN..MAX`." },
  integer: { role: "type", doc: "Signal type: a JSON number with no fractional part; takes bounds or a range." },
  decimal: {
    role: "type",
    doc: "Signal type `decimal(S)`: a JSON number of at most S decimal places (0 to 18), computed exactly; takes bounds or a range.",
  },
  boolean: { role: "type", doc: "Signal type: `true` or `false`." },
  timestamp: { role: "type", doc: "Signal type: an RFC 3339 date-time with an offset, compared as an instant." },
  ip: {
    role: "type",
    doc: 'Signal type: an IPv4 or IPv6 address, tested against CIDR ranges: `client_ip in_cidr ["10.0.0.0/8", "2001:db8::/32"]`.',
  },
  semver: {
    role: "type",
    doc: 'Signal type: a semantic version (SemVer 2.0.0), compared by precedence: `client_version < "2.4.0"`; pre-releases come before their release, build metadata is ignored.',
  },
  matching: {
    role: "constraint",
    doc: "`string matching /RE/`: the schema's `pattern`; the pattern may match anywhere (use `^` and `$`).",
  },
  length: { role: "constraint", doc: "`string length MIN..MAX`: the string has MIN to MAX code points, inclusive." },
  normalized: {
    role: "constraint",
    doc: "`string normalized`: the text is in Unicode normalization form C (NFC), so equal-looking text has equal code points.",
  },
  matches: { role: "word-operator", doc: "`s matches /RE/`: the pattern matches somewhere in the string (JavaScript `u` dialect)." },
  starts_with: { role: "word-operator", doc: "`a starts_with b`: string `a` begins with `b`." },
  ends_with: { role: "word-operator", doc: "`a ends_with b`: string `a` ends with `b`." },
  contains: { role: "word-operator", doc: "`a contains b`: string `b` occurs in `a`." },
  in_cidr: {
    role: "word-operator",
    doc: '`a in_cidr ["10.0.0.0/8", "2001:db8::/32"]`, `a not in_cidr LIST`: the address lies in one of the CIDR ranges.',
  },
  now: {
    role: "instant",
    doc: "`now`: the decision instant, a timestamp: the clock read once per decision, the attestation's `issuedAt` (`now > deadline`, `now - opened_at < 30d`). `writ eval --now` and a test case's `now` set it.",
  },
};

/** Keyed by the operator's text, as the lexer's token table spells it. */
export const OPERATOR_INFO: Readonly<Record<string, LexiconEntry<OperatorRole>>> = {
  "==": { role: "comparison", doc: "`a == b`: equal; both sides of one type (numbers, strings, booleans, timestamps as instants)." },
  "!=": { role: "comparison", doc: "`a != b`: not equal; both sides of one type." },
  "<": { role: "comparison", doc: "`a < b`: less than; numbers or timestamps. In a signal declaration: an exclusive upper bound." },
  "<=": { role: "comparison", doc: "`a <= b`: at most; numbers or timestamps. In a signal declaration: an inclusive upper bound." },
  ">": { role: "comparison", doc: "`a > b`: greater than; numbers or timestamps. In a signal declaration: an exclusive lower bound." },
  ">=": { role: "comparison", doc: "`a >= b`: at least; numbers or timestamps. In a signal declaration: an inclusive lower bound." },
  "+": { role: "arithmetic", doc: "`a + b`: addition (exact on decimals, IEEE-754 doubles on numbers; a result out of range faults)." },
  "-": { role: "arithmetic", doc: "`a - b`: subtraction; `-a`: negation of a number." },
  "*": { role: "arithmetic", doc: "`a * b`: multiplication (exact on decimals; a result out of range faults)." },
  "/": { role: "arithmetic", doc: "`a / b`: division of numbers and integers, not decimals; division by zero faults." },
  "%": {
    role: "arithmetic",
    doc: "`a % b`: the remainder of truncated division, with the sign of `a` (exact on decimals); by zero it faults.",
  },
  "=": { role: "assignment", doc: "`const NAME = VALUE`." },
  "..": { role: "range", doc: "`MIN..MAX`: an inclusive range (`integer 0..100`, `n in 1..5`)." },
  "|": { role: "enum", doc: '`"A" | "B"`: an enum signal, one of the listed strings.' },
  "?": { role: "optional", doc: "`NAME?: TYPE`: an optional signal; absent, it is unknown in conditions (test it with `present`)." },
  ":": { role: "separator", doc: "`NAME: TYPE`: a signal declaration." },
  ",": { role: "separator", doc: "Separates list items, call arguments and bound signals." },
  "(": { role: "bracket", doc: "Groups an expression, or opens a call's arguments." },
  ")": { role: "bracket", doc: "Closes a group or a call." },
  "[": { role: "bracket", doc: "Opens a list literal." },
  "]": { role: "bracket", doc: "Closes a list literal." },
  "{": { role: "bracket", doc: "Opens the signals block." },
  "}": { role: "bracket", doc: "Closes the signals block." },
};

export type Builtin = (typeof FUNCTION_NAMES)[number];

/** Each built-in function's line of help, from its declaration in the operator table (syntax/operators.ts). */
export const BUILTIN_INFO: Readonly<Record<Builtin, { readonly signature: string; readonly doc: string }>> = Object.fromEntries(
  FUNCTION_NAMES.map((name) => {
    const { doc } = OPERATOR_TABLE[name];
    return [name, { signature: doc.written.replaceAll("`", ""), doc: `${doc.result}; takes ${doc.operands}. For example ${doc.example}.` }];
  }),
) as Record<Builtin, { readonly signature: string; readonly doc: string }>;

/** Tokens with no text of their own: names, literals, comments and the lexer's error tokens. */
const NOT_OPERATORS = new Set([
  "WhiteSpace",
  "Comment",
  "StringLiteral",
  "UnterminatedString",
  "RegexLiteral",
  "UnterminatedRegex",
  "NumberLiteral",
  "DurationLiteral",
  "Identifier",
]);

const keywordSet: ReadonlySet<string> = new Set(KEYWORDS);

/** The text a fixed token stands for (`==`, `..`), from its pattern in the token table. */
export function tokenText(t: TokenType): string | null {
  return t.PATTERN instanceof RegExp ? t.PATTERN.source.replace(/\\/g, "") : null;
}

/** Every operator and punctuation symbol the lexer knows, longest first, read from its token table. */
export const OPERATORS: readonly string[] = allTokens
  .filter((t) => !NOT_OPERATORS.has(t.name))
  .map(tokenText)
  .filter((text): text is string => text !== null && !keywordSet.has(text))
  .sort((a, b) => b.length - a.length || (a < b ? -1 : 1));

/** The keyword a token stands for, when it is one. */
export function keywordOf(t: TokenType): Keyword | null {
  const text = tokenText(t);
  return text !== null && keywordSet.has(text) ? (text as Keyword) : null;
}
