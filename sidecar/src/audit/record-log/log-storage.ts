/**
 * What a store does for the tamper-evident record log (docs/audit.md, "Serving the log"): one contract, on LMDB and on
 * PostgreSQL (their `record-log-storage.ts`), both checked by sidecar/test/audit/record-log-contract.ts; log-tree.ts is
 * their shared arithmetic, record-log.ts the routes' answers. A store holds logs named by `logId` (a sidecar instance:
 * on LMDB only its own, on PostgreSQL the fleet's); it writes its own, another only when that one is stale; it reads any.
 *
 * INVARIANT (a log only grows): an entry, a kept subtree root and a checkpoint are written once, never changed; the
 * state moves forward only in the transaction that writes what it describes, under the log's write lock (LMDB's one
 * writer; on PostgreSQL the log's state row, locked), so two writers of one log cannot fork it.
 * INVARIANT (pending or sequenced, never both, never lost): a record enters the pending set in the write that stores it,
 * and leaves it only in the transaction that appends it to the log; one whose record is gone by then is dropped.
 */
import type { Ed25519Engine, IndexedFields, LeafRange, LogEntryKind, PerfectSubtree, SignedCheckpoint, SigningKey } from "@writ/runtime";

/** What signs a log's checkpoints: the sidecar's signing key, through its engine (the signing threads, when it has them). */
export interface CheckpointSigner {
  readonly key: SigningKey;
  readonly engine: Ed25519Engine;
}

export interface LogCounts {
  /** Entries in the log. */
  readonly size: number;
  /** Records written and not yet in the log. */
  readonly pending: number;
  readonly latest: SignedCheckpoint | null;
}

/** An entry as the export shows it: the record's exact stored text, or null when retention removed it. */
export interface StoredEntry {
  readonly position: number;
  readonly kind: LogEntryKind;
  readonly leaf: Uint8Array;
  readonly record: string | null;
  /**
   * A decision's filter fields as the store keeps them beside its record for queries, given only when they are not the
   * record's own (runtime decision-agreement.ts): the export names them and verification fails the entry.
   */
  readonly indexed?: IndexedFields;
}

/** A record the store holds that no log holds, neither sequenced nor pending: put there around the log. */
export interface UnloggedRecord {
  readonly kind: LogEntryKind;
  readonly record: string;
}

/** The reads an export makes (record-log.ts `export`). */
export type ExportReads = Pick<RecordLogStorage, "counts" | "checkpoints" | "checkpointAt" | "entries" | "unlogged">;

/** The reads of one export, and what gives back what they hold once it ends (or fails, or its client leaves). */
export interface ExportSession {
  readonly reads: ExportReads;
  end(): void;
}

export interface RecordLogStorage {
  /** The log this sidecar writes: its instance id. */
  readonly logId: string;
  /**
   * In one atomic write: takes up to `max` of the pending records of log `logId`, oldest first, appends them (log-tree.ts
   * `appendToLog`) with their kept subtree roots, and moves the state. Answers how many pending records it took.
   * Another sidecar's log is written only when it is stale (`stale`): its sidecar is gone.
   */
  sequence(logId: string, max: number): Promise<number>;
  /** In one atomic write: signs and stores the next checkpoint of log `logId` (log-tree.ts `nextCheckpoint`), or null. */
  checkpoint(logId: string, signer: CheckpointSigner, now: Date): Promise<SignedCheckpoint | null>;
  /**
   * The other logs of the store with a record pending since before `before` (Unix ms): logs whose sidecar stopped
   * for good, which another sidecar sequences and checkpoints so that nothing stays outside a checkpoint (on LMDB, none).
   */
  stale(before: number): Promise<string[]>;
  /** The logs this store holds (on LMDB, its own). */
  logIds(): Promise<string[]>;
  /** Null when the store holds no log `logId`. */
  counts(logId: string): Promise<LogCounts | null>;
  /** The checkpoints of `logId` with size at least `from`, oldest first, at most `limit`. */
  checkpoints(logId: string, from: number, limit: number): Promise<SignedCheckpoint[]>;
  checkpointAt(logId: string, size: number): Promise<SignedCheckpoint | null>;
  leaves(logId: string, range: LeafRange): Promise<Uint8Array[]>;
  /** The kept roots of `subtrees`; a missing one is a broken store (an Error). */
  nodes(logId: string, subtrees: readonly PerfectSubtree[]): Promise<Uint8Array[]>;
  /** Which log holds the decision of `executionId`, and where; null when no log does (yet). */
  decisionEntry(executionId: string): Promise<{ readonly logId: string; readonly position: number } | null>;
  /** The entries of `logId` at positions [from, to), in order, read lazily. */
  entries(logId: string, from: number, to: number): AsyncIterable<StoredEntry>;
  /** Every stored record that no log holds, sequenced or pending. */
  unlogged(): AsyncIterable<UnloggedRecord>;
  /**
   * Whether this process keeps log `logId` now: where several processes share one log (LMDB, SERVICE_PROCESSES), only
   * one sequences and checkpoints it, and the checkpointer of another does nothing on its schedule. Absent: always.
   */
  owns?(): boolean;
  /** Whether another process sharing the log asked its keeper for a checkpoint since this one last looked. Absent: never. */
  checkpointWanted?(): boolean;
  /**
   * Where one export reads, when not from the store's own reads: on PostgreSQL, one connection of the read database
   * (docs/fleet.md, "Read replicas"). Absent: the store's reads.
   */
  exportSession?(): Promise<ExportSession>;
}
