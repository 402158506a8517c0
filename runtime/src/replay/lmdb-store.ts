/**
 * The default replay store, on LMDB through lmdb-js (docs/replay.md, "LmdbReplayStore"). One environment can be shared
 * with the audit and Surface B databases: this store uses only its own named database (`replay` by default). ATOMICITY. Every operation that may write is one `db.transaction(callback)`, an LMDB write transaction; LMDB admits
 * one per environment at a time, across threads and processes, so no read-check-write interleaves with another writer.
 * DURABILITY (acknowledged means durable). Every method, refusals included, resolves only after the environment's
 * `LmdbDurability.flushed()` (lmdb-durability.ts): a committed transaction is fsynced once `root.flushed` resolves (the
 * lmdb-js README's `overlappingSync` and `flushed`, quoted in docs/replay.md), and a failed commit rejects with
 * StoreUnavailableError instead of waiting forever. Never hand it a `RootDatabase` opened with `noSync`, `mapAsync` or
 * `noMetaSync`. EXPIRY INDEX: `<dbName>-expiry` (lmdb-expiry-index.ts), written in the same transactions. Values are
 * JSON arrays (lmdb-entry-encoding.ts) or the objects an earlier release wrote.
 */
import { randomUUID } from "node:crypto";
import { setImmediate as nextTurn } from "node:timers/promises";
import { open, type Database, type RootDatabase } from "lmdb";
import { ReplayStoreClosedError, StoreUnavailableError } from "./errors.js";
import { FingerprintSet, fingerprintHash, type FingerprintHash } from "./fingerprint-set.js";
import { LmdbReplayLog, MAX_SEQUENCE } from "./lmdb-replay-log.js";
import { LmdbDurability } from "./lmdb-durability.js";
import { REPLAY_ENTRY_ENCODER, decodeEntry } from "./lmdb-entry-encoding.js";
import { LmdbExpiryIndex, indexedExpiry, type ExpiryKey } from "./lmdb-expiry-index.js";
import {
  checkApproved,
  checkFailedTtl,
  checkFingerprint,
  checkNow,
  checkReserveTtl,
  checkToken,
  decideConfirm,
  decideConsume,
  decideFail,
  decideMarkPendingOverride,
  decideReserve,
  decideResolveOverride,
  decideStartExecution,
  isExpired,
  normalizeContext,
  parseStoredEntry,
  type Transition,
} from "./lifecycle.js";
import type { RecordWriter, TransitionRecord } from "./records.js";
import type { ConsumeOptions, ReplayEntry, ReplayResult, ReplayStore, ReserveOptions, ResolveOverrideOptions } from "./store.js";

export const DEFAULT_REPLAY_DB_NAME = "replay";

export interface LmdbReplayStoreOptions {
  /** Name of the LMDB database inside the environment, default `replay`; its expiry index is `<dbName>-expiry`. */
  readonly dbName?: string;
  /**
   * Writes the record of a transition inside its conditional write (records.ts `RecordWriter`): what it queues to this
   * environment with the asynchronous `put` commits and flushes with the transition, or not at all.
   */
  readonly writeRecord?: RecordWriter;
  /** Told of the fingerprint set's rebuild at open (`ready`): after each slice, and once done. */
  readonly onRebuild?: (progress: RebuildProgress) => void;
}

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
interface Located {
  readonly entry: ReplayEntry | undefined;
  readonly location: number | null;
}

/** A consume of a fingerprint the set does not hold, waiting for its group's conditional append (`#issue`). */
interface Append {
  readonly fingerprint: string;
  readonly hash: FingerprintHash;
  readonly entry: ReplayEntry;
  readonly recorded: RecordWrite | null;
  readonly settle: (written: Promise<boolean>) => void;
}

/**
 * Index keys `sweep` handles per write transaction (each a read of the key and of its entry and two removals), and
 * entries the backfill indexes per write transaction (each one read from a cursor, a write for the few that expire):
 * slices of about the same time, so that neither the event loop nor the write lock is held for more than a few ms.
 */
const SWEEP_SLICE = 128;
const BACKFILL_SLICE = 256;

/**
 * A transition's record on its way to the record writer (records.ts `RecordWriter`), with the `written` promise it is
 * handed, resolved by the durable write it belongs to: with whether the record took effect, or null when that write
 * failed. It never rejects.
 */
class RecordWrite {
  readonly #writer: RecordWriter;
  readonly #record: TransitionRecord;
  readonly #written: Promise<boolean | null>;
  #resolve!: (written: boolean | null) => void;

  constructor(writer: RecordWriter, record: TransitionRecord) {
    this.#writer = writer;
    this.#record = record;
    this.#written = new Promise<boolean | null>((resolve) => (this.#resolve = resolve));
  }

  /** Inside the write: hands the record to the writer. */
  write(): void {
    this.#writer(this.#record, this.#written);
  }

  /** Awaits `write` (the durable write the record was queued in) and resolves `written` from its value. */
  async outcomeOf<T>(write: Promise<T>, recordWritten: (value: T) => boolean = (value) => value === true): Promise<T> {
    try {
      const value = await write;
      this.#resolve(recordWritten(value));
      return value;
    } catch (error) {
      this.#resolve(null);
      throw error;
    }
  }
}

export class LmdbReplayStore implements ReplayStore {
  readonly #root: RootDatabase;
  readonly #db: Database<unknown, string>;
  readonly #expiry: LmdbExpiryIndex;
  readonly #ownsRoot: boolean;
  readonly #durability: LmdbDurability;
  readonly #writeRecord: RecordWriter | undefined;
  /** The backfill under way (`backfillExpiryIndex`); null when none is. */
  #backfill: Promise<number> | null = null;
  #closed = false;
  readonly #log: LmdbReplayLog;
  /** Every fingerprint with an entry, once rebuilt (`#ready`); null until then. */
  #set: FingerprintSet | null = null;
  /** Rejects when the rebuild failed: every operation then fails (503), none answers from an incomplete set. */
  readonly #ready: Promise<void>;
  /** Every log entry up to this sequence number is in the set (INVARIANT (no false negative), fingerprint-set.ts). */
  #synced = 0;
  /** Consumes waiting for the next group; the group in flight, when there is one, is `#inFlight`. */
  #waiting: Append[] = [];
  #inFlight = false;
  /** Fingerprints of the consumes waiting or in flight: any other operation on one waits for it (`#settled`). */
  readonly #pending = new Map<string, Promise<unknown>>();

  /**
   * @param source a directory for the LMDB environment (created when missing; this store then owns the
   *   environment and closes it), or an already-open `RootDatabase` (its owner closes it).
   */
  constructor(source: string | RootDatabase, options: LmdbReplayStoreOptions = {}) {
    if (typeof source === "string") {
      // Durable defaults on purpose: no noSync / mapAsync; overlappingSync as lmdb-js chooses per platform.
      // noReadAhead (MDB_NORDAHEAD, not in lmdb-js's types): a store larger than memory reads random keys, and the OS's
      // read-ahead would read around each for nothing.
      const options = { path: source, noSubdir: false, noReadAhead: true };
      this.#root = open(options);
      this.#ownsRoot = true;
    } else {
      this.#root = source;
      this.#ownsRoot = false;
    }
    this.#durability = LmdbDurability.of(this.#root);
    this.#writeRecord = options.writeRecord;
    const dbName = options.dbName ?? DEFAULT_REPLAY_DB_NAME;
    try {
      // `encoder` (lmdb-js's custom encoding) is not in its DatabaseOptions type.
      const entries: object = { encoder: REPLAY_ENTRY_ENCODER };
      this.#db = this.#root.openDB<unknown, string>(dbName, entries);
      this.#expiry = new LmdbExpiryIndex(this.#root, `${dbName}-expiry`);
      this.#log = new LmdbReplayLog(this.#root, dbName);
    } catch (error) {
      if (this.#ownsRoot) void this.#root.close();
      throw error;
    }
    this.#ready = this.#rebuild(options.onRebuild);
    this.#ready.catch(() => undefined);
    this.#backfillInBackground();
  }

  /**
   * Resolves once the fingerprint set is rebuilt from the store (started by the constructor): every operation waits
   * for it, so none answers from a set that is not whole.
   * @throws StoreUnavailableError when the rebuild failed
   */
  ready(): Promise<void> {
    return this.#ready;
  }

  /** The fingerprint set: fingerprints held and bytes in memory; null before it is rebuilt. */
  fingerprintSet(): { readonly size: number; readonly bytes: number } | null {
    return this.#set === null ? null : { size: this.#set.size, bytes: this.#set.bytes };
  }

  static open(source: string | RootDatabase, options: LmdbReplayStoreOptions = {}): LmdbReplayStore {
    return new LmdbReplayStore(source, options);
  }

  async reserve(fingerprint: string, options: ReserveOptions = {}): Promise<ReplayResult> {
    const fp = checkFingerprint(fingerprint);
    const ttlMs = checkReserveTtl(options.ttlMs);
    const now = checkNow(options.now);
    const token = randomUUID();
    return this.#transition(fp, (current) => decideReserve(fp, current, token, ttlMs, now));
  }

  /**
   * The common case, a fingerprint the set does not hold (no entry: fingerprint-set.ts INVARIANT (no false negative)),
   * reads nothing: the entry is appended to the log (lmdb-replay-log.ts) in a conditional block that LMDB's write thread
   * carries out without a round trip through a JavaScript transaction callback (a third of the latency of `#transition`
   * under HTTP load, docs/benchmarks.md), on the condition that no other process appended since this one last looked
   * (`#issue`). The record is written inside that block, so what `writeRecord` queues with the environment's
   * asynchronous `put` is conditional too. A fingerprint the set holds (a replay, or a reservation this consume may take
   * over), or a block refused because another process appended first, goes through the full transition, which reads
   * the entry and decides.
   */
  async consume(fingerprint: string, options: ConsumeOptions = {}): Promise<ReplayResult> {
    const fp = checkFingerprint(fingerprint);
    const now = checkNow(options.now);
    const token = randomUUID();
    // Normalized before any write: nothing may throw after one.
    const context = options.context === undefined ? undefined : normalizeContext(options.context);
    this.#assertOpen();
    this.#durability.admit();
    const set = this.#set ?? (await this.#whenReady());
    const hash = fingerprintHash(fp);
    if (!this.#pending.has(fp) && set.find(hash).length === 0) {
      const fresh = decideConsume(fp, undefined, token, context, now);
      const recorded = this.#recordWrite(options.record);
      const block = this.#append(fp, hash, fresh.next!, recorded);
      const written = await (recorded === null ? block : recorded.outcomeOf(block));
      if (written) return fresh.result;
    }
    return this.#transition(fp, (current) => decideConsume(fp, current, token, context, now), options.record, true);
  }

  async startExecution(fingerprint: string, token: string, now?: number): Promise<ReplayResult> {
    const fp = checkFingerprint(fingerprint);
    const tok = checkToken(token);
    const at = checkNow(now);
    return this.#transition(fp, (current) => decideStartExecution(current, tok, at));
  }

  async confirm(fingerprint: string, token: string, now?: number): Promise<ReplayResult> {
    const fp = checkFingerprint(fingerprint);
    const tok = checkToken(token);
    const at = checkNow(now);
    return this.#transition(fp, (current) => decideConfirm(current, tok, at));
  }

  async fail(fingerprint: string, token: string, options: { readonly ttlMs?: number; readonly now?: number } = {}): Promise<ReplayResult> {
    const fp = checkFingerprint(fingerprint);
    const tok = checkToken(token);
    const ttlMs = checkFailedTtl(options.ttlMs);
    const at = checkNow(options.now);
    return this.#transition(fp, (current) => decideFail(current, tok, ttlMs, at));
  }

  async markPendingOverride(fingerprint: string, token: string, context: unknown, now?: number): Promise<ReplayResult> {
    const fp = checkFingerprint(fingerprint);
    const tok = checkToken(token);
    const at = checkNow(now);
    // Normalized (and checked for cycles/BigInt) before the transaction: nothing may throw after a write in it.
    const normalized = normalizeContext(context);
    return this.#transition(fp, (current) => decideMarkPendingOverride(current, tok, normalized, at));
  }

  async resolveOverride(
    fingerprint: string,
    token: string,
    approved: boolean,
    options: ResolveOverrideOptions = {},
  ): Promise<ReplayResult> {
    const fp = checkFingerprint(fingerprint);
    const tok = checkToken(token);
    const ok = checkApproved(approved);
    const at = checkNow(options.now);
    const normalized = normalizeContext(options.resolution);
    return this.#transition(fp, (current) => decideResolveOverride(current, tok, ok, normalized, at), options.record);
  }

  async expire(fingerprint: string, now?: number): Promise<boolean> {
    const fp = checkFingerprint(fingerprint);
    const at = checkNow(now);
    this.#assertOpen();
    if (this.#set === null) await this.#whenReady();
    if (this.#pending.has(fp)) await this.#whenSettled(fp);
    const hash = fingerprintHash(fp);
    const removed = await this.#write(() => {
      const { entry, location } = this.#find(fp, hash, true);
      if (entry === undefined || location === null || !isExpired(entry, at)) return null;
      this.#remove(fp, hash, location);
      this.#expiry.track(fp, entry, undefined);
      return location;
    });
    // Out of the set only once the removal is committed: a set never misses an entry that is still there.
    if (removed !== null) this.#set!.remove(hash, removed);
    return removed !== null;
  }

  /**
   * Removes what has expired at `now`, found through the expiry index: it reads the index keys due at `now` (and one
   * more), and their entries, nothing else. In slices of SWEEP_SLICE keys, each one write transaction (flushed before
   * the next), with a turn of the event loop between slices. Each entry is checked again inside the transaction: one
   * re-reserved or transitioned meanwhile (by this process or another) is left alone, and its key, stale, is removed.
   * Entries of a data dir written before the index existed are swept once the backfill has indexed them; until then
   * an expired entry counts as absent for every operation anyway.
   */
  async sweep(now?: number): Promise<number> {
    const at = checkNow(now);
    this.#assertOpen();
    // A backfill stopped by a failed write resumes with the next sweep.
    this.#backfillInBackground();
    let removed = 0;
    await this.#whenReady();
    let after: ExpiryKey | undefined;
    for (;;) {
      const slice = await this.#write(() => this.#sweepSlice(at, after));
      for (const { hash, location } of slice.gone) this.#set!.remove(hash, location);
      removed += slice.gone.length;
      if (slice.last === undefined) return removed;
      after = slice.last;
      await nextTurn();
    }
  }

  /**
   * Indexes the entries of a data dir written before the expiry index existed, in slices of BACKFILL_SLICE entries,
   * each one write transaction, with a turn of the event loop between slices; resumable (lmdb-expiry-index.ts
   * `backfillSlice`: each slice records where the next one starts, in its own transaction), so a crash or a close
   * loses at most the slice under way, and several processes on one environment share the work. Started by the constructor when the
   * index is not complete; a call while one is under way shares it. Resolves with how many entries this run read
   * (0 once the index is complete). The slices are committed, not awaited to disk: a crash that undoes one undoes its
   * resume point with it, and the next run does it again.
   * @throws StoreUnavailableError when a slice cannot be written; ReplayStoreClosedError once closed
   */
  backfillExpiryIndex(): Promise<number> {
    if (this.#backfill === null) {
      const run = this.#indexExisting();
      const done = () => {
        if (this.#backfill === run) this.#backfill = null;
      };
      this.#backfill = run;
      run.then(done, done);
    }
    return this.#backfill;
  }

  /**
   * The stored entry (expired or not: `read` has no clock). Waits for `flushed` first, so it never reports a
   * write of this process that a crash could still undo.
   */
  async read(fingerprint: string): Promise<ReplayEntry | null> {
    const fp = checkFingerprint(fingerprint);
    this.#assertOpen();
    if (this.#set === null) await this.#whenReady();
    if (this.#pending.has(fp)) await this.#whenSettled(fp);
    await this.#durability.flushed();
    return this.#find(fp, fingerprintHash(fp), false).entry ?? null;
  }

  /**
   * Waits until every write is flushed. Closes the environment when this store opened it; a `RootDatabase`
   * handed in stays open (and the named database too: LMDB database handles are shared by the environment).
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // Consumes waiting for the next group are refused; the group in flight commits first (lmdb-js closes after it).
    if (!this.#inFlight) this.#issue();
    // The backfill stops at its next slice; the one under way is committed first.
    await this.#backfill?.catch(() => undefined);
    if (this.#ownsRoot) await this.#root.close();
    else await this.#durability.flushed();
  }

  /**
   * The entry a consume finds held (a replay, a reservation taken over) is read by the write transaction: read in on a
   * thread of libuv's pool now, while the write waits for LMDB's one writer, its page is in memory when the writer gets
   * to it, instead of every write of the environment waiting behind a disk read. A new fingerprint's entry reads nothing
   * and is appended to the log's last page; other transitions read their entry without it, as they always did. Not awaited: the write goes ahead whatever the prefetch does.
   * Called after `#assertOpen`, never on a closed environment, where lmdb-js crashes the process (a close waits for
   * prefetches already started; docs/storage-engines.md, "What the LMDB engine works around in lmdb-js").
   */
  #prefetch(fingerprint: string, hash: FingerprintHash, location: number): void {
    // Not while commits fail (sidecar storage/lmdb/prefetch.ts, INVARIANT (no prefetch while commits fail)).
    if (!this.#durability.health().ok) return;
    if (location === IN_REPLAY_DB) void this.#db.prefetch([fingerprint]);
    else this.#log.prefetch(location, hash);
  }

  /**
   * Reads the entry (where the set says it is), decides and writes, in one write transaction. `record` is written after
   * a successful write, in the same transaction: it commits with it. `prefetch`: the entry's page is read in first
   * (`#prefetch`), for a consume that found its fingerprint held (a replay, an entry of `replay` taken over).
   */
  #transition(
    fingerprint: string,
    decide: (current: ReplayEntry | undefined) => Transition,
    record?: TransitionRecord,
    prefetch = false,
  ): Promise<ReplayResult> {
    this.#assertOpen();
    const set = this.#set;
    if (set === null || this.#pending.has(fingerprint)) {
      return this.#whenReady()
        .then(() => this.#whenSettled(fingerprint))
        .then(() => this.#transition(fingerprint, decide, record, prefetch));
    }
    const hash = fingerprintHash(fingerprint);
    if (prefetch) for (const location of set.find(hash)) this.#prefetch(fingerprint, hash, location);
    const recorded = this.#recordWrite(record);
    const result = this.#write(() => {
      const { entry: current, location } = this.#find(fingerprint, hash, true);
      const t = decide(current);
      // Inside a transaction callback, putSync writes into the current write transaction.
      if (t.next !== undefined) {
        this.#store(fingerprint, hash, location, t.next);
        this.#expiry.track(fingerprint, current, t.next);
      }
      if (t.result.ok) recorded?.write();
      return t.result;
    });
    return recorded === null ? result : recorded.outcomeOf(result, (r) => r.ok);
  }

  /**
   * Inside a write transaction: `entry` stored where the fingerprint's entry is (`location`), or appended to the log
   * when it has none, its sequence number then in the set (a write that fails to commit leaves it there: a false
   * positive, which the set allows).
   */
  #store(fingerprint: string, hash: FingerprintHash, location: number | null, entry: ReplayEntry): void {
    if (location === IN_REPLAY_DB) {
      this.#db.putSync(fingerprint, entry);
    } else if (location !== null) {
      this.#log.putSync(location, hash, entry);
    } else {
      const sequence = this.#synced + 1;
      // Thrown before the transaction's first write (it is decided before anything is stored).
      if (sequence > MAX_SEQUENCE) throw new StoreUnavailableError(`the replay log is full: ${MAX_SEQUENCE} entries`);
      this.#log.putSync(sequence, hash, entry);
      this.#log.setHeadSync(sequence);
      this.#set!.add(hash, sequence);
      this.#synced = sequence;
    }
  }

  /** Inside a write transaction: removes the entry at `location`. The set forgets it once the removal has committed. */
  #remove(fingerprint: string, hash: FingerprintHash, location: number): void {
    if (location === IN_REPLAY_DB) this.#db.removeSync(fingerprint);
    else this.#log.removeSync(location, hash);
  }

  /**
   * Inside a transaction (or a read): the entry of `fingerprint`, exact across processes. An entry found where the set
   * says is the one (a fingerprint has one entry, never moved); only when none is found does the set first take in what
   * other processes appended (`#catchUp`), and look again if it took anything in.
   */
  #find(fingerprint: string, hash: FingerprintHash, inWrite: boolean): Located {
    const found = this.#locate(fingerprint, hash);
    return found.entry === undefined && this.#catchUp(inWrite) ? this.#locate(fingerprint, hash) : found;
  }

  /**
   * Inside a transaction (or a read): the entry of `fingerprint`, read only at the locations the set holds for its hash;
   * none (and nothing read) when it holds none.
   */
  #locate(fingerprint: string, hash: FingerprintHash): Located {
    for (const location of this.#set!.find(hash)) {
      const entry = location === IN_REPLAY_DB ? this.#load(fingerprint) : this.#log.read(location, hash, fingerprint);
      if (entry !== undefined) return { entry, location };
    }
    return { entry: undefined, location: null };
  }

  /**
   * Inside a transaction (or a read): the set takes the log entries appended since `#synced`, by this process in a write
   * that it has not seen succeed yet, or by another process; true when it took any. They are the log's last pages: what every append just
   * wrote. In a write transaction, a head behind `#synced` means writes of this process failed to commit: what they
   * added to the set stays as false positives, and the next append takes the sequence number they had.
   */
  #catchUp(inWrite: boolean): boolean {
    const head = this.#log.head();
    if (head > this.#synced) {
      for (let after = this.#synced; after < head;) {
        const keys = this.#log.keysAfter(after, REBUILD_SLICE);
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
   * Queues a consume's new entry for the next group (`#issue`); resolves with whether it was appended, false when the
   * group was refused (another process appended first: the caller then goes through `#transition`).
   */
  #append(fingerprint: string, hash: FingerprintHash, entry: ReplayEntry, recorded: RecordWrite | null): Promise<boolean> {
    const written = new Promise<boolean>((resolve, reject) => {
      this.#waiting.push({ fingerprint, hash, entry, recorded, settle: (outcome) => outcome.then(resolve, reject) });
    });
    const settled = written.then(
      () => undefined,
      () => undefined,
    );
    this.#pending.set(fingerprint, settled);
    void settled.then(() => {
      if (this.#pending.get(fingerprint) === settled) this.#pending.delete(fingerprint);
    });
    if (!this.#inFlight) this.#issue();
    return written;
  }

  /**
   * Appends the waiting consumes' entries in one conditional block: at the sequence numbers after `#synced`, on the
   * condition that the head is still `#synced` when LMDB's write thread commits it (lmdb-replay-log.ts, THE HEAD), so
   * that no fingerprint another process stored since this one's set last took the log in can be stored twice. One group
   * is in flight at a time: a group queued behind a refused one would otherwise find the head where the refused one
   * expected to leave it, moved there by another process's appends it never read. The consumes made meanwhile make the
   * next group, issued when this one settles.
   */
  #issue(): void {
    // Closed, or writes held (a full disk) since the consumes were admitted: refused as any write then is.
    const refusal = this.#closed ? new ReplayStoreClosedError() : this.#durability.admits() ? null : this.#heldError();
    if (refusal !== null) {
      for (const append of this.#waiting) append.settle(Promise.reject(refusal));
      this.#waiting = [];
      return;
    }
    // Checked against the set again now: it may have taken in entries since the consume looked (a catch-up), and the
    // block's condition only covers what is appended after `#synced`. One found goes through `#transition`.
    const group: Append[] = [];
    for (const append of this.#waiting) {
      if (this.#set!.find(append.hash).length === 0) group.push(append);
      else append.settle(Promise.resolve(false));
    }
    this.#waiting = [];
    if (group.length === 0) return;
    this.#inFlight = true;
    const expected = this.#synced;
    const last = expected + group.length;
    let outcome: Promise<boolean>;
    if (last > MAX_SEQUENCE) {
      outcome = Promise.reject(new StoreUnavailableError(`the replay log is full: ${MAX_SEQUENCE} entries`));
    } else {
      // In the set before the block commits: a consume of the same fingerprint made meanwhile reads the entry; if the
      // block is refused, these are false positives.
      group.forEach((append, i) => this.#set!.add(append.hash, expected + 1 + i));
      const block = this.#log.ifHead(expected, () => {
        group.forEach((append, i) => {
          // Fails with the conditional block it belongs to: settled (recorded), never an unhandled rejection.
          this.#durability.settle(this.#log.put(expected + 1 + i, append.hash, append.entry));
          append.recorded?.write();
        });
        this.#durability.settle(this.#log.setHead(last));
      });
      // Committed is not durable (see the header): `durable` waits for the fsync before answering.
      outcome = this.#durability.durable(block);
    }
    for (const append of group) append.settle(outcome);
    const next = (written: boolean) => {
      if (written) this.#synced = Math.max(this.#synced, last);
      this.#inFlight = false;
      this.#issue();
    };
    outcome.then(next, () => next(false));
  }

  /** The error `admit` throws while writes are held. */
  #heldError(): unknown {
    try {
      this.#durability.admit();
      return null;
    } catch (error) {
      return error;
    }
  }

  /** Once the consumes of `fingerprint` waiting or in flight have settled. */
  async #whenSettled(fingerprint: string): Promise<void> {
    for (let pending = this.#pending.get(fingerprint); pending !== undefined; pending = this.#pending.get(fingerprint)) await pending;
  }

  /**
   * The set once rebuilt (the constructor's `#rebuild`).
   * @throws StoreUnavailableError when the rebuild failed: no operation answers without the whole set
   */
  async #whenReady(): Promise<FingerprintSet> {
    await this.#ready;
    return this.#set!;
  }

  /**
   * Fills the set from the store: the log's keys (12 bytes each, hash included: no value is decoded) and the `replay`
   * database's keys (entries of a data dir written before the log existed, and never moved), in slices of
   * REBUILD_SLICE keys with a turn of the event loop between them. The head is read first: what another process
   * appends meanwhile is after it, and the first catch-up takes it in.
   */
  async #rebuild(onRebuild: ((progress: RebuildProgress) => void) | undefined): Promise<void> {
    const started = performance.now();
    try {
      const stats = this.#db.getStats() as { entryCount: number };
      const total = this.#log.count() + stats.entryCount;
      const set = new FingerprintSet(total);
      const head = this.#log.head();
      let read = 0;
      const progress = (done: boolean) =>
        onRebuild?.({ read, total, done, elapsedMs: Math.round(performance.now() - started), bytes: done ? set.bytes : 0 });
      for (let after = 0; ;) {
        const keys = this.#log.keysAfter(after, REBUILD_SLICE);
        for (const { sequence, hash } of keys) set.add(hash, sequence);
        read += keys.length;
        if (keys.length < REBUILD_SLICE) break;
        after = keys[keys.length - 1]!.sequence;
        progress(false);
        await nextTurn();
      }
      for (let after: string | undefined; ;) {
        const keys = Array.from(
          this.#db.getKeys({ ...(after === undefined ? {} : { start: after, exclusiveStart: true }), limit: REBUILD_SLICE }),
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
   * Runs `body` inside one LMDB write transaction and resolves once that transaction is flushed to disk (or only
   * committed, for a write nobody is answered about: the backfill). `body` must only throw before its first write
   * (the callbacks of one batch share the LMDB transaction, so a throw could not roll back a write of its own);
   * errors are carried out of the callback as values and rethrown here, so a throwing callback never disturbs the
   * other callbacks of the batch.
   */
  async #write<T>(body: () => T, until: "flushed" | "committed" = "flushed"): Promise<T> {
    this.#assertOpen();
    this.#durability.admit();
    const transaction = this.#db.transaction((): { readonly value: T } | { readonly error: unknown } => {
      try {
        return { value: body() };
      } catch (error) {
        return { error };
      }
    });
    // Committed is not durable (see the header): `durable` waits for the fsync before answering.
    const outcome = await (until === "flushed" ? this.#durability.durable(transaction) : this.#durability.commit(transaction));
    if ("error" in outcome) throw outcome.error;
    return outcome.value;
  }

  /**
   * Inside a write transaction: up to SWEEP_SLICE index keys due at `at` after `after`, each removed with its entry
   * when that has expired, removed alone when stale (its entry is gone or expires at another time), left when its
   * entry is malformed (no operation accepts it) or, against the lifecycle, never expires. `last`: where the next
   * slice starts; undefined when no key is left due.
   */
  #sweepSlice(
    at: number,
    after: ExpiryKey | undefined,
  ): { readonly gone: { readonly hash: FingerprintHash; readonly location: number }[]; readonly last: ExpiryKey | undefined } {
    this.#catchUp(true);
    const due = this.#expiry.due(at, after, SWEEP_SLICE);
    const gone: { readonly hash: FingerprintHash; readonly location: number }[] = [];
    for (const key of due) {
      const [expiresAt, fp] = key;
      const hash = fingerprintHash(fp);
      let found: Located;
      try {
        found = this.#locate(fp, hash);
      } catch {
        continue;
      }
      const { entry: current, location } = found;
      if (current === undefined || location === null || indexedExpiry(current) !== expiresAt) {
        this.#expiry.remove(key);
      } else if (isExpired(current, at)) {
        this.#remove(fp, hash, location);
        this.#expiry.remove(key);
        gone.push({ hash, location });
      }
    }
    return { gone, last: due.length === SWEEP_SLICE ? due[SWEEP_SLICE - 1] : undefined };
  }

  /** The slices of `backfillExpiryIndex`, until the index is complete or the store closed. */
  async #indexExisting(): Promise<number> {
    let read = 0;
    for (;;) {
      const slice = await this.#write(() => this.#expiry.backfillSlice(this.#db, BACKFILL_SLICE), "committed");
      if (slice === null) return read;
      read += slice;
      await nextTurn();
    }
  }

  /** Starts the backfill when the index is not complete and none is under way; its failure is recorded (durability). */
  #backfillInBackground(): void {
    if (this.#backfill === null && !this.#expiry.complete) void this.backfillExpiryIndex().catch(() => undefined);
  }

  /** `record` on its way to the record writer; null without either. */
  #recordWrite(record: TransitionRecord | undefined): RecordWrite | null {
    return record === undefined || this.#writeRecord === undefined ? null : new RecordWrite(this.#writeRecord, record);
  }

  #load(fingerprint: string): ReplayEntry | undefined {
    const value = this.#db.get(fingerprint);
    return value === undefined ? undefined : parseStoredEntry(decodeEntry(value, fingerprint), fingerprint);
  }

  /**
   * Closed, by `close()` or by the owner of the environment (from the moment its `close()` begins): an operation then
   * fails at once, where lmdb-js would leave a write on a closed environment unsettled for good.
   */
  #assertOpen(): void {
    if (this.#closed || !(this.#root as unknown as { isOperational(): boolean }).isOperational()) throw new ReplayStoreClosedError();
  }
}
