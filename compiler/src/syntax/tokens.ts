import { createToken, Lexer, type CustomPatternMatcherFunc, type IToken, type TokenType } from "chevrotain";
import { IR_OPERATORS, type InfixOp, type LogicalOp, type PrefixOp } from "@writ/runtime";

export const Identifier = createToken({ name: "Identifier", pattern: /[A-Za-z_][A-Za-z0-9_]*/ });

const keyword = (word: string): TokenType =>
  createToken({ name: word[0]!.toUpperCase() + word.slice(1), pattern: new RegExp(word), longer_alt: Identifier });

/** Reserved words: a signal, constant or rule cannot take these names. */
export const KEYWORDS = [
  "policy",
  "version",
  "governs",
  "binding",
  "signals",
  "const",
  "rule",
  "when",
  "otherwise",
  "approve",
  "escalate",
  "reject",
  "and",
  "or",
  "not",
  "in",
  "true",
  "false",
  "string",
  "number",
  "integer",
  "decimal",
  "boolean",
  "timestamp",
  "semver",
  "ip",
  "matching",
  "length",
  "normalized",
  "matches",
  "starts_with",
  "ends_with",
  "contains",
  "in_cidr",
  "now",
] as const;
export type Keyword = (typeof KEYWORDS)[number];

// Longest words first so `starts_with` is never read as a prefix of another keyword.
const keywordTokens = new Map<Keyword, TokenType>([...KEYWORDS].sort((a, b) => b.length - a.length).map((w) => [w, keyword(w)]));
const kw = (w: Keyword): TokenType => keywordTokens.get(w)!;

export const Policy = kw("policy");
export const Version = kw("version");
export const Governs = kw("governs");
export const Binding = kw("binding");
export const Signals = kw("signals");
export const Const = kw("const");
export const Rule = kw("rule");
export const When = kw("when");
export const Otherwise = kw("otherwise");
export const Approve = kw("approve");
export const Escalate = kw("escalate");
export const Reject = kw("reject");
export const And = kw("and");
export const Or = kw("or");
export const Not = kw("not");
export const In = kw("in");
export const True = kw("true");
export const False = kw("false");
export const StringType = kw("string");
export const NumberType = kw("number");
export const IntegerType = kw("integer");
export const DecimalType = kw("decimal");
export const BooleanType = kw("boolean");
export const TimestampType = kw("timestamp");
export const SemverType = kw("semver");
export const IpType = kw("ip");
export const Matching = kw("matching");
export const Length = kw("length");
export const Normalized = kw("normalized");
export const Matches = kw("matches");
export const StartsWith = kw("starts_with");
export const EndsWith = kw("ends_with");
export const Contains = kw("contains");
export const InCidr = kw("in_cidr");
/** The decision instant: reserved, so no signal can be named `now` and a caller can never set the clock. */
export const Now = kw("now");

export const WhiteSpace = createToken({ name: "WhiteSpace", pattern: /[ \t\r\n]+/, group: Lexer.SKIPPED });
export const Comment = createToken({ name: "Comment", pattern: /#[^\r\n]*/, group: "comments" });

/** Escapes are checked when the AST is built, so a bad escape gets its own precise diagnostic. */
export const StringLiteral = createToken({ name: "StringLiteral", pattern: /"(?:[^"\\\r\n]|\\[^\r\n])*"/ });
export const UnterminatedString = createToken({ name: "UnterminatedString", pattern: /"(?:[^"\\\r\n]|\\[^\r\n])*\\?/ });
/** A duration: a whole number and a unit of fixed length (`500ms`, `30s`, `15m`, `12h`, `30d`; time.ts in the runtime). */
export const DurationLiteral = createToken({ name: "DurationLiteral", pattern: /\d+(?:ms|[smhd])(?![\w]|\.(?!\.))/ });
export const NumberLiteral = createToken({ name: "NumberLiteral", pattern: /\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/ });

/**
 * `/.../` is a regular expression only right after `matches` or `matching`; everywhere else `/` divides.
 * A custom matcher looks at the previous token to decide, which keeps one lexer mode.
 */
const afterRegexKeyword = (tokens: IToken[]): boolean => {
  const prev = tokens[tokens.length - 1];
  return prev !== undefined && (prev.tokenType === Matches || prev.tokenType === Matching);
};
// As in JavaScript, a `/` inside a character class `[...]` does not end the expression.
const regexBody = /\/(?:[^/\\[\r\n]|\\[^\r\n]|\[(?:[^\]\\\r\n]|\\[^\r\n])*\])*\//y;
const unterminatedRegexBody = /\/(?:[^/\\[\r\n]|\\[^\r\n]|\[(?:[^\]\\\r\n]|\\[^\r\n])*\]?)*\\?/y;
const stickyMatcher =
  (re: RegExp): CustomPatternMatcherFunc =>
  (text, offset, tokens) => {
    if (!afterRegexKeyword(tokens)) return null;
    re.lastIndex = offset;
    return re.exec(text);
  };
export const RegexLiteral = createToken({
  name: "RegexLiteral",
  pattern: stickyMatcher(regexBody),
  line_breaks: false,
  start_chars_hint: ["/"],
});
export const UnterminatedRegex = createToken({
  name: "UnterminatedRegex",
  pattern: stickyMatcher(unterminatedRegexBody),
  line_breaks: false,
  start_chars_hint: ["/"],
});

export const LCurly = createToken({ name: "LCurly", pattern: /\{/ });
export const RCurly = createToken({ name: "RCurly", pattern: /\}/ });
export const LParen = createToken({ name: "LParen", pattern: /\(/ });
export const RParen = createToken({ name: "RParen", pattern: /\)/ });
export const LBracket = createToken({ name: "LBracket", pattern: /\[/ });
export const RBracket = createToken({ name: "RBracket", pattern: /\]/ });
export const Comma = createToken({ name: "Comma", pattern: /,/ });
export const Colon = createToken({ name: "Colon", pattern: /:/ });
export const Question = createToken({ name: "Question", pattern: /\?/ });
export const Pipe = createToken({ name: "Pipe", pattern: /\|/ });
export const DotDot = createToken({ name: "DotDot", pattern: /\.\./ });
export const EqEq = createToken({ name: "EqEq", pattern: /==/ });
export const NotEq = createToken({ name: "NotEq", pattern: /!=/ });
export const LtEq = createToken({ name: "LtEq", pattern: /<=/ });
export const GtEq = createToken({ name: "GtEq", pattern: />=/ });
export const Lt = createToken({ name: "Lt", pattern: /</ });
export const Gt = createToken({ name: "Gt", pattern: />/ });
export const Equals = createToken({ name: "Equals", pattern: /=/ });
export const Plus = createToken({ name: "Plus", pattern: /\+/ });
export const Minus = createToken({ name: "Minus", pattern: /-/ });
export const Star = createToken({ name: "Star", pattern: /\*/ });
export const Slash = createToken({ name: "Slash", pattern: /\// });
export const Percent = createToken({ name: "Percent", pattern: /%/ });

/** Punctuation by spelling; the lexer tries longer spellings first, so `<=` is never `<` then `=`. */
const PUNCTUATION = {
  "{": LCurly,
  "}": RCurly,
  "(": LParen,
  ")": RParen,
  "[": LBracket,
  "]": RBracket,
  ",": Comma,
  ":": Colon,
  "?": Question,
  "|": Pipe,
  "..": DotDot,
  "==": EqEq,
  "!=": NotEq,
  "<=": LtEq,
  ">=": GtEq,
  "<": Lt,
  ">": Gt,
  "=": Equals,
  "+": Plus,
  "-": Minus,
  "*": Star,
  "/": Slash,
  "%": Percent,
} as const;

const KEYWORD_TOKENS = Object.fromEntries(keywordTokens) as Readonly<Record<Keyword, TokenType>>;

/** The symbol of every operator written as a token (the runtime's operator table names them). */
type OperatorSymbol = (typeof IR_OPERATORS)[InfixOp | PrefixOp | LogicalOp]["symbol"];

/**
 * The token of each operator symbol. An operator whose symbol is neither a keyword nor punctuation above does not
 * compile; once it is either, the lexer knows it.
 */
export const OPERATOR_TOKENS: Readonly<Record<OperatorSymbol, TokenType>> = { ...KEYWORD_TOKENS, ...PUNCTUATION };

/**
 * The token an operator is written with: its runtime symbol, lexed here. Here and not in the operator table
 * (operators.ts), so that code that only prints or describes operators does not load chevrotain: `writ eval` of a
 * bundle parses nothing.
 */
export function tokenOf(op: InfixOp | PrefixOp | LogicalOp): TokenType {
  return OPERATOR_TOKENS[IR_OPERATORS[op].symbol];
}

/** The operator a token stands for at a level (the grammar consumes only tokens of the table). */
export function operatorAt<Op extends InfixOp | PrefixOp>(ops: readonly Op[], token: TokenType): Op {
  const op = ops.find((o) => tokenOf(o) === token);
  if (op === undefined) throw new Error(`no operator is written \`${token.name}\` here`);
  return op;
}

const bySpellingLength = (a: string, b: string): number => b.length - a.length;

export const allTokens: TokenType[] = [
  WhiteSpace,
  Comment,
  StringLiteral,
  UnterminatedString,
  RegexLiteral,
  UnterminatedRegex,
  DurationLiteral,
  NumberLiteral,
  ...keywordTokens.values(),
  Identifier,
  ...Object.keys(PUNCTUATION)
    .sort(bySpellingLength)
    .map((p) => PUNCTUATION[p as keyof typeof PUNCTUATION]),
];
