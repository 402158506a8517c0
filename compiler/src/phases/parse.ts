import type { CstNode, IToken } from "chevrotain";
import { parseTokens } from "../syntax/grammar.js";
import { spanOf, type PhaseContext } from "./context.js";

/**
 * Limits that keep every later phase's recursion bounded, far above any policy a person writes:
 * parentheses plus prefix operators (`not`, unary `-`) nested at most MAX_NESTING deep, and a rule's
 * condition at most MAX_CONDITION_TOKENS tokens (a chain of `+` builds a tree as deep as it is long).
 */
export const MAX_NESTING = 32;
export const MAX_CONDITION_TOKENS = 1000;

/**
 * Phase parse. Guarantees: the tokens form a complete policy per the grammar (header, governs, signals,
 * constants, rules, optional catch-all, in that order), within the nesting and length limits. The parser
 * recovers to report several errors in one run; a tree with errors goes no further.
 */
export function parse(ctx: PhaseContext, tokens: IToken[]): CstNode | undefined {
  if (!withinLimits(ctx, tokens)) return undefined;
  const { cst, errors } = parseTokens(tokens);
  for (const e of errors) {
    const t = e.token;
    if (Number.isNaN(t.startOffset) || t.tokenType.name === "EOF") {
      // Point just past the last real token: the end of the text may be blank lines.
      const last = tokens[tokens.length - 1];
      const end = last ? last.startOffset + last.image.length : 0;
      ctx.sink.report("E201", spanOf(ctx, end, end), e.message, e.notes);
    } else {
      ctx.sink.report("E201", spanOf(ctx, t.startOffset, t.startOffset + t.image.length), e.message, e.notes);
    }
  }
  return cst;
}

/** Checks the limits on the token stream, before the recursive-descent parser could overflow its stack. */
function withinLimits(ctx: PhaseContext, tokens: readonly IToken[]): boolean {
  let depth = 0;
  let prefixRun = 0;
  let conditionStart = -1;
  const tokenSpan = (t: IToken) => spanOf(ctx, t.startOffset, t.startOffset + t.image.length);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const name = t.tokenType.name;
    if (name === "LParen") depth++;
    else if (name === "RParen") depth = Math.max(0, depth - 1);
    const prefix = name === "Not" || (name === "Minus" && isOperandStart(tokens[i - 1]));
    prefixRun = prefix ? prefixRun + 1 : name === "LParen" ? prefixRun : 0;
    if (depth + prefixRun > MAX_NESTING) {
      ctx.sink.report(
        "E202",
        tokenSpan(t),
        `expression nested more than ${MAX_NESTING} deep (parentheses, \`not\` and unary \`-\`); split it into simpler rules`,
      );
      return false;
    }
    if (name === "When") conditionStart = i;
    else if (name === "Rule" || name === "Otherwise") conditionStart = -1;
    if (conditionStart >= 0 && i - conditionStart > MAX_CONDITION_TOKENS) {
      ctx.sink.report(
        "E203",
        tokenSpan(tokens[conditionStart]!),
        `condition longer than ${MAX_CONDITION_TOKENS} tokens; split it into several rules or use a constant list`,
      );
      return false;
    }
  }
  return true;
}

/** A `-` is unary where an operand may start: after an operator, `(`, `,`, `when` or nothing. */
function isOperandStart(prev: IToken | undefined): boolean {
  if (!prev) return true;
  return !["NumberLiteral", "DurationLiteral", "StringLiteral", "Identifier", "RParen", "True", "False", "RBracket"].includes(
    prev.tokenType.name,
  );
}
