/**
 * Where Surface B keeps its Trust Records, their verifications and receipts: one interface, implemented on LMDB
 * (storage/lmdb/record-store.ts, the embedded default) and on PostgreSQL (storage/postgres/record-store.ts, shared by a
 * fleet), both held to one contract suite (sidecar/test/surface-b/record-store-contract.ts).
 *
 * Every method that writes resolves only once its write is durable (acknowledged means durable); a store that cannot
 * write or read rejects with StoreUnavailableError (503 at the HTTP edge), never with a partial write.
 */
import { parseStrictJson, type ReplayStore } from "@writ/runtime";
import type { Receipt, SealedRecord, Verification } from "./types.js";

/** A stored record as read back: its JSON value, or `unreadable` when its bytes are no longer strict JSON. */
export type StoredRecord = { readonly state: "stored"; readonly value: unknown } | { readonly state: "unreadable"; readonly text: string };

/** A record's stored text as read back (see StoredRecord); undefined when there is none. */
export function storedRecord(text: string | undefined): StoredRecord | undefined {
  if (text === undefined) return undefined;
  try {
    return { state: "stored", value: parseStrictJson(text) };
  } catch {
    return { state: "unreadable", text };
  }
}

/**
 * The writes of one execution where the replay store and the record store are one database (TrustRecordStore
 * `inOneTransaction`): the decision consumed through `replay`, then the record created by `create`, all in one
 * transaction.
 */
export interface ExecutionUnit {
  /** Where the execution's decision is consumed, with its audit record: written in the unit, not committed on its own. */
  readonly replay: ReplayStore;
  /**
   * `TrustRecordStore.create` as the unit's last write, which commits the unit: resolved true, the decision, its audit
   * record, the record, its verification and receipt have committed together; false (the id already has a record),
   * nothing of the unit has. Rejected (StoreUnavailableError), nothing has, or, when the answer to COMMIT was lost,
   * possibly all of it: never a part.
   */
  create(record: SealedRecord, verification: Verification, receipt: Receipt): Promise<boolean>;
}

export interface TrustRecordStore {
  /**
   * Where the store shares its database with the replay store (PostgreSQL): runs `work` with one execution's unit
   * (ExecutionUnit), rolled back unless its `create` committed it. INVARIANT (no id consumed without its record): on
   * such a store, a decision of Surface B commits only with its record. Absent (LMDB, memory): the replay store
   * commits the decision on its own, before the record is created.
   */
  readonly inOneTransaction?: <T>(work: (unit: ExecutionUnit) => Promise<T>) => Promise<T>;
  /**
   * Stores a new record with its first verification and receipt, all in one transaction. Resolves false, writing
   * nothing, when the id already has a record (a record is never replaced), whichever sidecar of a fleet made it.
   */
  create(record: SealedRecord, verification: Verification, receipt: Receipt): Promise<boolean>;
  /** The stored record of `id`, or undefined when there is none (or `id` could never be stored). */
  record(id: string): Promise<StoredRecord | undefined>;
  appendVerification(id: string, verification: Verification): Promise<void>;
  appendReceipt(id: string, receipt: Receipt): Promise<void>;
  /** The latest appended verification of `id` (parsed JSON), or undefined. */
  latestVerification(id: string): Promise<unknown>;
  latestReceipt(id: string): Promise<unknown>;
  /** How many records there are. */
  count(): Promise<number>;
  /** The ids of `limit` records from position `offset` in creation order, oldest first. */
  ids(offset: number, limit: number): Promise<string[]>;
}
