/**
 * Where an LmdbReplayStore keeps the entries of fingerprints it first stored (docs/replay.md, "The entry log"): a named
 * database `<dbName>-log` keyed by a 32-bit sequence number and the fingerprint's 64-bit hash (12 bytes, big-endian),
 * whose values are `[fingerprint, state, token, createdAt, …]` (lmdb-entry-encoding.ts after the fingerprint). A new
 * entry takes the next sequence number: it lands on the log's last page, which the writes before it just wrote, not a
 * random leaf of a tree keyed by fingerprint (in a store larger than memory, a disk read). A changed entry is rewritten
 * under its own key.
 *
 * THE HEAD. `<dbName>-head` holds one key whose version (lmdb-js `useVersions`) is the last sequence number given, set
 * by every append in its write transaction: a process knows from it alone whether another appended since (`head`), and
 * a block of appends conditioned on it (`ifHead`) is refused, whole, if another process appended first. Never goes back.
 */
import type { Database, RootDatabase } from "lmdb";
import { decodeEntry, encodeEntry } from "./lmdb-entry-encoding.js";
import { parseStoredEntry } from "./lifecycle.js";
import type { FingerprintHash } from "./fingerprint-set.js";
import type { ReplayEntry } from "./store.js";

/** The largest sequence number: the fingerprint set keeps locations in 32 bits, and its largest stands for "not in the log". */
export const MAX_SEQUENCE = 0xffff_fffe;

const HEAD = "head";

/** A log key: sequence number and fingerprint hash. */
export interface LogKey {
  readonly sequence: number;
  readonly hash: FingerprintHash;
}

/** The key of the synchronous reads and writes (lmdb-js copies a key when it is called): one buffer, not one each. */
const SCRATCH = Buffer.alloc(12);

function keyOf(sequence: number, hash: FingerprintHash, key: Buffer = Buffer.allocUnsafe(12)): Buffer {
  key.writeUInt32BE(sequence, 0);
  key.writeUInt32BE(hash.hi, 4);
  key.writeUInt32BE(hash.lo, 8);
  return key;
}

/** The value of an entry in the log: its fingerprint, then the array form of the `replay` database. */
const LOG_ENTRY_ENCODER = {
  encode: (entry: ReplayEntry): Buffer => Buffer.from(`[${JSON.stringify(entry.fingerprint)},${encodeEntry(entry).slice(1)}`, "utf8"),
  decode: (bytes: Uint8Array): unknown => JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")),
  needsStableBuffer: true,
};

export class LmdbReplayLog {
  readonly #log: Database<unknown, Buffer>;
  readonly #head: Database<true, string>;

  constructor(root: RootDatabase, name: string) {
    // `encoder` (lmdb-js's custom encoding) is not in its DatabaseOptions type.
    const log: object = { keyEncoding: "binary", encoder: LOG_ENTRY_ENCODER };
    this.#log = root.openDB<unknown, Buffer>(`${name}-log`, log);
    this.#head = root.openDB<true, string>(`${name}-head`, { useVersions: true, encoding: "json" });
  }

  /** The last sequence number given (0 before the first), as the current transaction (or read) sees it. */
  head(): number {
    return this.#head.getEntry(HEAD)?.version ?? 0;
  }

  /**
   * The entry of `fingerprint` at (`sequence`, its hash): undefined when there is none, or when the entry there is of
   * another fingerprint of the same hash. Throws when the value there is malformed.
   */
  read(sequence: number, hash: FingerprintHash, fingerprint: string): ReplayEntry | undefined {
    const value = this.#log.get(keyOf(sequence, hash, SCRATCH));
    if (!Array.isArray(value) || value[0] !== fingerprint) {
      if (value === undefined || (Array.isArray(value) && typeof value[0] === "string")) return undefined;
      throw new Error(`replay log holds a malformed entry at ${sequence}`);
    }
    return parseStoredEntry(decodeEntry(value.slice(1), fingerprint), fingerprint);
  }

  /** Inside a write transaction: stores `entry` at (`sequence`, its hash). */
  putSync(sequence: number, hash: FingerprintHash, entry: ReplayEntry): void {
    this.#log.putSync(keyOf(sequence, hash, SCRATCH), entry);
  }

  /** Inside a conditional block (`ifHead`): queues `entry` at (`sequence`, its hash). */
  put(sequence: number, hash: FingerprintHash, entry: ReplayEntry): Promise<boolean> {
    return this.#log.put(keyOf(sequence, hash), entry);
  }

  /** Inside a write transaction: removes the entry at (`sequence`, `hash`). */
  removeSync(sequence: number, hash: FingerprintHash): void {
    this.#log.removeSync(keyOf(sequence, hash, SCRATCH));
  }

  /** Inside a write transaction: the head becomes `sequence`. */
  setHeadSync(sequence: number): void {
    this.#head.putSync(HEAD, true, sequence);
  }

  /** Inside a conditional block (`ifHead`): queues the head's move to `sequence`. */
  setHead(sequence: number): Promise<boolean> {
    return this.#head.put(HEAD, true, sequence);
  }

  /**
   * A block of writes (`writes` queues them) made only if the head is still `expected` when it commits: resolves true
   * when they were made, false when another process appended first.
   */
  ifHead(expected: number, writes: () => void): Promise<boolean> {
    return expected === 0 ? this.#head.ifNoExists(HEAD, writes) : this.#head.ifVersion(HEAD, expected, writes);
  }

  /** Up to `limit` keys after sequence number `after` (exclusive), in order: a catch-up's or a rebuild's slice. */
  keysAfter(after: number, limit: number): LogKey[] {
    const start = Buffer.alloc(4);
    start.writeUInt32BE(after + 1, 0);
    const keys: LogKey[] = [];
    for (const key of this.#log.getKeys({ start, limit })) {
      keys.push({ sequence: key.readUInt32BE(0), hash: { hi: key.readUInt32BE(4), lo: key.readUInt32BE(8) } });
    }
    return keys;
  }

  /** Prefetches the page of (`sequence`, `hash`) on a thread of libuv's pool (not awaited). */
  prefetch(sequence: number, hash: FingerprintHash): void {
    void this.#log.prefetch([keyOf(sequence, hash)]);
  }

  /** Entries in the log (LMDB's count, O(1)). */
  count(): number {
    return (this.#log.getStats() as { entryCount: number }).entryCount;
  }
}

/**
 * Every entry in the log of the replay database `name` of `root`, in sequence order, as its fingerprint and the
 * members `decodeEntry` reads (for readers of a stopped data dir, such as `writ-sidecar import-lmdb`). The log must
 * exist: opening it would create it.
 */
export function* loggedEntries(root: RootDatabase, name: string): Generator<{ readonly fingerprint: string; readonly value: unknown }> {
  const log: object = { keyEncoding: "binary", encoder: LOG_ENTRY_ENCODER };
  for (const { value } of root.openDB<unknown, Buffer>(`${name}-log`, log).getRange({})) {
    const [fingerprint, ...rest] = value as [string, ...unknown[]];
    yield { fingerprint, value: rest };
  }
}
