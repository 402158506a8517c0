import type { PolicyIr } from "@writ/runtime";
import type { Diagnostic } from "./diagnostics/diagnostic.js";
import { createContext } from "./phases/context.js";
import type { Bundle, EmitOptions } from "./phases/emit.js";
import { PHASES, type PhaseName, type PipelineState } from "./phases/index.js";
import type { PolicyAst } from "./syntax/ast.js";

export interface CompileOptions extends EmitOptions {
  /** Stop after this phase (`writ check` stops before emit). Default: run all eight. */
  readonly until?: PhaseName;
}

export interface CompileResult {
  readonly valid: boolean;
  readonly errors: readonly Diagnostic[];
  readonly warnings: readonly Diagnostic[];
  readonly ast: PolicyAst | null;
  readonly ir: PolicyIr | null;
  readonly bundle: Bundle | null;
  /** Milliseconds spent in each phase that ran. */
  readonly timings: readonly { readonly phase: PhaseName; readonly ms: number }[];
}

/**
 * Compiles one policy source. Never throws on user input: every problem with the source is a diagnostic.
 * `valid` is true when no phase reported an error; warnings do not make a policy invalid.
 */
export function compile(path: string, text: string, options: CompileOptions = {}): CompileResult {
  const { state, diagnostics: all, timings } = runPipeline(path, text, options);
  const errors = all.filter((d) => d.severity === "error");
  return {
    valid: errors.length === 0,
    errors,
    warnings: all.filter((d) => d.severity === "warning"),
    ast: errors.length === 0 ? (state.ast ?? null) : null,
    ir: errors.length === 0 ? (state.ir ?? null) : null,
    bundle: errors.length === 0 ? (state.bundle ?? null) : null,
    timings,
  };
}

/** The phases in order, with what each handed on; the golden tests read a phase's own output here. */
export function runPipeline(
  path: string,
  text: string,
  options: CompileOptions = {},
): { state: PipelineState; diagnostics: Diagnostic[]; timings: { phase: PhaseName; ms: number }[] } {
  const ctx = createContext(path, text);
  const state: PipelineState = {};
  const timings: { phase: PhaseName; ms: number }[] = [];
  for (const phase of PHASES) {
    const t0 = performance.now();
    phase.run(ctx, state, options);
    timings.push({ phase: phase.name, ms: performance.now() - t0 });
    if (phase.name === options.until) break;
    // A tolerant phase's errors stop the pipeline at the next halting phase, after it has added its own.
    if (phase.haltOnError && ctx.sink.errorCount > 0) break;
  }
  return { state, diagnostics: ctx.sink.all(), timings };
}
