import type { IToken } from "chevrotain";
import type { PolicyIr } from "@writ/runtime";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { runPhases } from "../phases/pipeline.js";
import { PHASES_TO_IR } from "../phases/to-ir.js";
import type { PolicyAst } from "../syntax/ast.js";
import { SymbolIndex } from "./symbols.js";

/** One check of an editor's text: what `writ check` reports, and the trees the editor features read. */
export interface SourceCheck {
  readonly path: string;
  readonly text: string;
  /** Errors and warnings, sorted by position. */
  readonly diagnostics: readonly Diagnostic[];
  /** Null when the text does not parse (lex or parse errors): the editor has only tokens then. */
  readonly ast: PolicyAst | null;
  readonly symbols: SymbolIndex | null;
  /** The lexer's tokens, comments apart; tokens the lexer reported as errors are left out. */
  readonly tokens: readonly IToken[];
  readonly comments: readonly IToken[];
  /** The policy lowered to IR, when the check ran `until: "lower"` and found no error; null otherwise. */
  readonly ir: PolicyIr | null;
}

export interface CheckOptions {
  /** `analyze` (the default) checks as `writ check` does; `lower` also lowers a policy without errors to its IR. */
  readonly until?: "analyze" | "lower";
}

/**
 * Checks a policy as an editor shows it: every phase up to analyze (as `writ check`, with nothing emitted), or up to
 * lower. Unlike `compile`, it keeps the syntax tree when a later phase reported errors, so names can still be found
 * in a policy with a type error. Runs in memory only (a browser included). Never throws on user input.
 */
export function checkSource(path: string, text: string, options: CheckOptions = {}): SourceCheck {
  const { state, diagnostics } = runPhases(PHASES_TO_IR, path, text, { until: options.until ?? "analyze" });
  const ast = state.ast ?? null;
  const resolved = state.symbols ?? null;
  return {
    path,
    text,
    diagnostics,
    ast,
    symbols: ast && resolved ? new SymbolIndex(ast, resolved) : null,
    tokens: state.tokens ?? [],
    comments: state.comments ?? [],
    ir: diagnostics.some((d) => d.severity === "error") ? null : (state.ir ?? null),
  };
}

/** Where a token ends: the offset just past its last character. */
export function tokenEnd(t: IToken): number {
  return t.startOffset + t.image.length;
}
