/**
 * The other signed objects on the wire: the override record (spec 2.8), the Execution Integrity Proof (spec 2.9)
 * and the runtime manifest (spec 2.11). Each is signed in its own domain (`PAYLOAD_TYPES`).
 */
import type { Verdict } from "./common.js";

/** The override record of `POST /override`: signed when the service has a signing key, else carrying a digest. */
export interface OverrideRecord {
  readonly overrideId: string;
  readonly executionId: string;
  readonly execution_fingerprint: string;
  readonly approved: boolean;
  readonly approved_by: string;
  readonly approver_role: string;
  readonly reason: string;
  readonly decidedAt: string;
  /** SHA-256 of the JCS form of the original signed attestation: the decision this record resolves. */
  readonly attestationHash: string;
  /** Base64 Ed25519 in the override domain. */
  readonly signature?: string;
  /** SHA-256 digest, when the record was made without a signing key (nothing authenticates it). */
  readonly digest?: string;
}

/** The library form of an executed action (spec 2.9), as the proof carries it. */
export interface ExecutedAction {
  readonly type: string;
  readonly payload: Readonly<Record<string, unknown>>;
  /** ISO 8601. */
  readonly executedAt: string;
  readonly executedBy?: string;
  /** The executing system's own identifier of the action (`executedAction.actionId` of the endpoint form). */
  readonly actionId?: string;
}

/** Spec 2.9: `match` is true only when the first three are all true. */
export interface MatchDetails {
  readonly actionTypeMatch: boolean;
  readonly payloadConsistent: boolean;
  readonly withinTimeWindow: boolean;
  readonly timeWindowSeconds: number;
  /** writ's addition: the attestation authorized execution (an approval, or an escalation whose override was approved). */
  readonly executionAuthorized: boolean;
}

/**
 * The Execution Integrity Proof (spec 2.9). `POST /confirm-execution` answers it as a string (its canonical JSON
 * text); the audit trail's `confirmation.proof` holds it as an object.
 */
export interface ExecutionProof {
  readonly executionId: string;
  /** SHA-256 of the JCS form of the whole signed attestation: names the authorization confirmed. */
  readonly authorizationId: string;
  /** SHA-256 of JCS(`{authorizationId, executed}`): binds what ran to what was authorized. */
  readonly integrityHash: string;
  readonly authorized: { readonly action: Verdict; readonly actionType: string; readonly reason: string; readonly policyId: string; readonly policyVersion: string };
  readonly executed: ExecutedAction;
  readonly match: boolean;
  readonly matchDetails: MatchDetails;
  readonly confirmedAt: string;
  readonly verified: true;
  readonly signature: string;
}

/** The signed runtime manifest (spec 2.11's library form), whose hash attestations name as `manifestHash`. */
export interface SignedRuntimeManifest {
  readonly runtimeVersion: string;
  /** SHA-256 of the runtime definition. */
  readonly runtimeHash: string;
  readonly supported_schemaVersions: readonly string[];
  readonly capabilities: readonly string[];
  readonly trustRootVersion: string;
  readonly signerKeyId: string;
  readonly signature: string;
}
