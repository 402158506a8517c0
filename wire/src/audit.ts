/**
 * The audit trail as Surface A answers it (spec 2.11, 4.1). The spec leaves the record fields and the query
 * defaults open; these are docs/audit.md's.
 */
import type { Attestation } from "./attestation.js";
import type { DecisionStatus, ExecutionState, JsonObject, Verdict } from "./common.js";
import type { ExecutionProof, OverrideRecord } from "./evidence.js";

/** `GET /audit/decisions` query parameters; every one optional, each given at most once. */
export interface DecisionQuery {
  /** 1 to 500, default 50. */
  readonly limit?: number;
  /** 0 to 1,000,000, default 0. */
  readonly offset?: number;
  readonly policyId?: string;
  readonly decision?: DecisionStatus;
  /** Inclusive bounds: RFC 3339 date-times with an offset. */
  readonly from?: string;
  readonly to?: string;
}

/** `GET /audit/security` query parameters: newest first, no offset (page backwards with `to`). */
export interface SecurityEventQuery {
  /** 1 to 500, default 50. */
  readonly limit?: number;
  readonly from?: string;
  readonly to?: string;
}

/** An element of `GET /audit/decisions`, newest first. */
export interface DecisionRow {
  readonly executionId: string;
  readonly execution_fingerprint: string;
  readonly policyId: string;
  readonly policyVersion: string;
  /** The response status; the `decision` filter matches it. */
  readonly decision: DecisionStatus;
  /** The policy verdict. */
  readonly action: Verdict;
  readonly reason: string;
  readonly ruleMatched: string;
  readonly execution_state: ExecutionState;
  readonly signalsHash: string;
  /** From the attestation (nested or flat provenance). */
  readonly signerKeyId: string;
  /** Which endpoint decided. */
  readonly endpoint: "evaluate" | "execute";
  /** Set once an override is recorded. */
  readonly overrideResolution: "approved" | "rejected" | null;
  /** A confirmation is recorded, whether or not it matched (see `confirmation.match`). */
  readonly confirmed: boolean;
  /** ISO 8601: the attestation's `issuedAt`. */
  readonly recordedAt: string;
}

/** A resolved override, kept beside the decision it resolves (spec 1.8: an override never replaces it). */
export interface AuditedOverride {
  readonly executionId: string;
  readonly approved: boolean;
  readonly approvedBy: string;
  readonly approverRole: string;
  readonly reason: string;
  readonly overrideId: string | null;
  /** The override record as signed. */
  readonly record: OverrideRecord;
  readonly recordedAt: string;
}

/** An execution confirmation, kept beside the decision it confirms. */
export interface AuditedConfirmation {
  readonly executionId: string;
  readonly match: boolean;
  /** The signed Execution Integrity Proof, as an object. */
  readonly proof: ExecutionProof;
  readonly recordedAt: string;
}

/** `GET /audit/decisions/:executionId`: the decision with its override and confirmation beside it (spec 1.8). */
export interface DecisionDetail extends DecisionRow {
  /** Exactly as signed. */
  readonly attestation: Attestation;
  readonly signalProvenance: JsonObject | null;
  readonly override: AuditedOverride | null;
  readonly confirmation: AuditedConfirmation | null;
}

/** `GET /audit/stats`: every value a decimal string (spec 2.11). */
export interface AuditStats {
  readonly total_decisions: string;
  readonly decisions_today: string;
  readonly total_verifications: string;
  readonly valid_verifications: string;
  readonly invalid_verifications: string;
  readonly total_security_events: string;
  readonly total_api_calls: string;
}

export type SecurityEventType = "authentication_failed" | "invalid_verification" | "replay_attempt" | "rate_limited";

/** An element of `GET /audit/security`, newest first. Never holds a key, token or request body. */
export interface SecurityEventRow {
  /** `<ms>-<ordinal>`: unique and time-ordered. */
  readonly id: string;
  /** ISO 8601. */
  readonly at: string;
  readonly type: SecurityEventType;
  readonly method: string;
  /** The path without its query string. */
  readonly path: string;
  readonly ip: string;
  /** A short description written by the service. */
  readonly detail: string;
  readonly executionId?: string;
  /**
   * Present on an aggregated row: how many events of this type from this source (ip) the row stands for, all within
   * one aggregation interval that ended at `at` (docs/audit.md, "Security events under a flood").
   */
  readonly count?: number;
}
