import { Lexer, type IToken } from "chevrotain";
import { allTokens, UnterminatedRegex, UnterminatedString } from "../syntax/tokens.js";
import { spanOf, type PhaseContext } from "./context.js";

export interface LexOutput {
  readonly tokens: IToken[];
  readonly comments: IToken[];
}

let lexer: Lexer | undefined;

/**
 * Phase lex. Guarantees: the text is a sequence of known tokens; every string and regular expression is
 * terminated on its line. Unknown characters are reported once per run of them and skipped, so one
 * stray byte does not hide the errors after it.
 */
export function lex(ctx: PhaseContext): LexOutput {
  lexer ??= new Lexer(allTokens, { positionTracking: "full", ensureOptimizations: false });
  const result = lexer.tokenize(ctx.text);
  for (const err of result.errors) {
    const bad = ctx.text.slice(err.offset, err.offset + err.length);
    const first = String.fromCodePoint(bad.codePointAt(0) ?? 0);
    const shown = /[\x21-\x7e]/.test(first) ? `\`${first}\`` : `U+${(first.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
    ctx.sink.report("E101", spanOf(ctx, err.offset, err.offset + first.length), `unexpected character ${shown}`);
  }
  const tokens: IToken[] = [];
  for (const t of result.tokens) {
    if (t.tokenType === UnterminatedString) {
      ctx.sink.report("E102", spanOf(ctx, t.startOffset, t.startOffset + t.image.length), "string is not closed with `\"` before the end of the line");
    } else if (t.tokenType === UnterminatedRegex) {
      ctx.sink.report("E103", spanOf(ctx, t.startOffset, t.startOffset + t.image.length), "regular expression is not closed with `/` before the end of the line");
    } else {
      tokens.push(t);
    }
  }
  return { tokens, comments: result.groups["comments"] ?? [] };
}
