/**
 * Habits from other languages: what authors used to JavaScript, C, Python or SQL write that writ spells otherwise,
 * each with a message naming writ's spelling and a hint (docs/language.md, "Diagnostics"). One table, read by the lexer
 * (phases/lex.ts: a habit token, reported, then handed to the parser as what writ writes, so the rest of the policy is
 * checked), the parser's messages (`bareWord`) and resolve (`unquotedString`).
 *
 * What writ already accepts is no habit (`#` comments, `==`). The spellings below are refused by the grammar anyway,
 * so recognising them changes no valid policy: `=` and `||` only inside a condition (elsewhere `=` is a constant's and
 * `|` an enum's), flags only glued to a regular expression and never a keyword or a signal's name.
 */
import { createToken, type CustomPatternMatcherFunc, type IToken, type TokenType } from "chevrotain";
import type { DiagnosticCode } from "../diagnostics/codes.js";
import * as T from "./tokens.js";

export interface Habit {
  readonly name: string;
  /** E101 where the characters start no writ token (`&`, `!`, `'`), E201 where they are writ tokens out of place. */
  readonly code: Extract<DiagnosticCode, "E101" | "E201">;
  /** The characters the spelling can start with, and the spelling at `offset` (null when it is not there). */
  readonly startChars: readonly string[];
  readonly match: (text: string, offset: number, before: readonly IToken[]) => string | null;
  /** The message names what writ writes instead; `image` is the text matched. */
  readonly message: (image: string) => string;
  readonly hint: (image: string) => string;
  /** What the parser is given in its place: writ's token, a comment, or nothing. */
  readonly instead: TokenType | "comment" | "nothing";
}

/** The spelling `re` (sticky) matches at `offset`. */
const at =
  (re: RegExp) =>
  (text: string, offset: number): string | null => {
    re.lastIndex = offset;
    return re.exec(text)?.[0] ?? null;
  };

/** Tokens that end a condition, or start none: only `when` opens one. */
const OUTSIDE_CONDITIONS: ReadonlySet<TokenType> = new Set([
  T.Policy,
  T.Version,
  T.Governs,
  T.Binding,
  T.Signals,
  T.LCurly,
  T.RCurly,
  T.Const,
  T.Rule,
  T.Otherwise,
  T.Approve,
  T.Escalate,
  T.Reject,
]);
/** Further back than the longest condition the parser takes (phases/parse.ts MAX_CONDITION_TOKENS), the answer no longer matters. */
const LOOK_BACK = 1024;

/** Whether the next token is inside a rule's condition: a `when` comes before it, and nothing that ends the condition. */
function inCondition(before: readonly IToken[]): boolean {
  for (let i = before.length - 1; i >= Math.max(0, before.length - LOOK_BACK); i--) {
    const t = before[i]!.tokenType;
    if (t === T.When) return true;
    if (OUTSIDE_CONDITIONS.has(t)) return false;
  }
  return false;
}

const KEYWORDS: ReadonlySet<string> = new Set(T.KEYWORDS);
const flagsAt = at(/[A-Za-z_][A-Za-z0-9_]*/y);
const signalNameAt = at(/[ \t]*\??[ \t]*:/y);

/** Letters glued to the `/` that closes a regular expression, as JavaScript writes its flags (`/abc/i`). */
function regexFlags(text: string, offset: number, before: readonly IToken[]): string | null {
  const prev = before[before.length - 1];
  if (prev?.tokenType !== T.RegexLiteral || prev.startOffset + prev.image.length !== offset) return null;
  const word = flagsAt(text, offset);
  if (word === null || !/^[a-z]+$/.test(word) || KEYWORDS.has(word)) return null;
  // `matching /x/m: integer` declares a signal `m`; odd, but writ.
  return signalNameAt(text, offset + word.length) === null ? word : null;
}

const BOOLEANS = "the boolean operators are the words `and`, `or` and `not`";
const EQUALITY = '`==` and `!=` compare values of one type and never convert: `amount == "10"` is E502';
const quoted = (word: string): string => `"${word.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;

/** The habits the lexer recognises, in the order it tries them (before writ's own punctuation, so `===` before `==`). */
export const HABITS: readonly Habit[] = [
  {
    name: "slash comment",
    code: "E201",
    startChars: ["/"],
    match: at(/\/\/[^\r\n]*/y),
    message: () => "`//` does not start a comment: comments start with `#`",
    hint: () => "a comment runs from `#` to the end of the line",
    instead: "comment",
  },
  {
    name: "strict equality",
    code: "E201",
    startChars: ["="],
    match: at(/===/y),
    message: () => "`===` is not an operator: write `==`",
    hint: () => EQUALITY,
    instead: T.EqEq,
  },
  {
    name: "strict inequality",
    code: "E201",
    startChars: ["!"],
    match: at(/!==/y),
    message: () => "`!==` is not an operator: write `!=`",
    hint: () => EQUALITY,
    instead: T.NotEq,
  },
  {
    name: "&&",
    code: "E101",
    startChars: ["&"],
    match: at(/&&/y),
    message: () => "`&&` is not an operator: write `and`",
    hint: () => BOOLEANS,
    instead: T.And,
  },
  {
    name: "||",
    code: "E201",
    startChars: ["|"],
    match: (text, offset, before) => (inCondition(before) ? at(/\|\|/y)(text, offset) : null),
    message: () => "`||` is not an operator: write `or`",
    hint: () => BOOLEANS,
    instead: T.Or,
  },
  {
    name: "!",
    code: "E101",
    startChars: ["!"],
    match: at(/!(?!=)/y),
    message: () => "`!` is not an operator: write `not`",
    hint: () => `${BOOLEANS}; \`!\` is only part of \`!=\``,
    instead: T.Not,
  },
  {
    name: "= to compare",
    code: "E201",
    startChars: ["="],
    match: (text, offset, before) => (inCondition(before) ? at(/=(?!=)/y)(text, offset) : null),
    message: () => "`=` does not compare: write `==`",
    hint: () => "`=` only gives a constant its value: `const LIMIT = 100`",
    instead: T.EqEq,
  },
  {
    name: "regular expression flags",
    code: "E201",
    startChars: [..."abcdefghijklmnopqrstuvwxyz"],
    match: regexFlags,
    message: (flags) => `regular expressions take no flags: remove \`${flags}\` after the closing \`/\``,
    hint: () => "patterns are compiled with JavaScript's `u` flag and no other; to ignore case, list both cases: `/[Cc]asino/`",
    instead: "nothing",
  },
  {
    name: "single quotes",
    code: "E101",
    startChars: ["'"],
    match: at(/'[^'\r\n]*'/y),
    message: (image) => `strings are written in double quotes: write \`${quoted(image.slice(1, -1))}\``,
    hint: () => "only `\"` delimits a string; inside one, `'` is an ordinary character",
    instead: T.StringLiteral,
  },
];

const byToken = new Map<TokenType, Habit>();
for (const habit of HABITS) {
  const pattern: CustomPatternMatcherFunc = (text, offset, tokens) => {
    const image = habit.match(text, offset, tokens);
    return image === null ? null : [image];
  };
  const token = createToken({ name: `Habit: ${habit.name}`, pattern, line_breaks: false, start_chars_hint: [...habit.startChars] });
  byToken.set(token, habit);
}

/**
 * The lexer's tokens: writ's (syntax/tokens.ts), with the habit tokens after the strings, regular expressions and
 * comments (inside those every character is their own) and before everything else.
 */
export const LEXER_TOKENS: readonly TokenType[] = (() => {
  const after = T.allTokens.indexOf(T.UnterminatedRegex) + 1;
  return [...T.allTokens.slice(0, after), ...byToken.keys(), ...T.allTokens.slice(after)];
})();

/** The habit a lexed token is, if it is one. */
export function habitOf(token: TokenType): Habit | undefined {
  return byToken.get(token);
}

/** A message and hint for a diagnostic that a habit explains. */
export interface HabitNote {
  readonly message: string;
  readonly hint: string;
}

/** A bare word where the parser expects only a string (a reason, an enum value, a constant): the author meant it quoted. */
export function bareWord(expected: readonly TokenType[], actual: IToken): HabitNote | null {
  if (actual.tokenType !== T.Identifier || !expected.includes(T.StringLiteral) || expected.includes(T.Identifier)) return null;
  return {
    message: `strings are written in double quotes: \`${quoted(actual.image)}\``,
    hint: `\`${actual.image}\` is read as a name; a string value is always quoted`,
  };
}

/**
 * `now` where a name is declared (`signals { now: timestamp }`): reserved, since a caller that could send `now` would set
 * the clock a policy decides by. A policy of an earlier compiler that named a signal so renames it.
 */
export function reservedNow(expected: readonly TokenType[], actual: IToken): HabitNote | null {
  if (actual.tokenType !== T.Now || expected.includes(T.Now)) return null;
  return {
    message: "`now` is reserved: it is the decision instant, which no caller sends",
    hint: "rename the signal, constant or rule (`requested_at`, say); in a condition, `now` is the instant the decision is made at",
  };
}

/**
 * A name nothing declares, compared with a string: the author meant the string. `values`: the enum it is compared
 * with, when it is one (`tier == l1` where `tier: "l1" | "l2"`).
 */
export function unquotedString(name: string, beside: { readonly signal: string; readonly values: readonly string[] } | null): HabitNote {
  const isValue = beside !== null && beside.values.includes(name);
  return {
    message: `a string is written in double quotes: \`${quoted(name)}\``,
    hint: `did you mean the string \`${quoted(name)}\`${isValue ? `, one of the values of \`${beside.signal}\`` : ""}?`,
  };
}
