import type { BundleManifest } from "../bundle/format.js";
import { BUNDLE_FILES } from "../bundle/format.js";
import { canonicalJson } from "../canonical/jcs.js";
import { attestationBodyText, signedAttestationText } from "./attestation-text.js";
import { sha256Hex } from "../canonical/digest.js";
import type { Verdict } from "../ir/types.js";
import type { AttestationV1, AttestationV2, DecisionStatus, ExecutionState, Outcome } from "@writ/wire/types";
import { PAYLOAD_TYPES } from "../signing/payload-types.js";
import { signCanonical, signCanonicalAsync, signObject } from "../signing/sign.js";
import { EVALUATOR_SEMANTIC_HASH, PROVENANCE_VERSION, RUNTIME_HASH, RUNTIME_VERSION, type RuntimeIdentity } from "./identity.js";
import type { Signer } from "./trust-root.js";

export type { Attestation, AttestationV1, AttestationV2, DecisionStatus, ExecutionState, Outcome } from "@writ/wire/types";

/**
 * How a policy verdict reads in an attestation. Only `approve` authorizes; `escalate` waits for a human
 * (spec 1.4: a pending decision is not authorized); `reject` is final.
 */
export const VERDICT_STATUS: Readonly<
  Record<Verdict, { status: DecisionStatus; executionState: ExecutionState; requiresOverride: boolean }>
> = {
  approve: { status: "approved", executionState: "completed", requiresOverride: false },
  escalate: { status: "pending_override", executionState: "pending_override", requiresOverride: true },
  reject: { status: "rejected", executionState: "completed", requiresOverride: false },
};

/**
 * The replay key of an execution: SHA-256 over the JCS form of `{domain, executionId}`. It depends on the
 * executionId alone, so an executionId is consumed once whatever policy or signals it is sent with (INV-013),
 * and the store key is fixed-length whatever the caller's id looks like.
 */
export function executionFingerprint(executionId: string): string {
  // The JCS text of `{domain, executionId}`, written directly: the members are fixed and in order.
  return sha256Hex(`{"domain":"writ.execution-fingerprint.v1","executionId":${canonicalJson(executionId)}}`);
}

/** `signalsHash` (docs/signing.md): lowercase hex SHA-256 of the JCS form of the signal values. */
export function signalsHash(signals: Readonly<Record<string, unknown>>): string {
  return sha256Hex(canonicalJson(signals));
}

/** What was decided, for which execution, under which bundle, and when. */
export interface DecisionRecord {
  readonly executionId: string;
  readonly bundle: BundleManifest;
  /** The signals the policy binds to its action (`governs … binding`), which an executed action must echo. */
  readonly binding: readonly string[];
  readonly signals: Readonly<Record<string, unknown>>;
  readonly verdict: Verdict;
  readonly reason: string;
  /** ISO 8601 instant of the decision: an action stamped before it is outside the time window. */
  readonly issuedAt: string;
}

/** The bound signals' values, in binding order; an absent optional signal is left out. */
function actionBinding(d: DecisionRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of d.binding) if (Object.prototype.hasOwnProperty.call(d.signals, name)) out[name] = d.signals[name];
  return out;
}

function outcomeOf(d: DecisionRecord): Outcome {
  return { action: d.verdict, requires_override: VERDICT_STATUS[d.verdict].requiresOverride, reason: d.reason };
}

/**
 * Signs a variant 1 attestation. The signature is verified against the signer's public key before this
 * returns (spec 2.2 self-verify; `signCanonical` throws otherwise), so no unverifiable attestation leaves.
 */
export function createAttestation(d: DecisionRecord, signer: Signer, runtime: RuntimeIdentity): AttestationV1 {
  const body = attestationBody(d, signer.trustRoot.version, signer.key.keyId, runtime.manifestHash);
  // `body` is this call's own object: adding the member costs one cached hidden-class transition, a spread into a
  // new object of fourteen members a microsecond.
  return Object.assign(body, { signature: signCanonical(PAYLOAD_TYPES.attestation, attestationBodyText(body), signer.key) });
}

/** An attestation whose self-verification is still running (`SelfVerifyingSignature`). */
export interface SelfVerifyingAttestation<A> {
  readonly attestation: A;
  /** The attestation's JSON text, made once (for a variant 1 attestation, its JCS form: `signedAttestationText`). */
  readonly text: string;
  /** Resolves once the signature verified against the signer's public key; rejects (KeyError) if it did not. */
  readonly verified: Promise<void>;
}

/**
 * {@link createAttestation} through the signer's `Ed25519Engine` (`signCanonicalAsync`; node:crypto on the thread
 * pool unless the signer names another), resolving once signed: the caller overlaps self-verification with other
 * work and releases the attestation only after `verified`.
 */
export async function createAttestationAsync(
  d: DecisionRecord,
  signer: Signer,
  runtime: RuntimeIdentity,
): Promise<SelfVerifyingAttestation<AttestationV1>> {
  const body = attestationBody(d, signer.trustRoot.version, signer.key.keyId, runtime.manifestHash);
  const bodyText = attestationBodyText(body);
  const signed = await signCanonicalAsync(PAYLOAD_TYPES.attestation, bodyText, signer.key, signer.engine);
  return {
    attestation: Object.assign(body, { signature: signed.signature }),
    text: signedAttestationText(bodyText, signed.signature),
    verified: signed.verified,
  };
}

/** The variant 1 attestation before signing: what `createAttestation` signs and `simulate` previews. */
export function attestationBody(
  d: DecisionRecord,
  trustRootVersion: string,
  signerKeyId: string,
  manifestHash: string,
): Omit<AttestationV1, "signature"> {
  // One object literal, no spread: V8 builds a spread followed by more members several times slower, and the body is
  // built for every attestation (cost: docs/benchmarks.md, "Runtime").
  return {
    executionId: d.executionId,
    execution_fingerprint: executionFingerprint(d.executionId),
    policyId: d.bundle.policyId,
    policyVersion: d.bundle.version,
    schemaVersion: d.bundle.schemaVersion,
    runtimeVersion: RUNTIME_VERSION,
    runtimeHash: RUNTIME_HASH,
    actionType: d.bundle.governs,
    actionBinding: actionBinding(d),
    issuedAt: d.issuedAt,
    signalsHash: signalsHash(d.signals),
    execution_state: VERDICT_STATUS[d.verdict].executionState,
    decision: { status: "decided" as const, outcome: outcomeOf(d) },
    provenance: { provenanceVersion: PROVENANCE_VERSION, bundleHash: d.bundle.bundle_hash, manifestHash, trustRootVersion, signerKeyId },
  };
}

/**
 * The evaluator hashes of the legacy shape: the semantics (what any runtime of this evaluator version
 * decides), the artifact (the IR file evaluated, by its SHA-256 in the bundle manifest), their combination,
 * and the release (this runtime with this bundle).
 */
export function evaluatorHash(evaluatorArtifactHash: string): string {
  return sha256Hex(canonicalJson({ evaluatorSemanticHash: EVALUATOR_SEMANTIC_HASH, evaluatorArtifactHash }));
}

export function releaseManifestHash(runtimeHash: string, bundleHash: string): string {
  return sha256Hex(canonicalJson({ runtimeHash, bundleHash }));
}

/** Signs a variant 2 (legacy) attestation, in the same signing domain as variant 1. */
export function createLegacyAttestation(d: DecisionRecord, signer: Signer, runtime: RuntimeIdentity): AttestationV2 {
  const body = {
    executionId: d.executionId,
    execution_fingerprint: executionFingerprint(d.executionId),
    policyId: d.bundle.policyId,
    policyVersion: d.bundle.version,
    schemaVersion: d.bundle.schemaVersion,
    runtimeVersion: RUNTIME_VERSION,
    runtimeHash: RUNTIME_HASH,
    actionType: d.bundle.governs,
    actionBinding: actionBinding(d),
    issuedAt: d.issuedAt,
    signalsHash: signalsHash(d.signals),
    decision: outcomeOf(d),
    execution_state: VERDICT_STATUS[d.verdict].executionState,
    bundleHash: d.bundle.bundle_hash,
    manifestHash: runtime.manifestHash,
    manifestSignature: runtime.manifest.signature,
    trustRootVersion: signer.trustRoot.version,
    signerKeyId: signer.key.keyId,
    evaluatorHash: evaluatorHash(d.bundle.files[BUNDLE_FILES.ir] ?? ""),
    evaluatorSemanticHash: EVALUATOR_SEMANTIC_HASH,
    evaluatorArtifactHash: d.bundle.files[BUNDLE_FILES.ir] ?? "",
    releaseManifestHash: releaseManifestHash(RUNTIME_HASH, d.bundle.bundle_hash),
  };
  return { ...body, signature: signObject(PAYLOAD_TYPES.attestation, body, signer.key) };
}
