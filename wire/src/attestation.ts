/**
 * The attestation (spec 2.2): the signed authorization record, stored and passed on exactly as returned. Variant 1
 * comes from `POST /evaluate`, variant 2 from the legacy `POST /execute`. The signature covers
 * PAE(`PAYLOAD_TYPES.attestation`, JCS(attestation without `signature`)) (docs/attestations.md, docs/signing.md).
 */
import type { ExecutionState, Verdict } from "./common.js";
import type { PROVENANCE_VERSION } from "./constants.js";

/** The decided outcome; `action` is the verdict. */
export interface Outcome {
  readonly action: Verdict;
  /** True only for `escalate`. */
  readonly requires_override: boolean;
  readonly reason: string;
}

/** What both variants carry at the top level. `actionType`, `actionBinding` and `issuedAt` are writ's additions. */
interface AttestationCommon {
  readonly executionId: string;
  /** Hex digest: the key of replay protection and override lineage. */
  readonly execution_fingerprint: string;
  readonly policyId: string;
  readonly policyVersion: string;
  readonly schemaVersion: string;
  readonly runtimeVersion: string;
  readonly runtimeHash: string;
  /** The action the policy governs. */
  readonly actionType: string;
  /** The bound signals' authorized values, which the executed action must echo (confirm-execution). */
  readonly actionBinding: Readonly<Record<string, unknown>>;
  /** ISO 8601 instant of the decision. */
  readonly issuedAt: string;
  /** Fingerprint of the verified signals: lowercase hex SHA-256 of their JCS form. */
  readonly signalsHash: string;
  readonly execution_state: ExecutionState;
  /** Base64 Ed25519. */
  readonly signature: string;
}

/** Spec 2.2 variant 1, returned by `POST /evaluate`: outcome and provenance nested. */
export interface AttestationV1 extends AttestationCommon {
  readonly decision: { readonly status: "decided"; readonly outcome: Outcome };
  readonly provenance: {
    readonly provenanceVersion: typeof PROVENANCE_VERSION;
    readonly bundleHash: string;
    readonly manifestHash: string;
    readonly trustRootVersion: string;
    readonly signerKeyId: string;
  };
}

/** Spec 2.2 variant 2, the legacy `POST /execute` shape: provenance flat, `decision` holding the outcome. */
export interface AttestationV2 extends AttestationCommon {
  readonly decision: Outcome;
  readonly bundleHash: string;
  readonly manifestHash: string;
  readonly manifestSignature: string;
  readonly trustRootVersion: string;
  readonly signerKeyId: string;
  readonly evaluatorHash: string;
  readonly evaluatorSemanticHash: string;
  readonly evaluatorArtifactHash: string;
  readonly releaseManifestHash: string;
}

/** Either variant: what `POST /verify`, `POST /confirm-execution` and the audit trail take. */
export type Attestation = AttestationV1 | AttestationV2;

/** `attestationPreview` of `POST /simulate`: the variant 1 attestation that would be signed, without a signature. */
export type AttestationPreview = Omit<AttestationV1, "signature">;
