/**
 * The part of @writ/compiler that runs in any JavaScript engine, a browser included: checking and lowering a policy in
 * memory, its diagnostics, formatting, the editor features, and deciding signals with the runtime's explanation.
 * Nothing here hashes, signs or touches a file. The index re-exports all of it; the playground's bundle
 * (docs/playground.md) maps `@writ/compiler` to this file, so using anything else there fails its build.
 */
export { DIAGNOSTICS, type DiagnosticCode, type DiagnosticInfo, type Severity } from "./diagnostics/codes.js";
export { renderDiagnostic, formatDiagnosticLine, type Diagnostic } from "./diagnostics/diagnostic.js";
export { LineIndex, type Position, type Span } from "./diagnostics/source.js";
export { COMPILER } from "./version.js";
export { formatSource, type FormatResult } from "./fmt/format.js";
export { KEYWORDS, type Keyword } from "./syntax/tokens.js";
export * from "./editor/index.js";
export { parseTestFile, TestFileError, type PolicyTestCase, type PolicyTestFile } from "./testing/test-file.js";
export { diffChecks } from "./editor/diff-checks.js";
export {
  diffPolicies,
  type PolicyDiff,
  type Region,
  type UndecidedRegion,
  type Outcome,
  type Witness,
  type DiffOptions,
} from "./diff/diff.js";
export type { PolicyVersion, SignalChange } from "./diff/space.js";
