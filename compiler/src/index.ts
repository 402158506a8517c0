/**
 * @writ/compiler: the writ policy language, its eight-phase compiler and the policy authors' tools.
 */
export { compile, type CompileOptions, type CompileResult } from "./compile.js";
export { PHASES, type Phase, type PhaseName } from "./phases/index.js";
export type { Bundle, EmitOptions } from "./phases/emit.js";
export { DIAGNOSTICS, type DiagnosticCode, type DiagnosticInfo, type Severity } from "./diagnostics/codes.js";
export { renderDiagnostic, formatDiagnosticLine, type Diagnostic } from "./diagnostics/diagnostic.js";
export { LineIndex, type Position, type Span } from "./diagnostics/source.js";
export { COMPILER } from "./version.js";
export { formatSource, type FormatResult } from "./fmt/format.js";
export { KEYWORDS, type Keyword } from "./syntax/tokens.js";
export * from "./editor/index.js";
export { diffPolicies, type PolicyDiff, type Region, type UndecidedRegion, type Outcome, type Witness, type DiffOptions } from "./diff/diff.js";
export type { PolicyVersion, SignalChange } from "./diff/space.js";
