import type { CstNode, IToken } from "chevrotain";
import { parseTokens } from "../syntax/grammar.js";
import { spanOf, type PhaseContext } from "./context.js";

/**
 * Phase parse. Guarantees: the tokens form a complete policy per the grammar (header, governs, signals,
 * constants, rules, optional catch-all, in that order). The parser recovers to report several errors
 * in one run; a tree with errors goes no further.
 */
export function parse(ctx: PhaseContext, tokens: IToken[]): CstNode {
  const { cst, errors } = parseTokens(tokens);
  for (const e of errors) {
    const t = e.token;
    if (Number.isNaN(t.startOffset) || t.tokenType.name === "EOF") {
      // Point just past the last real token: the end of the text may be blank lines.
      const last = tokens[tokens.length - 1];
      const end = last ? last.startOffset + last.image.length : 0;
      ctx.sink.report("E201", spanOf(ctx, end, end), e.message);
    } else {
      ctx.sink.report("E201", spanOf(ctx, t.startOffset, t.startOffset + t.image.length), e.message);
    }
  }
  return cst;
}
