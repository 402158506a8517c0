import { BUILTIN_INFO, KEYWORD_INFO, OPERATOR_INFO, OPERATORS, type KeywordRole, type OperatorRole } from "@writ/compiler";

/**
 * The TextMate grammar of writ, generated from the compiler's lexicon (its keywords and the operators of its
 * token table), so highlighting cannot drift from the language: a new keyword or operator gets its colour
 * from its role. Scope names follow the TextMate conventions themes colour.
 */
const KEYWORD_SCOPE: Record<KeywordRole, string> = {
  declaration: "keyword.other.declaration.writ",
  verdict: "keyword.control.verdict.writ",
  logical: "keyword.operator.logical.writ",
  "word-operator": "keyword.operator.word.writ",
  type: "support.type.writ",
  constraint: "keyword.other.constraint.writ",
  boolean: "constant.language.boolean.writ",
  instant: "constant.language.now.writ",
};

const OPERATOR_SCOPE: Record<OperatorRole, string> = {
  comparison: "keyword.operator.comparison.writ",
  arithmetic: "keyword.operator.arithmetic.writ",
  assignment: "keyword.operator.assignment.writ",
  range: "keyword.operator.range.writ",
  enum: "keyword.operator.enum.writ",
  optional: "keyword.operator.optional.writ",
  separator: "punctuation.separator.writ",
  bracket: "punctuation.section.brackets.writ",
};

export const SCOPES = {
  comment: "comment.line.number-sign.writ",
  string: "string.quoted.double.writ",
  escape: "constant.character.escape.writ",
  invalidEscape: "invalid.illegal.escape.writ",
  regex: "string.regexp.writ",
  number: "constant.numeric.writ",
  ruleName: "entity.name.function.rule.writ",
  constantName: "variable.other.constant.writ",
  signalName: "variable.other.signal.writ",
  builtin: "support.function.builtin.writ",
  keyword: KEYWORD_SCOPE,
  operator: OPERATOR_SCOPE,
} as const;

const NAME = "[A-Za-z_][A-Za-z0-9_]*";
const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
const words = (ws: readonly string[]): string => `\\b(?:${ws.map(escapeRegex).join("|")})\\b`;

/** The keywords of one role, or of several. */
const keywordsOf = (...roles: KeywordRole[]): string[] =>
  Object.entries(KEYWORD_INFO)
    .filter(([, info]) => roles.includes(info.role))
    .map(([word]) => word);

export function writGrammar(): Record<string, unknown> {
  const roles = [...new Set(Object.values(KEYWORD_INFO).map((i) => i.role))];
  // One alternative per operator, longest first, each captured on its own so `==` is never read as `=` `=`.
  const operatorPattern = OPERATORS.map((op) => `(${escapeRegex(op)})`).join("|");
  const operatorCaptures = Object.fromEntries(OPERATORS.map((op, i) => [String(i + 1), { name: OPERATOR_SCOPE[OPERATOR_INFO[op]!.role] }]));
  return {
    $schema: "https://raw.githubusercontent.com/martinring/tmlanguage/master/tmlanguage.json",
    name: "writ",
    scopeName: "source.writ",
    fileTypes: ["writ"],
    patterns: [
      "comment",
      "string",
      "regex",
      "declared-name",
      "signal-declaration",
      "builtin-call",
      "keywords",
      "number",
      "operators",
      "names",
    ].map((r) => ({ include: `#${r}` })),
    repository: {
      comment: { name: SCOPES.comment, match: "#.*$" },
      string: {
        name: SCOPES.string,
        begin: '"',
        end: '"|$',
        patterns: [
          { name: SCOPES.escape, match: '\\\\(?:["\\\\/bfnrt]|u[0-9A-Fa-f]{4})' },
          { name: SCOPES.invalidEscape, match: "\\\\." },
        ],
      },
      // A pattern `/.../` follows `matches` or `matching`; everywhere else `/` divides (as in the lexer).
      regex: {
        match: `\\b(?:(matches)|(matching))\\s*(/(?:[^/\\\\\\[]|\\\\.|\\[(?:[^\\]\\\\]|\\\\.)*\\])*/?)`,
        captures: {
          "1": { name: KEYWORD_SCOPE[KEYWORD_INFO.matches.role] },
          "2": { name: KEYWORD_SCOPE[KEYWORD_INFO.matching.role] },
          "3": { name: SCOPES.regex },
        },
      },
      "declared-name": {
        patterns: [
          { match: `\\b(rule)\\s+(${NAME})`, captures: { "1": { name: KEYWORD_SCOPE.declaration }, "2": { name: SCOPES.ruleName } } },
          { match: `\\b(const)\\s+(${NAME})`, captures: { "1": { name: KEYWORD_SCOPE.declaration }, "2": { name: SCOPES.constantName } } },
        ],
      },
      "signal-declaration": {
        match: `\\b(${NAME})\\s*(\\?)?\\s*(:)`,
        captures: { "1": { name: SCOPES.signalName }, "2": { name: OPERATOR_SCOPE.optional }, "3": { name: OPERATOR_SCOPE.separator } },
      },
      "builtin-call": { match: `${words(Object.keys(BUILTIN_INFO))}(?=\\s*\\()`, name: SCOPES.builtin },
      keywords: { patterns: roles.map((role) => ({ name: KEYWORD_SCOPE[role], match: words(keywordsOf(role)) })) },
      // A duration (`30d`, `500ms`) is a number with its unit.
      number: { name: SCOPES.number, match: "\\b\\d+(?:(?:ms|[smhd])|(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)\\b" },
      operators: { match: operatorPattern, captures: operatorCaptures },
      // Constants are UPPER_CASE by convention (docs/language.md); other names in conditions are signals.
      names: {
        patterns: [
          { name: SCOPES.constantName, match: "\\b[A-Z][A-Z0-9_]*\\b" },
          { name: SCOPES.signalName, match: `\\b${NAME}\\b` },
        ],
      },
    },
  };
}
