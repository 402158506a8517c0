import { Lexer, type IToken, type TokenType } from "chevrotain";
import { habitOf, LEXER_TOKENS } from "../syntax/habits.js";
import { Comment, UnterminatedRegex, UnterminatedString } from "../syntax/tokens.js";
import { spanOf, type PhaseContext } from "./context.js";

export interface LexOutput {
  readonly tokens: IToken[];
  readonly comments: IToken[];
}

let lexer: Lexer | undefined;

/**
 * Phase lex. Guarantees: the text is a sequence of known tokens; every string and regular expression is
 * terminated on its line. Unknown characters are reported once per run of them and skipped, so one
 * stray byte does not hide the errors after it. A habit from another language (syntax/habits.ts: `&&`, `//`, `/i`)
 * is reported with writ's spelling, and the parser is given that spelling in its place.
 */
export function lex(ctx: PhaseContext): LexOutput {
  lexer ??= new Lexer([...LEXER_TOKENS], { positionTracking: "full", ensureOptimizations: false });
  const result = lexer.tokenize(ctx.text);
  for (const err of result.errors) {
    const bad = ctx.text.slice(err.offset, err.offset + err.length);
    const first = String.fromCodePoint(bad.codePointAt(0) ?? 0);
    const shown = /[\x21-\x7e]/.test(first)
      ? `\`${first}\``
      : `U+${(first.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
    ctx.sink.report("E101", spanOf(ctx, err.offset, err.offset + first.length), `unexpected character ${shown}`);
  }
  const tokens: IToken[] = [];
  const comments = result.groups["comments"] ?? [];
  for (const t of result.tokens) {
    const habit = habitOf(t.tokenType);
    if (habit) {
      ctx.sink.report(habit.code, spanOf(ctx, t.startOffset, t.startOffset + t.image.length), habit.message(t.image), [
        habit.hint(t.image),
      ]);
      if (habit.instead === "comment") comments.push(as(t, Comment));
      else if (habit.instead !== "nothing") tokens.push(as(t, habit.instead));
    } else if (t.tokenType === UnterminatedString) {
      ctx.sink.report(
        "E102",
        spanOf(ctx, t.startOffset, t.startOffset + t.image.length),
        'string is not closed with `"` before the end of the line',
      );
    } else if (t.tokenType === UnterminatedRegex) {
      ctx.sink.report(
        "E103",
        spanOf(ctx, t.startOffset, t.startOffset + t.image.length),
        "regular expression is not closed with `/` before the end of the line",
      );
    } else {
      tokens.push(t);
    }
  }
  return { tokens, comments: comments.sort((a, b) => a.startOffset - b.startOffset) };
}

/** The token `t` as writ's `type`: what a habit stands for. */
function as(t: IToken, type: TokenType): IToken {
  return { ...t, tokenType: type, tokenTypeIdx: type.tokenTypeIdx! };
}
