/**
 * The shapes of an attestation (spec 2.2), apart from the code that builds them: the body writer
 * (attestation-text.ts) and the builders (attestation.ts) both depend on these, never on each other.
 */
import type { Verdict } from "../ir/types.js";
import type { PROVENANCE_VERSION } from "./identity.js";

/** The three response states (spec 1.3). */
export type DecisionStatus = "approved" | "pending_override" | "rejected";
export type ExecutionState = "completed" | "pending_override";

/** The decided outcome; `action` is the verdict (approve / escalate / reject). */
export interface Outcome {
  readonly action: Verdict;
  readonly requires_override: boolean;
  readonly reason: string;
}

/** What both shapes carry at the top level. `actionType`, `actionBinding` and `issuedAt` are writ's additions. */
interface AttestationCommon {
  readonly executionId: string;
  readonly execution_fingerprint: string;
  readonly policyId: string;
  readonly policyVersion: string;
  readonly schemaVersion: string;
  readonly runtimeVersion: string;
  readonly runtimeHash: string;
  readonly actionType: string;
  readonly actionBinding: Readonly<Record<string, unknown>>;
  readonly issuedAt: string;
  readonly signalsHash: string;
  readonly execution_state: ExecutionState;
  readonly signature: string;
}

/** Spec 2.2 variant 1, returned by `POST /evaluate`. */
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

export type Attestation = AttestationV1 | AttestationV2;
