/**
 * @writ/sdk: typed clients for both HTTP surfaces (over undici), the same authorization workflow in-process over
 * @writ/runtime, and offline verification against pinned keys (docs/sdk.md). It imports no writ package but the
 * runtime.
 */
export { WritError, WritApiError, WritKeyError, type WritErrorCode, type NamedErrorCode, type KeyErrorCode, type ErrorDetail } from "./errors.js";
export type { PinnedKeys } from "./keys.js";
export type * from "./workflow.js";

export { GovernanceClient } from "./client/governance-client.js";
export { TransactionClient } from "./client/transaction-client.js";
export { DEFAULT_TIMEOUT_MS, type ClientOptions, type CallOptions } from "./client/http.js";
export { DEFAULT_RETRY, type RetryOptions } from "./client/retry.js";
export type * from "./client/governance-types.js";
export type * from "./client/audit-types.js";
export type * from "./client/transaction-types.js";

export { EmbeddedAuthorizer, type EmbeddedAuthorizerOptions } from "./embedded/embedded-authorizer.js";
export { openLmdbReplayStore } from "./embedded/stores.js";
export { MemoryReplayStore, type ReplayStore } from "@writ/runtime";

export { verifyAttestation, type AttestationVerifierOptions } from "./verify/attestation.js";
export { verifyOverrideRecord } from "./verify/override-record.js";
export { verifyExecutionProof, type ExecutionProofVerification } from "./verify/execution-proof.js";
export type { SignedRecordVerification } from "./verify/signed.js";
export type { Attestation, AttestationV1, AttestationV2, AttestationVerification, ExecutionProof, OverrideRecord, TrustRootDocument } from "@writ/runtime";
