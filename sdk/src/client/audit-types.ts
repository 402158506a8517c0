/**
 * The audit trail as Surface A answers it (spec 2.11, 4.1). The spec leaves the record fields open; these are
 * docs/audit.md's, and sdk/test/wire-types.test.ts checks them against the sidecar's own types.
 */
import type { Attestation, DecisionStatus, ExecutionProof, OverrideRecord } from "@writ/runtime";

/** `GET /audit/decisions` query; every member optional (defaults and maximums: docs/audit.md). */
export interface DecisionQuery {
  /** 1 to 500, default 50. */
  readonly limit?: number;
  /** 0 to 1,000,000, default 0. */
  readonly offset?: number;
  readonly policyId?: string;
  readonly decision?: DecisionStatus;
  /** Inclusive bounds: a Date, or an RFC 3339 date-time with an offset. */
  readonly from?: Date | string;
  readonly to?: Date | string;
}

/** `GET /audit/security` query: newest first, no offset (page backwards with `to`). */
export interface SecurityEventQuery {
  readonly limit?: number;
  readonly from?: Date | string;
  readonly to?: Date | string;
}

/** An element of `GET /audit/decisions`, newest first. */
export interface DecisionRow {
  readonly executionId: string;
  readonly execution_fingerprint: string;
  readonly policyId: string;
  readonly policyVersion: string;
  /** The response status; the `decision` filter matches it. */
  readonly decision: DecisionStatus;
  /** The policy verdict: `approve`, `escalate` or `reject`. */
  readonly action: string;
  readonly reason: string;
  readonly ruleMatched: string;
  readonly execution_state: string;
  readonly signalsHash: string;
  readonly signerKeyId: string;
  readonly endpoint: "evaluate" | "execute";
  readonly overrideResolution: "approved" | "rejected" | null;
  readonly confirmed: boolean;
  readonly recordedAt: string;
}

/** `GET /audit/decisions/:executionId`: the decision with its override and confirmation beside it (spec 1.8). */
export interface DecisionDetail extends DecisionRow {
  readonly attestation: Attestation;
  readonly signalProvenance: Readonly<Record<string, unknown>> | null;
  readonly override: {
    readonly executionId: string;
    readonly approved: boolean;
    readonly approvedBy: string;
    readonly approverRole: string;
    readonly reason: string;
    readonly overrideId: string | null;
    readonly record: OverrideRecord;
    readonly recordedAt: string;
  } | null;
  readonly confirmation: {
    readonly executionId: string;
    readonly match: boolean;
    readonly proof: ExecutionProof;
    readonly recordedAt: string;
  } | null;
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

/** An element of `GET /audit/security`, newest first. Never holds a key, token or request body. */
export interface SecurityEventRow {
  /** `<ms>-<ordinal>`: unique and time-ordered. */
  readonly id: string;
  readonly at: string;
  readonly type: "authentication_failed" | "invalid_verification" | "replay_attempt" | "rate_limited";
  readonly method: string;
  readonly path: string;
  readonly ip: string;
  readonly detail: string;
  readonly executionId?: string;
}
