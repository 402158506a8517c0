/**
 * The LMDB replay store's databases as stored, for tests that look beneath the store: its entries and its expiry index
 * (runtime/src/replay/lmdb-expiry-index.ts) read raw, entries written as a data dir of a version without the index
 * holds them, and a count of what the store reads.
 */
import { decodeEntry } from "../../src/replay/lmdb-entry-encoding.js";
import type { Database, Key, RootDatabase } from "lmdb";
import type { ReplayEntry } from "../../src/replay/store.js";

export type IndexKey = readonly [number, string];

/** The expiry index as stored: its keys in order, whether it is complete, and the backfill's resume point. */
export interface StoredIndex {
  readonly keys: readonly IndexKey[];
  readonly complete: boolean;
  readonly resumeAfter: string | undefined;
}

export function storedIndex(root: RootDatabase, dbName = "replay"): StoredIndex {
  const keys: IndexKey[] = [];
  for (const key of indexDb(root, dbName).getKeys()) if (Array.isArray(key)) keys.push(key as unknown as IndexKey);
  return { keys, ...backfillState(root, dbName) };
}

/** The backfill's bookkeeping alone (cheap to poll). */
export function backfillState(root: RootDatabase, dbName = "replay"): Omit<StoredIndex, "keys"> {
  const index = indexDb(root, dbName);
  const resumeAfter = index.get("backfill-after");
  return { complete: index.get("backfilled") === true, resumeAfter: typeof resumeAfter === "string" ? resumeAfter : undefined };
}

function indexDb(root: RootDatabase, dbName: string): Database<unknown, Key> {
  return root.openDB<unknown, Key>(`${dbName}-expiry`, { encoding: "json" });
}

/**
 * Every stored entry by fingerprint, as the store decodes it: the `replay` database's (keyed by fingerprint) and the
 * entry log's (`<dbName>-log`, values `[fingerprint, …]`: runtime/src/replay/lmdb-replay-log.ts).
 */
export function storedEntries(root: RootDatabase, dbName = "replay"): Map<string, Partial<ReplayEntry>> {
  const entries = new Map<string, Partial<ReplayEntry>>();
  for (const { key, value } of root.openDB<unknown, string>(dbName, { encoding: "json" }).getRange()) {
    entries.set(key, decodeEntry(value, key) as Partial<ReplayEntry>);
  }
  for (const { value } of root.openDB<unknown, Buffer>(`${dbName}-log`, { keyEncoding: "binary", encoding: "json" }).getRange()) {
    const [fingerprint, ...rest] = value as [string, ...unknown[]];
    entries.set(fingerprint, decodeEntry(rest, fingerprint) as Partial<ReplayEntry>);
  }
  return entries;
}

/** The index keys the stored entries call for: `[expiresAt, fingerprint]` of each entry with an expiry, in index order. */
export function expectedIndex(root: RootDatabase, dbName = "replay"): IndexKey[] {
  const keys: IndexKey[] = [];
  for (const [fingerprint, { expiresAt }] of storedEntries(root, dbName)) {
    if (typeof expiresAt === "number") keys.push([expiresAt, fingerprint]);
  }
  return keys.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
}

/** Entries written straight into the replay database, as a data dir of a version without the expiry index holds them. */
export async function writeWithoutIndex(root: RootDatabase, entries: Iterable<ReplayEntry>, dbName = "replay"): Promise<void> {
  const db = root.openDB<ReplayEntry, string>(dbName, { encoding: "json" });
  let batch: ReplayEntry[] = [];
  const flush = async () => {
    const written = batch;
    batch = [];
    await root.transaction(() => {
      for (const entry of written) db.putSync(entry.fingerprint, entry);
    });
  };
  for (const entry of entries) {
    batch.push(entry);
    if (batch.length === 50_000) await flush();
  }
  await flush();
}

export function consumedEntry(fingerprint: string, at: number): ReplayEntry {
  return { fingerprint, state: "consumed", token: `token-${fingerprint}`, createdAt: at, updatedAt: at, expiresAt: null };
}

export function reservedEntry(fingerprint: string, at: number, ttlMs: number): ReplayEntry {
  return { fingerprint, state: "reserved", token: `token-${fingerprint}`, createdAt: at, updatedAt: at, expiresAt: at + ttlMs };
}

/** What a store read through the databases it opened on a `counting` root. */
export interface Reads {
  /** Entries read: one per `get`, one per item of a range, per database name. */
  readonly byDb: Map<string, number>;
  /** The most entries read inside one transaction callback of the store. */
  maxPerTransaction: number;
  total(): number;
  reset(): void;
}

/**
 * Counts every read of the databases opened on `root` from now on (`get`, and each item a range yields: `getRange`,
 * and `getKeys`, which lmdb-js builds on it),
 * and the most made inside one `transaction` callback: the work a store does, whatever the machine's speed.
 */
export function countReads(root: RootDatabase): Reads {
  let current = 0;
  const reads: Reads = {
    byDb: new Map(),
    maxPerTransaction: 0,
    total: () => [...reads.byDb.values()].reduce((a, b) => a + b, 0),
    reset: () => {
      reads.byDb.clear();
      reads.maxPerTransaction = 0;
    },
  };
  const count = (name: string) => {
    reads.byDb.set(name, (reads.byDb.get(name) ?? 0) + 1);
    current += 1;
  };
  const openDB = root.openDB.bind(root) as (name: string, options: object) => Database<unknown, Key>;
  (root as { openDB: unknown }).openDB = (name: string, options: object) => {
    const db = openDB(name, options);
    const get = db.get.bind(db);
    db.get = (key) => (count(name), get(key));
    // lmdb-js's getKeys is getRange without values: counted here too.
    const range = (db.getRange as (options?: object) => Iterable<unknown>).bind(db);
    (db as { getRange: unknown }).getRange = (options?: object) => ({
      *[Symbol.iterator]() {
        for (const item of range(options)) {
          count(name);
          yield item;
        }
      },
    });
    const transaction = db.transaction.bind(db);
    db.transaction = <T>(callback: () => T) =>
      transaction(() => {
        current = 0;
        try {
          return callback();
        } finally {
          reads.maxPerTransaction = Math.max(reads.maxPerTransaction, current);
        }
      });
    return db;
  };
  return reads;
}
