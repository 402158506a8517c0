/**
 * The default replay store, on LMDB through lmdb-js (docs/replay.md, "LmdbReplayStore"). One environment can be shared
 * with the audit and Surface B databases: this store uses only its own named database (`replay` by default). ATOMICITY:
 * every operation that may write is one `db.transaction(callback)`, an LMDB write transaction, one per environment at
 * a time across threads and processes. DURABILITY (acknowledged means durable): every method, refusals included,
 * resolves only after the environment's `LmdbDurability.flushed()` (lmdb-durability.ts); never hand it a `RootDatabase`
 * opened with `noSync`, `mapAsync` or `noMetaSync`. RECORDS: what a transition writes besides its entry comes with the
 * call as data (lmdb-puts.ts), written in the transition's own write when it succeeds; the store calls nothing back.
 * EXPIRY INDEX: `<dbName>-expiry` (lmdb-expiry-index.ts), in the same transactions. Where entries are: lmdb-entries.ts;
 * the grouped appends of `consume`'s fast path: lmdb-appends.ts; values: lmdb-entry-encoding.ts.
 */
import { randomUUID } from "node:crypto";
import { setImmediate as nextTurn } from "node:timers/promises";
import { open, type RootDatabase } from "lmdb";
import { ReplayStoreClosedError } from "./errors.js";
import { fingerprintHash, type FingerprintHash, type FingerprintSet } from "./fingerprint-set.js";
import { LmdbAppends } from "./lmdb-appends.js";
import { LmdbDurability } from "./lmdb-durability.js";
import { LmdbEntries, type Located, type RebuildProgress } from "./lmdb-entries.js";
import { LmdbExpiryIndex, indexedExpiry, type ExpiryKey } from "./lmdb-expiry-index.js";
import { writePuts, type LmdbConsumeOptions, type LmdbPut, type LmdbResolveOverrideOptions } from "./lmdb-puts.js";
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
  type Transition,
} from "./lifecycle.js";
import type { ReplayEntry, ReplayResult, ReplayStore, ReserveOptions } from "./store.js";

export const DEFAULT_REPLAY_DB_NAME = "replay";

export interface LmdbReplayStoreOptions {
  /** Name of the LMDB database inside the environment, default `replay`; its expiry index is `<dbName>-expiry`. */
  readonly dbName?: string;
  /** Told of the fingerprint set's rebuild at open (`ready`): after each slice, and once done. */
  readonly onRebuild?: (progress: RebuildProgress) => void;
}

/**
 * Index keys `sweep` handles per write transaction (each a read of the key and of its entry and two removals), and
 * entries the backfill indexes per write transaction (each one read from a cursor, a write for the few that expire):
 * slices of about the same time, so that neither the event loop nor the write lock is held for more than a few ms.
 */
const SWEEP_SLICE = 128;
const BACKFILL_SLICE = 256;

export class LmdbReplayStore implements ReplayStore {
  readonly #root: RootDatabase;
  readonly #entries: LmdbEntries;
  readonly #appends: LmdbAppends;
  readonly #expiry: LmdbExpiryIndex;
  readonly #ownsRoot: boolean;
  readonly #durability: LmdbDurability;
  /** The backfill under way (`backfillExpiryIndex`); null when none is. */
  #backfill: Promise<number> | null = null;
  #closed = false;
  /** Rejects when the rebuild failed: every operation then fails (503), none answers from an incomplete set. */
  readonly #ready: Promise<void>;

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
    const dbName = options.dbName ?? DEFAULT_REPLAY_DB_NAME;
    try {
      this.#entries = new LmdbEntries(this.#root, dbName, this.#durability);
      this.#expiry = new LmdbExpiryIndex(this.#root, `${dbName}-expiry`);
    } catch (error) {
      if (this.#ownsRoot) void this.#root.close();
      throw error;
    }
    this.#appends = new LmdbAppends(this.#entries, this.#durability, () => this.#closed);
    this.#ready = this.#entries.rebuild(options.onRebuild);
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
    const set = this.#entries.set;
    return set === null ? null : { size: set.size, bytes: set.bytes };
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
   * reads nothing: the entry and `options.puts` are appended in a conditional block (lmdb-appends.ts), which costs a
   * third of the latency of a transition under HTTP load (docs/benchmarks.md). A fingerprint the set holds (a replay, or
   * a reservation this consume may take over), or a block refused because another process appended first, goes through
   * the full transition, which reads the entry and decides.
   */
  async consume(fingerprint: string, options: LmdbConsumeOptions = {}): Promise<ReplayResult> {
    const fp = checkFingerprint(fingerprint);
    const now = checkNow(options.now);
    const token = randomUUID();
    // Normalized before any write: nothing may throw after one.
    const context = options.context === undefined ? undefined : normalizeContext(options.context);
    this.#assertOpen();
    this.#durability.admit();
    const set = this.#entries.set ?? (await this.#whenReady());
    const hash = fingerprintHash(fp);
    if (!this.#appends.has(fp) && set.find(hash).length === 0) {
      const fresh = decideConsume(fp, undefined, token, context, now);
      if (await this.#appends.append(fp, hash, fresh.next!, options.puts)) return fresh.result;
    }
    return this.#transition(fp, (current) => decideConsume(fp, current, token, context, now), options.puts, true);
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
    options: LmdbResolveOverrideOptions = {},
  ): Promise<ReplayResult> {
    const fp = checkFingerprint(fingerprint);
    const tok = checkToken(token);
    const ok = checkApproved(approved);
    const at = checkNow(options.now);
    const normalized = normalizeContext(options.resolution);
    return this.#transition(fp, (current) => decideResolveOverride(current, tok, ok, normalized, at), options.puts);
  }

  async expire(fingerprint: string, now?: number): Promise<boolean> {
    const fp = checkFingerprint(fingerprint);
    const at = checkNow(now);
    this.#assertOpen();
    if (this.#entries.set === null) await this.#whenReady();
    if (this.#appends.has(fp)) await this.#appends.settled(fp);
    const hash = fingerprintHash(fp);
    const removed = await this.#write(() => {
      const { entry, location } = this.#entries.find(fp, hash, true);
      if (entry === undefined || location === null || !isExpired(entry, at)) return null;
      this.#entries.remove(fp, hash, location);
      this.#expiry.track(fp, entry, undefined);
      return location;
    });
    // Out of the set only once the removal is committed: a set never misses an entry that is still there.
    if (removed !== null) this.#entries.forget(hash, removed);
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
      for (const { hash, location } of slice.gone) this.#entries.forget(hash, location);
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
    if (this.#entries.set === null) await this.#whenReady();
    if (this.#appends.has(fp)) await this.#appends.settled(fp);
    await this.#durability.flushed();
    return this.#entries.find(fp, fingerprintHash(fp), false).entry ?? null;
  }

  /**
   * Waits until every write is flushed. Closes the environment when this store opened it; a `RootDatabase`
   * handed in stays open (and the named database too: LMDB database handles are shared by the environment).
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#appends.close();
    // The backfill stops at its next slice; the one under way is committed first.
    await this.#backfill?.catch(() => undefined);
    if (this.#ownsRoot) await this.#root.close();
    else await this.#durability.flushed();
  }

  /**
   * Reads the entry (where the set says it is), decides and writes, in one write transaction. `puts` are written after
   * a successful write, in the same transaction: they commit with it. `prefetch`: the entry's page is read in first
   * (lmdb-entries.ts `prefetch`), for a consume that found its fingerprint held (a replay, an entry of `replay` taken over).
   */
  #transition(
    fingerprint: string,
    decide: (current: ReplayEntry | undefined) => Transition,
    puts?: readonly LmdbPut[],
    prefetch = false,
  ): Promise<ReplayResult> {
    this.#assertOpen();
    const set = this.#entries.set;
    if (set === null || this.#appends.has(fingerprint)) {
      return this.#whenReady()
        .then(() => this.#appends.settled(fingerprint))
        .then(() => this.#transition(fingerprint, decide, puts, prefetch));
    }
    const hash = fingerprintHash(fingerprint);
    if (prefetch) for (const location of set.find(hash)) this.#entries.prefetch(fingerprint, hash, location);
    return this.#write(() => {
      const { entry: current, location } = this.#entries.find(fingerprint, hash, true);
      const t = decide(current);
      // Inside a transaction callback, putSync writes into the current write transaction.
      if (t.next !== undefined) {
        this.#entries.store(fingerprint, hash, location, t.next);
        this.#expiry.track(fingerprint, current, t.next);
      }
      if (t.result.ok && puts !== undefined) writePuts(puts);
      return t.result;
    });
  }

  /**
   * The set once rebuilt (the constructor's `LmdbEntries.rebuild`).
   * @throws StoreUnavailableError when the rebuild failed: no operation answers without the whole set
   */
  async #whenReady(): Promise<FingerprintSet> {
    await this.#ready;
    return this.#entries.set!;
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
    const transaction = this.#entries.db.transaction((): { readonly value: T } | { readonly error: unknown } => {
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
    this.#entries.catchUp(true);
    const due = this.#expiry.due(at, after, SWEEP_SLICE);
    const gone: { readonly hash: FingerprintHash; readonly location: number }[] = [];
    for (const key of due) {
      const [expiresAt, fp] = key;
      const hash = fingerprintHash(fp);
      let found: Located;
      try {
        found = this.#entries.locate(fp, hash);
      } catch {
        continue;
      }
      const { entry: current, location } = found;
      if (current === undefined || location === null || indexedExpiry(current) !== expiresAt) {
        this.#expiry.remove(key);
      } else if (isExpired(current, at)) {
        this.#entries.remove(fp, hash, location);
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
      const slice = await this.#write(() => this.#expiry.backfillSlice(this.#entries.db, BACKFILL_SLICE), "committed");
      if (slice === null) return read;
      read += slice;
      await nextTurn();
    }
  }

  /** Starts the backfill when the index is not complete and none is under way; its failure is recorded (durability). */
  #backfillInBackground(): void {
    if (this.#backfill === null && !this.#expiry.complete) void this.backfillExpiryIndex().catch(() => undefined);
  }

  /**
   * Closed, by `close()` or by the owner of the environment (from the moment its `close()` begins): an operation then
   * fails at once, where lmdb-js would leave a write on a closed environment unsettled for good.
   */
  #assertOpen(): void {
    if (this.#closed || !(this.#root as unknown as { isOperational(): boolean }).isOperational()) throw new ReplayStoreClosedError();
  }
}
