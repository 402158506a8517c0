import type { IToken } from "chevrotain";
import { createContext } from "../phases/context.js";
import { lex } from "../phases/lex.js";
import { tokenEnd } from "./check.js";
import { BUILTIN_INFO, KEYWORD_INFO, OPERATOR_INFO, keywordOf, tokenText, type KeywordRole, type OperatorRole } from "./lexicon.js";

/** What a highlighter colours a stretch of text as: a keyword or operator by its lexicon role, or a kind of token. */
export type HighlightKind =
  `keyword-${KeywordRole}` | `operator-${OperatorRole}` | "string" | "regex" | "number" | "comment" | "name" | "rule-name" | "builtin";

export interface HighlightSpan {
  /** Offsets in UTF-16 code units, `to` exclusive. */
  readonly from: number;
  readonly to: number;
  readonly kind: HighlightKind;
}

const LITERALS: Readonly<Record<string, HighlightKind>> = {
  StringLiteral: "string",
  RegexLiteral: "regex",
  NumberLiteral: "number",
  DurationLiteral: "number",
};

/**
 * The highlighting of a policy text, from the compiler's own lexer and lexicon (the roles the VS Code grammar is
 * generated from), so a browser editor colours exactly the words the language has. Text the lexer refuses (an
 * unknown character, an unclosed string) is left plain; its diagnostic says why.
 */
export function highlightSpans(text: string): HighlightSpan[] {
  const { tokens, comments } = lex(createContext("policy.writ", text));
  const spans = tokens.map((t, i): HighlightSpan => ({ from: t.startOffset, to: tokenEnd(t), kind: kindOf(t, tokens[i - 1]) }));
  for (const c of comments) spans.push({ from: c.startOffset, to: tokenEnd(c), kind: "comment" });
  return spans.sort((a, b) => a.from - b.from);
}

function kindOf(t: IToken, previous: IToken | undefined): HighlightKind {
  const literal = LITERALS[t.tokenType.name];
  if (literal) return literal;
  const keyword = keywordOf(t.tokenType);
  if (keyword) return `keyword-${KEYWORD_INFO[keyword].role}`;
  const operator = tokenText(t.tokenType);
  const info = operator === null ? undefined : OPERATOR_INFO[operator];
  if (info) return `operator-${info.role}`;
  if (previous && keywordOf(previous.tokenType) === "rule") return "rule-name";
  return Object.hasOwn(BUILTIN_INFO, t.image) ? "builtin" : "name";
}
