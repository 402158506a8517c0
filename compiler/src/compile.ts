import type { PolicyIr } from "@writ/runtime";
import type { Diagnostic } from "./diagnostics/diagnostic.js";
import type { Bundle } from "./phases/emit.js";
import { PHASES, runPhases, type PhaseName, type PipelineOptions, type PipelineRun } from "./phases/index.js";
import type { PolicyAst } from "./syntax/ast.js";

/** `until` stops after that phase (`writ check` stops before emit); by default all eight run. */
export type CompileOptions = PipelineOptions;

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

/** The eight phases in order, with what each handed on; the golden tests read a phase's own output here. */
export function runPipeline(path: string, text: string, options: CompileOptions = {}): PipelineRun {
  return runPhases(PHASES, path, text, options);
}
