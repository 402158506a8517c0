/**
 * @writ/conformance: the conformance suite of both HTTP surfaces, runnable against any implementation. It talks
 * HTTP only and imports no writ package (README.md, "Development"); cases are data (`cases/surface-{a,b}/*.json`,
 * docs/conformance.md), signatures are checked by the suite itself (docs/signing.md).
 */
export { runConformance, ConformanceSetupError, type ConformanceOptions } from "./runner.js";
export { runConformanceCli, usage, EXIT, type CliIo } from "./cli-main.js";
export { formatTable } from "./table.js";
export { loadCases, parseCaseFile, CaseFileError, DEFAULT_CASES_DIR } from "./load-cases.js";
export {
  compareSections,
  type ConformanceReport,
  type CaseResult,
  type Failure,
  type Outcome,
  type Totals,
  type SectionTotals,
} from "./report.js";
export { pinPublicKey, keyProblem, PinnedKeyError, SMALL_ORDER_KEYS, type PinnedKey } from "./pinned-key.js";
export { signatureProblem, decodeSignature, pae, signedBody, type SignedValue } from "./signature.js";
export { parseStrictJson, decodeUtf8, StrictJsonError, type JsonValue } from "./strict-json.js";
export type { Case, CaseFile, LoadedCase, Step, RequestSpec, Expect, SignatureCheck, Repeat, Surface, AuthVariant } from "./case-file.js";
