/**
 * Where an LmdbReplayStore's entries are (docs/replay.md, "The entry log"): the log (lmdb-replay-log.ts), where a new
 * fingerprint's entry is appended, and the `replay` database, keyed by fingerprint, which holds the entries of a data
 * dir written before the log existed; found through the fingerprint set (fingerprint-set.ts), rebuilt from the keys of
 * both at open. Reads and writes here run inside the store's transactions (or reads); the set follows what this
 * process stored, and takes in what other processes appended when it misses (`catchUp`).
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Database, RootDatabase } from "lmdb";
import { StoreUnavailableError } from "./errors.js";
import { FingerprintSet, fingerprintHash, type FingerprintHash } from "./fingerprint-set.js";
import { parseStoredEntry } from "./lifecycle.js";
import type { LmdbDurability } from "./lmdb-durability.js";
import { REPLAY_ENTRY_ENCODER, decodeEntry } from "./lmdb-entry-encoding.js";
import { LmdbReplayLog, MAX_SEQUENCE } from "./lmdb-replay-log.js";
import type { ReplayEntry } from "./store.js";

/** How far the rebuild of the fingerprint set has got (docs/replay.md, "The fingerprint set"). */
export interface RebuildProgress {
  /** Keys read so far, of `total` (LMDB's counts of the log and of the `replay` database when it began). */
  readonly read: number;
  readonly total: number;
  readonly done: boolean;
  /** Milliseconds since it began. */
  readonly elapsedMs: number;
  /** The set's size in memory once done (FingerprintSet `bytes`). */
  readonly bytes: number;
}

/** The location, in the fingerprint set, of an entry in the `replay` database (keyed by fingerprint) rather than the log. */
const IN_REPLAY_DB = 0xffff_ffff;
/** Keys the rebuild reads per slice, with a turn of the event loop between slices. */
const REBUILD_SLICE = 65_536;

/** Where a fingerprint's entry is: a sequence number of the log, IN_REPLAY_DB, or null (no entry: a new one goes to the log). */
export interface Located {
  readonly entry: ReplayEntry | undefined;
  readonly location: number | null;
}

export class LmdbEntries {
  /** The `replay` database. */
  readonly db: Database<unknown, string>;
  readonly log: LmdbReplayLog;
  readonly #durability: LmdbDurability;
  /** Every fingerprint with an entry, once rebuilt (`rebuild`); null until then. */
  #set: FingerprintSet | null = null;
  /** Every log entry up to this sequence number is in the set (INVARIANT (no false negative), fingerprint-set.ts). */
  #synced = 0;

  constructor(root: RootDatabase, dbName: string, durability: LmdbDurability) {
    // `encoder` (lmdb-js's custom encoding) is not in its DatabaseOptions type.
    const entries: object = { encoder: REPLAY_ENTRY_ENCODER };
    this.db = root.openDB<unknown, string>(dbName, entries);
    this.log = new LmdbReplayLog(root, dbName);
    this.#durability = durability;
  }

  /** The fingerprint set; null before it is rebuilt. */
  get set(): FingerprintSet | null {
    return this.#set;
  }

  /** The last sequence number of the log the set has taken in. */
  get synced(): number {
    return this.#synced;
  }

  /** Appends up to `last` committed: the set holds them (they were added before the block). */
  appended(last: number): void {
    this.#synced = Math.max(this.#synced, last);
  }

  /**
   * Fills the set from the store: the log's keys (12 bytes each, hash included: no value is decoded) and the `replay`
   * database's keys (entries of a data dir written before the log existed, and never moved), in slices of
   * REBUILD_SLICE keys with a turn of the event loop between them. The head is read first: what another process
   * appends meanwhile is after it, and the first catch-up takes it in.
   * @throws StoreUnavailableError when it fails
   */
  async rebuild(onRebuild: ((progress: RebuildProgress) => void) | undefined): Promise<void> {
    const started = performance.now();
    try {
      const stats = this.db.getStats() as { entryCount: number };
      const total = this.log.count() + stats.entryCount;
      const set = new FingerprintSet(total);
      const head = this.log.head();
      let read = 0;
      const progress = (done: boolean) =>
        onRebuild?.({ read, total, done, elapsedMs: Math.round(performance.now() - started), bytes: done ? set.bytes : 0 });
      for (let after = 0; ;) {
        const keys = this.log.keysAfter(after, REBUILD_SLICE);
        for (const { sequence, hash } of keys) set.add(hash, sequence);
        read += keys.length;
        if (keys.length < REBUILD_SLICE) break;
        after = keys[keys.length - 1]!.sequence;
        progress(false);
        await nextTurn();
      }
      for (let after: string | undefined; ;) {
        const keys = Array.from(
          this.db.getKeys({ ...(after === undefined ? {} : { start: after, exclusiveStart: true }), limit: REBUILD_SLICE }),
        );
        for (const key of keys) set.add(fingerprintHash(key), IN_REPLAY_DB);
        read += keys.length;
        if (keys.length < REBUILD_SLICE) break;
        after = keys[keys.length - 1];
        progress(false);
        await nextTurn();
      }
      this.#synced = head;
      this.#set = set;
      progress(true);
    } catch (error) {
      throw new StoreUnavailableError(`the replay store's fingerprint set could not be rebuilt: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  /**
   * Inside a transaction (or a read): the entry of `fingerprint`, exact across processes. An entry found where the set
   * says is the one (a fingerprint has one entry, never moved); only when none is found does the set first take in what
   * other processes appended (`catchUp`), and look again if it took anything in.
   */
  find(fingerprint: string, hash: FingerprintHash, inWrite: boolean): Located {
    const found = this.locate(fingerprint, hash);
    return found.entry === undefined && this.catchUp(inWrite) ? this.locate(fingerprint, hash) : found;
  }

  /**
   * Inside a transaction (or a read): the entry of `fingerprint`, read only at the locations the set holds for its hash;
   * none (and nothing read) when it holds none.
   */
  locate(fingerprint: string, hash: FingerprintHash): Located {
    for (const location of this.#set!.find(hash)) {
      const entry = location === IN_REPLAY_DB ? this.#load(fingerprint) : this.log.read(location, hash, fingerprint);
      if (entry !== undefined) return { entry, location };
    }
    return { entry: undefined, location: null };
  }

  /**
   * Inside a transaction (or a read): the set takes the log entries appended since `synced`, by this process in a write
   * that it has not seen succeed yet, or by another process; true when it took any. They are the log's last pages: what
   * every append just wrote. In a write transaction, a head behind `synced` means writes of this process failed to
   * commit: what they added to the set stays as false positives, and the next append takes the sequence number they had.
   */
  catchUp(inWrite: boolean): boolean {
    const head = this.log.head();
    if (head > this.#synced) {
      for (let after = this.#synced; after < head;) {
        const keys = this.log.keysAfter(after, REBUILD_SLICE);
        for (const { sequence, hash } of keys) this.#set!.add(hash, sequence);
        if (keys.length < REBUILD_SLICE) break;
        after = keys[keys.length - 1]!.sequence;
      }
      this.#synced = head;
      return true;
    }
    if (inWrite && head < this.#synced) this.#synced = head;
    return false;
  }

  /**
   * Inside a write transaction: `entry` stored where the fingerprint's entry is (`location`), or appended to the log
   * when it has none, its sequence number then in the set (a write that fails to commit leaves it there: a false
   * positive, which the set allows).
   */
  store(fingerprint: string, hash: FingerprintHash, location: number | null, entry: ReplayEntry): void {
    if (location === IN_REPLAY_DB) {
      this.db.putSync(fingerprint, entry);
    } else if (location !== null) {
      this.log.putSync(location, hash, entry);
    } else {
      const sequence = this.#synced + 1;
      // Thrown before the transaction's first write (it is decided before anything is stored).
      if (sequence > MAX_SEQUENCE) throw new StoreUnavailableError(`the replay log is full: ${MAX_SEQUENCE} entries`);
      this.log.putSync(sequence, hash, entry);
      this.log.setHeadSync(sequence);
      this.#set!.add(hash, sequence);
      this.#synced = sequence;
    }
  }

  /** Inside a write transaction: removes the entry at `location`. The set forgets it once the removal has committed (`forget`). */
  remove(fingerprint: string, hash: FingerprintHash, location: number): void {
    if (location === IN_REPLAY_DB) this.db.removeSync(fingerprint);
    else this.log.removeSync(location, hash);
  }

  /** Once the removal of the entry at `location` has committed: out of the set, which never misses an entry still there. */
  forget(hash: FingerprintHash, location: number): void {
    this.#set!.remove(hash, location);
  }

  /**
   * The entry a consume finds held (a replay, a reservation taken over) is read by the write transaction: read in on a
   * thread of libuv's pool now, while the write waits for LMDB's one writer, its page is in memory when the writer gets
   * to it, instead of every write of the environment waiting behind a disk read. A new fingerprint's entry reads nothing
   * and is appended to the log's last page; other transitions read their entry without it, as they always did. Not
   * awaited: the write goes ahead whatever the prefetch does. Called after the store checked it is open, never on a
   * closed environment, where lmdb-js crashes the process (docs/storage-engines.md, "What the LMDB engine works around in lmdb-js").
   */
  prefetch(fingerprint: string, hash: FingerprintHash, location: number): void {
    // Not while commits fail (sidecar storage/lmdb/prefetch.ts, INVARIANT (no prefetch while commits fail)).
    if (!this.#durability.health().ok) return;
    if (location === IN_REPLAY_DB) void this.db.prefetch([fingerprint]);
    else this.log.prefetch(location, hash);
  }

  #load(fingerprint: string): ReplayEntry | undefined {
    const value = this.db.get(fingerprint);
    return value === undefined ? undefined : parseStoredEntry(decodeEntry(value, fingerprint), fingerprint);
  }
}
