/**
 * @writ/sdk: typed clients for both HTTP surfaces (over undici), the same authorization workflow in-process over
 * @writ/runtime, and offline verification against pinned keys (docs/sdk.md). It imports no writ package but the
 * runtime and the wire types (@writ/wire), whose request and response shapes it re-exports under their names.
 */
export {
  WritError,
  WritApiError,
  WritKeyError,
  type WritErrorCode,
  type NamedErrorCode,
  type KeyErrorCode,
  type ErrorDetail,
} from "./errors.js";
export type { PinnedKeys } from "./keys.js";
export type { AuthorizationWorkflow } from "./workflow.js";
export type {
  UntypedPolicies,
  PolicyIdOf,
  SignalsOf,
  TypedEvaluateRequest,
  TypedDryRunRequest,
  TypedExecuteRequest,
} from "./typed-signals.js";

export { GovernanceClient } from "./client/governance-client.js";
export { TransactionClient } from "./client/transaction-client.js";
export { DEFAULT_TIMEOUT_MS, type ClientOptions, type CallOptions } from "./client/http.js";
export { DEFAULT_RETRY, type RetryOptions } from "./client/retry.js";
export type { DecisionQuery, SecurityEventQuery } from "./client/query.js";

// The wire shapes of both surfaces.
export type {
  // Surface A: the workflow (spec 1.9) and the legacy execute
  Signals,
  EvaluateRequest,
  EvaluateResponse,
  DryRunRequest,
  DryRunResponse,
  SimulateResponse,
  VerifyResponse,
  OverrideRequest,
  OverrideResponse,
  ExecutedActionInput,
  ConfirmExecutionRequest,
  ConfirmExecutionResponse,
  PolicySchema,
  ExecuteRequest,
  ExecuteResponse,
  // Surface A: the runtime and the audit trail
  Health,
  RuntimeManifestResponse,
  Capabilities,
  DecisionRow,
  DecisionDetail,
  AuditStats,
  AuditLogList,
  AuditLogStatus,
  SignedCheckpoint,
  InclusionProofJson,
  ConsistencyProofJson,
  SecurityEventRow,
  // Surface B
  PolicyRef,
  ExecuteTransactionRequest,
  CreateTransactionRequest,
  BusinessTransaction,
  Verification,
  Receipt,
  TrustRecord,
  ReplayResult,
  TransactionQuery,
  TransactionPage,
  PolicyValidation,
  VersionInfo,
  ServiceHealth,
  // Signed objects
  Attestation,
  AttestationV1,
  AttestationV2,
  ExecutionProof,
  OverrideRecord,
} from "@writ/wire";

export { EmbeddedAuthorizer, type EmbeddedAuthorizerOptions } from "./embedded/embedded-authorizer.js";
export { openLmdbReplayStore } from "./embedded/stores.js";
export { MemoryReplayStore, type ReplayStore } from "@writ/runtime";

export { verifyAttestation, type AttestationVerifierOptions } from "./verify/attestation.js";
export { verifyOverrideRecord } from "./verify/override-record.js";
export { verifyExecutionProof, type ExecutionProofVerification } from "./verify/execution-proof.js";
export type { SignedRecordVerification } from "./verify/signed.js";
export { verifyAuditExport, verifyConsistencyProof, verifyInclusionProof } from "./verify/audit-log.js";
export type { ExportReport, ProofVerification } from "@writ/runtime";
export type { AttestationVerification, TrustRootDocument } from "@writ/runtime";
