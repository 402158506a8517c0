import type { CstNode, IToken } from "chevrotain";
import type { PolicyIr } from "@writ/runtime";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { PolicyAst } from "../syntax/ast.js";
import { createContext, type PhaseContext } from "./context.js";
import type { Bundle, EmitOptions } from "./emit.js";
import type { Symbols } from "./resolve.js";
import type { Typing } from "./expression-types.js";

/** What the phases hand each other. A phase reads only what the phases it runs after have written. */
export interface PipelineState {
  tokens?: IToken[];
  comments?: IToken[];
  cst?: CstNode;
  ast?: PolicyAst;
  symbols?: Symbols;
  typing?: Typing;
  ir?: PolicyIr;
  bundle?: Bundle;
}

export interface Phase {
  readonly name: PhaseName;
  /** What holds of the policy once this phase has run without errors. */
  readonly guarantee: string;
  /** Phases whose output this one reads; the list below is ordered so each comes after these. */
  readonly after: readonly PhaseName[];
  /** When true, errors in this phase stop the pipeline: later phases would only report their echoes. */
  readonly haltOnError: boolean;
  run(ctx: PhaseContext, state: PipelineState, options: EmitOptions): void;
}

export type PhaseName = "lex" | "parse" | "build-ast" | "resolve" | "type-check" | "analyze" | "lower" | "emit";

export interface PipelineOptions extends EmitOptions {
  /** Stop after this phase (`writ check` stops before emit). Default: run every phase given. */
  readonly until?: PhaseName;
}

export interface PipelineRun {
  readonly state: PipelineState;
  readonly diagnostics: Diagnostic[];
  readonly timings: { phase: PhaseName; ms: number }[];
}

/** Runs `phases` in order over one source, with what each handed on. */
export function runPhases(phases: readonly Phase[], path: string, text: string, options: PipelineOptions = {}): PipelineRun {
  const ctx = createContext(path, text);
  const state: PipelineState = {};
  const timings: { phase: PhaseName; ms: number }[] = [];
  for (const phase of phases) {
    const t0 = performance.now();
    phase.run(ctx, state, options);
    timings.push({ phase: phase.name, ms: performance.now() - t0 });
    if (phase.name === options.until) break;
    // A tolerant phase's errors stop the pipeline at the next halting phase, after it has added its own.
    if (phase.haltOnError && ctx.sink.errorCount > 0) break;
  }
  return { state, diagnostics: ctx.sink.all(), timings };
}
