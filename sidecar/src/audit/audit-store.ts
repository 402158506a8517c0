/**
 * The port an engine implements for the audit trail (audit-trail.ts): its storage primitives only. The trail writes
 * the policy above them once for every engine (security-event admission, the API call count and its flush, the
 * retention schedule, the record log's checkpoints, the closing state), as Cerbos's audit log wraps any backend that
 * batches, stores and iterates. Writes are queued and never throw: a failure counts against `healthy()` and is told
 * to the engine's `onError`. Decisions, overrides and confirmations do not pass here: they reach the store as data
 * with the replay transition they record (runtime `TransitionRecord`), and the store reads them back.
 */
import type { RecordLogStorage } from "./record-log/log-storage.js";
import type { AuditRetention, RetentionLimit } from "./retention.js";
import type { AuditLog, SecurityEventInput, VerificationAudit } from "./types.js";

/** A security event row to store: `count` for an aggregate (security-event-limiter.ts) standing for that many events. */
export interface SecurityEventWrite {
  readonly event: SecurityEventInput;
  readonly at: Date;
  readonly count?: number;
}

/** The API calls counted in memory and not stored yet: `take` empties the count, `giveBack` restores what failed. */
export interface UnsavedCount {
  take(): number;
  giveBack(count: number): void;
}

/** The counters a store keeps, as stored (the trail adds what is still in memory). */
export interface StoredCounts {
  readonly decisions: number;
  /** Decisions recorded in the UTC day of the `now` asked for. */
  readonly decisionsToday: number;
  readonly verifications: number;
  readonly validVerifications: number;
  readonly securityEvents: number;
  readonly apiCalls: number;
}

/** One of the trails retention prunes (retention.ts); a decision goes with its override and confirmation. */
export type TrailName = keyof AuditRetention;

/**
 * `flushed` and the reads answer as AuditLog's do; the trail calls a read only while open, once `flushed()` settled.
 * `getDecision` is only asked for a well-formed executionId (the trail answers null for one that is not).
 */
export interface AuditStore extends Pick<AuditLog, "flushed" | "listDecisions" | "getDecision" | "listSecurityEvents"> {
  /** The record log's store over this trail's records; null when the record log is off. */
  readonly logStorage: RecordLogStorage | null;
  /** Whether the store takes writes and no failure of its own is being held against it (`audit_db` in /health). */
  healthy(): boolean;
  /** Whether the store takes writes now: the record log's checkpointer waits while it does not. */
  writable(): boolean;
  /** A failure of work the trail runs on the store (its checkpointer): counts against `healthy()` like the store's own. */
  noteFailure(error: unknown): void;
  /** Queues a verification, filed at `at` (Unix ms), with its counters. */
  putVerification(record: VerificationAudit, at: number): void;
  /**
   * Queues the rows `take()` answers, with the security event counter moved past the events they stand for. `take` is
   * called when the write runs (in the engine's transaction where it has one), so a count read in the same sequence
   * sees each event either pending or stored; not called at all when the write is skipped.
   */
  putSecurityEvents(take: () => readonly SecurityEventWrite[]): void;
  /** Adds the API calls `unsaved` holds to the stored counter; `take` is called when the write runs, as above. */
  addApiCalls(unsaved: UnsavedCount): void;
  /** The stored counters, with `alongside()` called at the instant they are read (where the engine has one). */
  counts<T>(now: Date, alongside: () => T): Promise<[StoredCounts, T]>;
  /** Removes `trail`'s records due under `limit` at `now` (Unix ms), oldest first; `stopping` is asked between chunks. */
  prune(trail: TrailName, limit: RetentionLimit, now: number, stopping: () => boolean): Promise<number>;
  /**
   * Stops taking writes at once (later ones are dropped), then resolves once the writes queued so far, the store's own
   * background work and `settled` (the trail's: a prune run, the checkpointer's stop) are done, and what the store
   * holds in memory is stored. What the engine's owner opened (environment, pool) stays open.
   */
  close(settled: Promise<unknown>): Promise<void>;
}
