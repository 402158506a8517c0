/**
 * The record of a transition: what the service keeps as evidence of a decision, an override or a confirmation, handed
 * to the replay store AS DATA with the transition it records (`ConsumeOptions.record`, `ResolveOverrideOptions.record`),
 * so every engine, on this host or another, commits both in one transaction: PostgreSQL in the same statement, LMDB in
 * the same write transaction (the sidecar encodes the record into puts the store writes, lmdb-puts.ts).
 *
 * INVARIANT (a transition is kept with its record): a store commits a record exactly when it commits the transition
 * it came with, in the same transaction where the engine has one (stores without a record writer keep no record).
 *
 * The bodies are the audit trail's wire shapes (`@writ/wire` DecisionDetail, AuditedOverride, AuditedConfirmation),
 * stored as JSON and answered as stored.
 */
import { executionFingerprint } from "../attest/attestation.js";
import type { Attestation, ExecutionProof, OverrideRecord } from "@writ/wire/types";

export type DecisionAuditStatus = "approved" | "pending_override" | "rejected";

/** A signed decision (`POST /evaluate` variant 1, the legacy `POST /execute`). */
export interface DecisionAuditRecord {
  readonly executionId: string;
  readonly endpoint: "evaluate" | "execute";
  readonly status: DecisionAuditStatus;
  readonly ruleMatched: string;
  readonly attestation: Attestation;
  /** The request's optional `signalProvenance`: audited, never hashed or evaluated. */
  readonly signalProvenance?: Readonly<Record<string, unknown>>;
  /** ISO 8601: the attestation's `issuedAt`. */
  readonly recordedAt: string;
}

/** A resolved override, kept beside the decision it resolves (it never replaces it). */
export interface OverrideAuditRecord {
  readonly executionId: string;
  readonly approved: boolean;
  readonly approvedBy: string;
  readonly approverRole: string;
  readonly reason: string;
  readonly overrideId: string | null;
  readonly record: OverrideRecord;
  /** ISO 8601: the override's `decidedAt`. */
  readonly recordedAt: string;
}

/** An execution confirmation with its signed Execution Integrity Proof. */
export interface ConfirmationAuditRecord {
  readonly executionId: string;
  readonly match: boolean;
  readonly proof: ExecutionProof;
  /** ISO 8601: the proof's `confirmedAt`. */
  readonly recordedAt: string;
}

/**
 * A record and, when its maker has it, its body's JSON text (`json`): the authorizer writes a decision's from the
 * attestation's signed text (`decisionRecordJson`), so an engine stores it without serializing the attestation again.
 * INVARIANT (a record's text is its body): `JSON.parse(json)` deep-equals `body`; engines store `recordJson(record)`.
 */
export type TransitionRecord =
  | { readonly kind: "decision"; readonly body: DecisionAuditRecord; readonly json?: string }
  | { readonly kind: "override"; readonly body: OverrideAuditRecord; readonly json?: string }
  | { readonly kind: "confirmation"; readonly body: ConfirmationAuditRecord; readonly json?: string };

/** The JSON text an engine stores for `record`: the one it came with, else its body serialized. */
export function recordJson(record: TransitionRecord): string {
  return record.json ?? JSON.stringify(record.body);
}

/**
 * The JSON text of `body` whose `attestation` member is `attestationText` (the attestation's own text, which parses to
 * `body.attestation`), its other members serialized here, in the body's order.
 */
export function decisionRecordJson(body: DecisionAuditRecord, attestationText: string): string {
  const provenance = body.signalProvenance === undefined ? "" : `,"signalProvenance":${JSON.stringify(body.signalProvenance)}`;
  return (
    `{"executionId":${JSON.stringify(body.executionId)},"endpoint":${JSON.stringify(body.endpoint)}` +
    `,"status":${JSON.stringify(body.status)},"ruleMatched":${JSON.stringify(body.ruleMatched)}` +
    `,"attestation":${attestationText}${provenance},"recordedAt":${JSON.stringify(body.recordedAt)}}`
  );
}

export type TransitionRecordKind = TransitionRecord["kind"];

/**
 * The execution fingerprint a record is filed under: a decision's is the one its attestation carries (computed when it
 * was signed, not hashed a second time); an override's or a confirmation's is computed from its executionId.
 */
export function recordFingerprint(record: TransitionRecord): string {
  return record.kind === "decision" ? record.body.attestation.execution_fingerprint : executionFingerprint(record.body.executionId);
}

/**
 * Where the in-memory store (memory-store.ts, for development and tests) hands the records of its transitions: called
 * right after a transition that succeeded. A durable engine takes no writer: it keeps the record with its transition
 * itself (PostgreSQL in the transition's statement; LMDB writes what the caller encoded it into, lmdb-puts.ts). It must
 * not throw. `written` resolves true: the record took effect (nothing in memory is durable anyway).
 */
export type RecordWriter = (record: TransitionRecord, written: Promise<boolean | null>) => void;
