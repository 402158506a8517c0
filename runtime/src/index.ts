/**
 * @writ/runtime: the core every other package builds on. Of the other writ packages it imports only the wire format's
 * fixed strings (`@writ/wire/constants`: payload types, the provenance version, the policy id rule, the spec's error
 * messages), which its build bundles, and with `import type` its types (`@writ/wire/types`: the attestations, the
 * evidence, the answers), which its declaration files carry.
 */
export * from "./portable.js";
export { sha256Hex } from "./canonical/digest.js";
export { PAYLOAD_TYPES, type PayloadType } from "./signing/payload-types.js";
export { pae, signingInput, canonicalSigningInput } from "./signing/pae.js";
export {
  keyIdOf,
  loadSigningKeyPem,
  loadPublicKeyPem,
  publicKeyFromRaw,
  generateSigningKeyPair,
  type PublicKey,
  type SigningKey,
} from "./signing/keys.js";
export { signObject, signObjectVerified, signCanonicalAsync, verifyObject, decodeSignature } from "./signing/sign.js";
export {
  NODE_ED25519,
  assertSigningKey,
  selfVerificationFailed,
  type Ed25519Engine,
  type SelfVerifyingSignature,
} from "./signing/engine.js";
export {
  MANIFEST_VERSION,
  SCHEMA_VERSION,
  BUNDLE_FILES,
  MANIFEST_FILE,
  SIGNATURE_FILE,
  POLICY_ID_PATTERN,
  buildManifest,
  computeBundleHash,
  serializeIr,
  serializeJson,
  type BundleManifest,
  type BundleSignature,
} from "./bundle/format.js";
export { loadBundle, type BundleTrust, type LoadedBundle } from "./bundle/load.js";
export { SHA256_HEX_PATTERN, MAX_BUNDLE_REF_LENGTH, isBundleRef } from "./bundle/format.js";
export { MAX_SHOWN_CHARACTERS, MAX_MESSAGE_CHARACTERS, shown, shownValue } from "./bundle/shown.js";
export { isJsonObject } from "./bundle/json-object.js";
export { readBundleDirectory, type BundleExpectation } from "./bundle/load.js";
export { readBundleFile, MAX_BUNDLE_FILE_BYTES } from "./bundle/read-file.js";
export {
  ARCHIVE_VERSION,
  ARCHIVE_SUFFIX,
  ARCHIVE_FILE_NAMES,
  MAX_ARCHIVE_BYTES,
  archiveFileName,
  packBundleArchive,
  readBundleArchive,
  loadBundleArchive,
  type BundleArchive,
} from "./bundle/archive.js";
export {
  INDEX_FILE,
  INDEX_VERSION,
  MAX_INDEX_BYTES,
  MAX_SERIAL,
  ALIAS_PATTERN,
  signSourceIndex,
  readSourceIndex,
  type SourceIndex,
  type SourceIndexEntry,
  type SourceAlias,
} from "./bundle/source-index.js";
export {
  createTrustRoot,
  trustRootFromDocument,
  trustedKey,
  createSigner,
  type TrustRoot,
  type TrustRootDocument,
  type Signer,
} from "./attest/trust-root.js";
export {
  PROVENANCE_VERSION,
  RUNTIME_VERSION,
  RUNTIME_HASH,
  SUPPORTED_SCHEMA_VERSIONS,
  CAPABILITIES,
  EVALUATOR_SEMANTICS,
  EVALUATOR_SEMANTIC_HASH,
  SIGNAL_VALIDATION_SEMANTICS,
  runtimeDefinition,
  runtimeHashOf,
  type RuntimeDefinition,
  createRuntimeIdentity,
  type RuntimeManifest,
  type RuntimeIdentity,
} from "./attest/identity.js";
export {
  VERDICT_STATUS,
  executionFingerprint,
  signalsHash,
  createAttestation,
  createAttestationAsync,
  attestationBody,
  createLegacyAttestation,
  evaluatorHash,
  releaseManifestHash,
  type Attestation,
  type AttestationV1,
  type AttestationV2,
  type DecisionRecord,
  type DecisionStatus,
  type ExecutionState,
  type Outcome,
  type SelfVerifyingAttestation,
} from "./attest/attestation.js";
export {
  verifyAttestation,
  toEndpointVerification,
  type AttestationVerification,
  type CheckResult,
  type EndpointVerification,
  type VerificationChecks,
  type VerifierOptions,
} from "./attest/verify.js";
export * from "./errors/codes.js";
export { answerOf, type ErrorAnswer } from "./errors/answer.js";
export {
  RESERVATION_TTL_MS,
  FAILED_TTL_MS,
  type ReplayStore,
  type ReplayEntry,
  type ReplayResult,
  type ReplayState,
  type ReserveOptions,
  type ConsumeOptions,
  type ResolveOverrideOptions,
  type StoreHealth,
} from "./replay/store.js";
export type {
  ConfirmationAuditRecord,
  DecisionAuditRecord,
  DecisionAuditStatus,
  OverrideAuditRecord,
  RecordWriter,
  TransitionRecord,
  TransitionRecordKind,
} from "./replay/records.js";
export { MemoryReplayStore, DEFAULT_MEMORY_CAPACITY, type MemoryReplayStoreOptions } from "./replay/memory-store.js";
export { ReplayCapacityError, ReplayStoreClosedError, StoreUnavailableError } from "./replay/errors.js";
export {
  confirmExecution,
  confirmationAnswer,
  executedActionOf,
  type ConfirmationAnswer,
  type ExecutedActionRequest,
  confirmationKey,
  DEFAULT_TIME_WINDOW_SECONDS,
  type ConfirmDependencies,
  type ExecutedAction,
  type ExecutionProof,
  type MatchDetails,
} from "./attest/proof.js";
export {
  resolveOverride,
  pendingContext,
  type OverrideRequest,
  type OverrideRecord,
  type OverrideOutcome,
  type OverrideDependencies,
  type PendingContext,
} from "./attest/override.js";
export {
  PolicyRegistry,
  DEFAULT_BUNDLE_LOAD_TIMEOUT_MS,
  type RegistryOptions,
  type BundleAlias,
  type BundleSet,
  type LoadReport,
  type RefusedBundle,
  type ServedBundle,
  type VersionConflict,
} from "./authorizer/registry.js";
export { MemoryBundlePins, type BundlePins } from "./authorizer/pins.js";
export { BundleLoadTally, type BundleLoadOutcome, type BundleLoadTotal } from "./authorizer/load-tally.js";
export { endPhase, phaseStart, timedPhase, type Decided, type DecisionPhase, type DecisionReport, type PhaseTiming } from "./report.js";
export {
  Authorizer,
  SIMULATION_EXECUTION_ID,
  type AuthorizerOptions,
  type DryRun,
  type DryRunOptions,
  type EvaluateRequest,
  type Evaluated,
  type SerializedEvaluation,
  type Simulation,
} from "./authorizer/authorizer.js";
export {
  HASH_BYTES,
  EMPTY_ROOT,
  isHash,
  hashEquals,
  leafHash,
  nodeHash,
  rootOf,
  rootOfSubtrees,
  perfectSubtrees,
  inclusionProof,
  inclusionProofRanges,
  verifyInclusion,
  consistencyProof,
  consistencyProofRanges,
  verifyConsistency,
  type LeafRange,
  type PerfectSubtree,
} from "./audit-log/merkle.js";
export { MerkleFrontier, popcount, type CompletedSubtree } from "./audit-log/frontier.js";
export { HASH_HEX_PATTERN, isHashHex, toHex, hashFromHex } from "./audit-log/hex.js";
export {
  LOG_ENTRY_KINDS,
  isLogEntryKind,
  entryLeafInput,
  entryLeafHash,
  type LogEntry,
  type LogEntryKind,
  type LogRecord,
} from "./audit-log/entry.js";
export {
  LOG_ID_PATTERN,
  CHECKPOINT_TIMESTAMP_PATTERN,
  isCheckpointTimestamp,
  createCheckpoint,
  signCheckpoint,
  checkpointHash,
  verifyCheckpoint,
  type CheckpointBody,
  type SignedCheckpoint,
  type CheckpointFields,
  type CheckpointVerification,
} from "./audit-log/checkpoint.js";
export { verifyCheckpointChain, type ChainVerification } from "./audit-log/chain.js";
export {
  MAX_PROOF_HASHES,
  verifyInclusionProof,
  verifyConsistencyProof,
  type InclusionProofJson,
  type ConsistencyProofJson,
  type ProofVerification,
} from "./audit-log/proofs.js";
export type { ExportLine, PruneNote } from "./audit-log/export.js";
export {
  decisionDisagreement,
  filterFieldsOf,
  indexedDisagreement,
  type DecisionFields,
  type IndexedFields,
} from "./audit-log/decision-agreement.js";
export {
  ExportVerifier,
  decisionAttestationSigned,
  type ExportFailure,
  type ExportReport,
  type RecordCheck,
} from "./audit-log/export-verifier.js";
