/**
 * The audit trail of Surface A (spec 1.7, 2.11, 4.1): decisions, overrides, verifications, execution
 * confirmations, security events and API call counts, behind `GET /audit/decisions`, `/audit/decisions/:executionId`,
 * `/audit/stats` and `/audit/security`. Optional: with audit off or broken, `GET /health` reports `audit_db` false and
 * execution goes on (spec 7).
 *
 * Implemented once (audit-trail.ts) over each engine's store (audit-store.ts): LMDB and PostgreSQL. A decision's, override's or
 * confirmation's record reaches the store as data with its replay transition and commits with it (LMDB: in the same
 * write transaction, one fsync; PostgreSQL: in the same statement). The other records are queued, not awaited one by
 * one; a request that depends on them awaits `flushed()`.
 */
import type { DecisionAuditRecord } from "@writ/runtime";
import type { RecordLog } from "./record-log/record-log.js";
import type {
  AuditedConfirmation,
  AuditedOverride,
  AuditStats,
  DecisionDetail,
  DecisionRow,
  DecisionStatus,
  SecurityEventRow,
  SecurityEventType,
} from "@writ/wire";

/** What the audit endpoints answer: the wire's shapes (`@writ/wire`, docs/audit.md). */
export type { AuditStats, DecisionDetail, DecisionRow, DecisionStatus, SecurityEventRow, SecurityEventType };

/** What the sidecar records for every signed decision (`POST /evaluate` variant 1 and the legacy `POST /execute`). */
export type DecisionAudit = DecisionAuditRecord;

/** A resolved override, kept beside the original decision (spec 1.8: an override never replaces it), as answered. */
export type OverrideAudit = AuditedOverride;

export interface VerificationAudit {
  /** The attestation's `executionId` when it has a string one. */
  readonly executionId: string | null;
  readonly valid: boolean;
  readonly checks: Readonly<Record<string, string>>;
  readonly errors: readonly string[];
  readonly recordedAt: string;
}

/** An execution confirmation with its signed Execution Integrity Proof, as answered. */
export type ConfirmationAudit = AuditedConfirmation;

/**
 * A security event as the sidecar reports it: the row without its `id` and `at`. `path` is the route path without
 * its query string; `detail` a short human description, never a key, token or request body.
 */
export type SecurityEventInput = Omit<SecurityEventRow, "id" | "at">;

/** Validated query of `GET /audit/decisions`. */
export interface DecisionQuery {
  readonly limit: number;
  readonly offset: number;
  readonly policyId?: string;
  readonly decision?: DecisionStatus;
  /** Inclusive bounds, Unix milliseconds. */
  readonly from?: number;
  readonly to?: number;
}

/** Validated query of `GET /audit/security`. */
export interface SecurityQuery {
  readonly limit: number;
  readonly from?: number;
  readonly to?: number;
}

export interface AuditLog {
  /** False when audit is off, or when the database failed (a write or read threw): `audit_db` in `GET /health`. */
  healthy(): boolean;
  /** The tamper-evident log of the trail's records (docs/audit.md, "Tamper evidence"); null where there is none yet. */
  readonly recordLog: RecordLog | null;
  /**
   * Decisions, overrides and confirmations are not recorded through this interface: they reach the store as data with
   * the replay transition they record (runtime `TransitionRecord`) and commit with it. These records have no
   * transition: queued, never throwing; a failure marks the log unhealthy for a while.
   */
  recordVerification(entry: VerificationAudit): void;
  recordSecurityEvent(event: SecurityEventInput): void;
  /** One authenticated or unauthenticated request answered by Surface A. Counted in memory, persisted in batches. */
  countApiCall(): void;
  /** Resolves when every write queued so far is durable (or failed). Never rejects: a failure marks the log unhealthy. */
  flushed(): Promise<void>;
  listDecisions(query: DecisionQuery): Promise<DecisionRow[]>;
  getDecision(executionId: string): Promise<DecisionDetail | null>;
  stats(now?: Date): Promise<AuditStats>;
  listSecurityEvents(query: SecurityQuery): Promise<SecurityEventRow[]>;
  close(): Promise<void>;
}
