/**
 * The named databases of the LMDB record log (record-log-storage.ts, LAYOUT), opened once, and what every part of the
 * log reads of them: the log's state, and how many entries lost their record to retention.
 */
import { hashFromHex, type SignedCheckpoint } from "@writ/runtime";
import type { Database, RootDatabase } from "lmdb";
import type { LogState } from "../../audit/record-log/log-tree.js";

export const RECORD_LOG_DATABASES = {
  pending: "audit-log-pending",
  entries: "audit-log-entries",
  index: "audit-log-index",
  nodes: "audit-log-nodes",
  checkpoints: "audit-log-checkpoints",
  prunes: "audit-log-prunes",
  meta: "audit-log-meta",
} as const;

/** A leaf hash's bytes. */
export const HASH = 32;

/** The log's state as `audit-log-meta` keeps it. */
export interface StoredState {
  readonly size: number;
  /** Hex frontier hashes at `size`. */
  readonly frontier: readonly string[];
}

export interface LogDatabases {
  readonly root: RootDatabase;
  readonly pending: Database<Buffer, [number, string]>;
  readonly entries: Database<Buffer, number>;
  readonly index: Database<number, string>;
  readonly nodes: Database<Buffer, [number, number]>;
  readonly checkpoints: Database<SignedCheckpoint, number>;
  readonly prunes: Database<Buffer, [number, number]>;
  readonly meta: Database<unknown, string>;
}

export function openLogDatabases(root: RootDatabase): LogDatabases {
  return {
    root,
    pending: root.openDB<Buffer, [number, string]>(RECORD_LOG_DATABASES.pending, { encoding: "binary" }),
    entries: root.openDB<Buffer, number>(RECORD_LOG_DATABASES.entries, { encoding: "binary" }),
    index: root.openDB<number, string>(RECORD_LOG_DATABASES.index, { encoding: "msgpack" }),
    nodes: root.openDB<Buffer, [number, number]>(RECORD_LOG_DATABASES.nodes, { encoding: "binary" }),
    checkpoints: root.openDB<SignedCheckpoint, number>(RECORD_LOG_DATABASES.checkpoints, { encoding: "json" }),
    prunes: root.openDB<Buffer, [number, number]>(RECORD_LOG_DATABASES.prunes, { encoding: "binary" }),
    meta: root.openDB<unknown, string>(RECORD_LOG_DATABASES.meta, { encoding: "json" }),
  };
}

export function logState(dbs: LogDatabases): LogState {
  const stored = dbs.meta.get("state") as StoredState | undefined;
  return stored === undefined ? { size: 0, frontier: [] } : { size: stored.size, frontier: stored.frontier.map(hashFromHex) };
}

/** How many entries of the log lost their record to retention (record-log-storage.ts, ACCOUNTING). */
export function prunedCount(dbs: LogDatabases): number {
  return (dbs.meta.get("pruned") as number | undefined) ?? 0;
}

/** The entries of `db`, counted by LMDB in O(1). */
export function entryCount(db: { getStats(): unknown }): number {
  return (db.getStats() as { entryCount: number }).entryCount;
}
