/**
 * The signed evidence that is not an attestation (spec 2.9 and 1.8): an execution's integrity proof and an override
 * record, apart from the code that builds them, so that the replay store's records (replay/records.ts) can name them
 * without depending on that code.
 */
import type { Verdict } from "../ir/types.js";

/** The library form of an executed action (spec 2.9). */
export interface ExecutedAction {
  readonly type: string;
  readonly payload: Readonly<Record<string, unknown>>;
  /** ISO 8601. */
  readonly executedAt: string;
  readonly executedBy?: string;
  /** The executing system's own identifier of the action (`executedAction.actionId` of the endpoint form). */
  readonly actionId?: string;
}

export interface MatchDetails {
  readonly actionTypeMatch: boolean;
  readonly payloadConsistent: boolean;
  readonly withinTimeWindow: boolean;
  readonly timeWindowSeconds: number;
  /** writ's addition: the attestation authorized execution (an approval, or an escalation whose override was approved). */
  readonly executionAuthorized: boolean;
}

/** The Execution Integrity Proof (spec 2.9), signed in the execution-proof domain. */
export interface ExecutionProof {
  readonly executionId: string;
  /** SHA-256 of the JCS form of the whole signed attestation: names the authorization confirmed. */
  readonly authorizationId: string;
  /** SHA-256 of JCS(`{authorizationId, executed}`): binds what ran to what was authorized. */
  readonly integrityHash: string;
  readonly authorized: {
    readonly action: Verdict;
    readonly actionType: string;
    readonly reason: string;
    readonly policyId: string;
    readonly policyVersion: string;
  };
  readonly executed: ExecutedAction;
  readonly match: boolean;
  readonly matchDetails: MatchDetails;
  readonly confirmedAt: string;
  readonly verified: true;
  readonly signature: string;
}

/** The override record, signed in the override domain when a signer is given, else carrying a SHA-256 digest. */
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
  readonly signature?: string;
  readonly digest?: string;
}
