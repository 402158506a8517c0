/**
 * The default replay store, on LMDB through lmdb-js (docs/replay.md). One LMDB environment (a
 * directory) can be shared with the audit and Surface B databases: this store only uses its own named database
 * (`replay` by default), and may be handed an already-open `RootDatabase`.
 *
 * ATOMICITY. Every operation that may write is one `db.transaction(callback)`: lmdb-js runs the callback
 * inside an LMDB write transaction, where `get` reads the transaction's own view, and commits it afterwards.
 * LMDB admits one write transaction per environment at a time, across threads AND processes (a robust
 * process-shared mutex in lock.mdb, released by the OS if the holder dies), so the read-check-write of one
 * callback cannot interleave with any other writer. Several callbacks queued in the same event turn share one
 * LMDB transaction; they run one after another, each seeing the writes of the ones before it.
 *
 * DURABILITY (acknowledged means durable). Every method resolves only after `await root.flushed`. From the
 * lmdb-js 3.x README (node_modules/lmdb/README.md):
 * - `overlappingSync` "is enabled by default on non-Windows operating systems": a commit is made visible first
 *   and flushed to disk afterwards, outside the write lock. "The write actions return a promise for when they are
 *   committed. The database includes a `flushed` property with a promise-like object that resolves when the
 *   last commit is fully flushed/synced to disk and is durable."
 * - `db.flushed`: "resolves when all previous writes have been committed and fully flushed/synced to disk".
 * So the promise of `transaction()` alone only means "committed and visible"; awaiting `flushed` after it
 * means "fsynced". (When `flushed` is read, it refers to the batch holding our transaction or to a later one;
 * LMDB flushes in commit order and an fsync covers every earlier page of the file, so either way our commit is
 * on disk.) Without overlappingSync (Windows, or an environment opened with `overlappingSync: false`) LMDB
 * syncs inside the commit and `flushed` equals `committed`: still durable. An environment opened with
 * `noSync`, `mapAsync` or `noMetaSync` voids the guarantee: never hand this store such a `RootDatabase`
 * (a path is always opened with the durable defaults).
 * Refusals also wait for `flushed`, so an answer never rests on a state that a crash could still undo.
 * `flushed` is awaited through the environment's `LmdbDurability` (lmdb-durability.ts), never directly: a failed
 * commit (a full disk) then rejects with StoreUnavailableError (503 at the HTTP edge) instead of waiting forever on
 * the failed batch's flush, and every write promise's failure is handled.
 *
 * EXPIRY INDEX. Beside its entries, the store keeps `<dbName>-expiry` (lmdb-expiry-index.ts), the entries that
 * expire, by expiry, changed in the same write transaction as the entries it indexes: `sweep` reads only what has
 * expired. A data dir written before the index existed is indexed once, in the background, from the store's
 * construction (`backfillExpiryIndex`).
 *
 * Values are JSON, readable by any other LMDB client: arrays of what the key does not say (lmdb-entry-encoding.ts), or
 * the objects an earlier release wrote, read as they are.
 */
import { randomUUID } from "node:crypto";
import { setImmediate as nextTurn } from "node:timers/promises";
import { open, type Database, type RootDatabase } from "lmdb";
import { ReplayStoreClosedError } from "./errors.js";
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
    } catch (error) {
      if (this.#ownsRoot) void this.#root.close();
      throw error;
    }
    this.#backfillInBackground();
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
   * The common case, nothing stored for the fingerprint, is one conditional write (`ifNoExists`) that LMDB's write
   * thread carries out without a round trip through a JavaScript transaction callback: a third of the latency of
   * `#transition` under HTTP load (docs/benchmarks.md). The record is written inside the conditional block, so what
   * `writeRecord` queues with the environment's asynchronous `put` is conditional too. When something is stored (a live entry, or
   * an expired reservation this consume may take over), the full transition decides.
   */
  async consume(fingerprint: string, options: ConsumeOptions = {}): Promise<ReplayResult> {
    const fp = checkFingerprint(fingerprint);
    const now = checkNow(options.now);
    const token = randomUUID();
    // Normalized before any write: nothing may throw after one.
    const context = options.context === undefined ? undefined : normalizeContext(options.context);
    this.#assertOpen();
    this.#durability.admit();
    this.#prefetch(fp);
    const fresh = decideConsume(fp, undefined, token, context, now);
    const recorded = this.#recordWrite(options.record);
    // Committed is not durable (see the header): `durable` waits for the fsync before answering.
    const block = this.#durability.durable(
      this.#db.ifNoExists(fp, () => {
        // Fails with the conditional block it belongs to: settled (recorded), never an unhandled rejection.
        this.#durability.settle(this.#db.put(fp, fresh.next));
        recorded?.write();
      }),
    );
    const written = await (recorded === null ? block : recorded.outcomeOf(block));
    if (written) return fresh.result;
    return this.#transition(fp, (current) => decideConsume(fp, current, token, context, now), options.record);
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
    return this.#write(() => {
      const current = this.#load(fp);
      if (current === undefined || !isExpired(current, at)) return false;
      this.#db.removeSync(fp);
      this.#expiry.track(fp, current, undefined);
      return true;
    });
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
    let after: ExpiryKey | undefined;
    for (;;) {
      const slice = await this.#write(() => this.#sweepSlice(at, after));
      removed += slice.removed;
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
    await this.#durability.flushed();
    return this.#load(fp) ?? null;
  }

  /**
   * Waits until every write is flushed. Closes the environment when this store opened it; a `RootDatabase`
   * handed in stays open (and the named database too: LMDB database handles are shared by the environment).
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // The backfill stops at its next slice; the one under way is committed first.
    await this.#backfill?.catch(() => undefined);
    if (this.#ownsRoot) await this.#root.close();
    else await this.#durability.flushed();
  }

  /**
   * The leaf a new entry lands on is a random page of the replay tree (its keys are fingerprints), which in a store larger
   * than memory the OS seldom holds. Read in on a thread of libuv's pool now, while the write waits for LMDB's one writer,
   * it is in memory when the writer gets to it, instead of every write of the environment waiting behind a disk read.
   * Not awaited: the write goes ahead whatever the prefetch does. Called after `#assertOpen`, never on a closed
   * environment, where lmdb-js 3.5.6 crashes the process (a close waits for prefetches already started).
   */
  #prefetch(fingerprint: string): void {
    // Not while commits fail (sidecar storage/lmdb/prefetch.ts, INVARIANT (no prefetch while commits fail)).
    if (this.#durability.health().ok) void this.#db.prefetch([fingerprint]);
  }

  /** `record` is written after a successful write, in the same transaction: it commits with it. */
  #transition(
    fingerprint: string,
    decide: (current: ReplayEntry | undefined) => Transition,
    record?: TransitionRecord,
  ): Promise<ReplayResult> {
    const recorded = this.#recordWrite(record);
    const result = this.#write(() => {
      const current = this.#load(fingerprint);
      const t = decide(current);
      // Inside a transaction callback, putSync writes into the current write transaction.
      if (t.next !== undefined) {
        this.#db.putSync(fingerprint, t.next);
        this.#expiry.track(fingerprint, current, t.next);
      }
      if (t.result.ok) recorded?.write();
      return t.result;
    });
    return recorded === null ? result : recorded.outcomeOf(result, (r) => r.ok);
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
  #sweepSlice(at: number, after: ExpiryKey | undefined): { readonly removed: number; readonly last: ExpiryKey | undefined } {
    const due = this.#expiry.due(at, after, SWEEP_SLICE);
    let removed = 0;
    for (const key of due) {
      const [expiresAt, fp] = key;
      let current: ReplayEntry | undefined;
      try {
        current = this.#load(fp);
      } catch {
        continue;
      }
      if (current === undefined || indexedExpiry(current) !== expiresAt) {
        this.#expiry.remove(key);
      } else if (isExpired(current, at)) {
        this.#db.removeSync(fp);
        this.#expiry.remove(key);
        removed += 1;
      }
    }
    return { removed, last: due.length === SWEEP_SLICE ? due[SWEEP_SLICE - 1] : undefined };
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
