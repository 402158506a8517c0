/**
 * @writ/compiler: the writ policy language, its eight-phase compiler and the policy authors' tools.
 */
export * from "./portable.js";
export { compile, type CompileOptions, type CompileResult } from "./compile.js";
export { PHASES, PHASES_TO_IR, type Phase, type PhaseName } from "./phases/index.js";
export type { Bundle, EmitOptions } from "./phases/emit.js";
