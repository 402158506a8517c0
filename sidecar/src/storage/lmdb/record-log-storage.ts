/**
 * The record log of the LMDB audit trail (log-storage.ts): one log, this data dir's instance, in named databases beside
 * the trail's (their layout, the accounting and the write lock: docs/audit.md, "Serving the log"). A record written in
 * a replay transition (the hot path) is hashed from the bytes it writes and held in memory once its write committed
 * (runtime `RecordWriter`'s `written`); any other record gets an `audit-log-pending` entry in the transaction storing it.
 *
 * INVARIANT (a committed record held only in memory is not lost with the process): every process that opens the data
 * dir leaves an `open:<id>` mark until it closes with nothing left in memory; a mark whose process is gone makes the
 * next open take every record the log lacks into the pending set (`adoptUnlogged`). ONE OWNER: the owner holds the
 * data dir's lock (data-dir-lock.ts) while the log is open. WRITTEN AS DATA: a round computes on the event loop and
 * queues one `root.batch`, committed without calling back into JavaScript; every other writer runs in `exclusively`.
 */
import { randomUUID } from "node:crypto";
import {
  checkpointHash,
  entryLeafHash,
  hashFromHex,
  isLogEntryKind,
  toHex,
  type LeafRange,
  type LogEntryKind,
  type PerfectSubtree,
  type SignedCheckpoint,
  type SigningKey,
} from "@writ/runtime";
import { LmdbDurability } from "@writ/runtime/lmdb";
import type { Database, RootDatabase } from "lmdb";
import { prefetched } from "./prefetch.js";
import { Slicer } from "../../audit/slices.js";
import { pages } from "./pages.js";
import { asStored, encoded } from "./stored-bytes.js";
import { LogAppender, nextCheckpoint, type LogState } from "../../audit/record-log/log-tree.js";
import type { LogCounts, RecordLogStorage, StoredEntry, UnloggedRecord } from "../../audit/record-log/log-storage.js";
import { LOCATOR_KIND, locators, parseLocator } from "../../audit/record-log/locator.js";
import { InstanceInUseError } from "../instance-in-use.js";
import { describeMark, markIsStale, ownMark, type OpenMark } from "../../audit/record-log/open-marks.js";
import { LOCK_FILE, environmentDir, holdDataDir, type DataDirHold } from "./data-dir-lock.js";

export const RECORD_LOG_DATABASES = {
  pending: "audit-log-pending",
  entries: "audit-log-entries",
  index: "audit-log-index",
  nodes: "audit-log-nodes",
  checkpoints: "audit-log-checkpoints",
  prunes: "audit-log-prunes",
  meta: "audit-log-meta",
} as const;

/** The layout above. A data dir whose log has another format is refused at open, never read as this one. */
const FORMAT = 3;
/** The format before open marks: the same databases, so it is taken over by writing the new format number. */
const FORMAT_WITHOUT_MARKS = 2;
const MARK_PREFIX = "open:";
/** How long `close` waits for the outcome of the writes under way. */
const CLOSE_WAIT_MS = 5_000;
const HASH = 32;
/** Records taken into the pending set per transaction when the log adopts records it lacks. */
const ADOPT_CHUNK = 256;

interface StoredState {
  readonly size: number;
  /** Hex frontier hashes at `size`. */
  readonly frontier: readonly string[];
}

interface LatestCheckpoint {
  readonly size: number;
  readonly hash: string;
}

/** A record of the trail as the log reads it. */
export interface StoredRecord {
  readonly locator: string;
  readonly raw: Buffer;
}

/** What the log reads of the trail it logs. */
export interface LoggedTrail {
  /** The exact stored bytes of the record `locator` names; undefined when it is gone. */
  raw(locator: string): Buffer | undefined;
  /** Reads the pages of the records `locators` name into memory off the event loop, so that `raw` of them costs no disk read. */
  prefetch(locators: readonly string[]): Promise<void>;
  /** How many records the trail stores (prune notes aside: the log's own), in O(1): the header's ACCOUNTING. */
  storedCount(): number;
  /**
   * Every record the trail stores (prune notes aside), decisions newest first, read lazily and in pages (slices.ts
   * `pages`): the caller may await between records without holding a read transaction.
   */
  stored(): Iterable<StoredRecord>;
  /** The locator of the decision of `executionId`; undefined when the trail has none. */
  decisionLocator(executionId: string): Promise<string | undefined>;
}

export class LmdbLogStorage implements RecordLogStorage {
  readonly #root: RootDatabase;
  readonly #durability: LmdbDurability;
  readonly #pending: Database<Buffer, [number, string]>;
  readonly #entries: Database<Buffer, number>;
  readonly #index: Database<number, string>;
  readonly #nodes: Database<Buffer, [number, number]>;
  readonly #checkpoints: Database<SignedCheckpoint, number>;
  readonly #prunes: Database<Buffer, [number, number]>;
  readonly #meta: Database<unknown, string>;
  readonly #trail: LoggedTrail;
  readonly logId: string;
  /** This process's open mark (the header's INVARIANT). */
  readonly #mark = `${MARK_PREFIX}${randomUUID()}`;
  /** This process's hold of the data dir's lock (the header's ONE OWNER), from the open to the end of `close`. */
  #hold: DataDirHold | null = null;
  /** Records whose write committed, not yet appended: locator → leaf, oldest first (a Map keeps insertion order). */
  readonly #committed = new Map<string, Uint8Array>();
  /** The locators of the records whose write's outcome is not known yet (a locator may be awaited twice: a retried write). */
  readonly #awaitingLocators = new Map<string, number>();
  #awaiting = 0;
  /** The adoption under way (`adoptUnlogged`), or null. */
  #adopting: Promise<number> | null = null;
  #allSettled: (() => void) | null = null;
  /** A record left memory without entering the log (its write's outcome unknown, or retention): keep the mark at close. */
  #incomplete = false;
  /** The end of the latest work run `exclusively` (the header's WRITTEN AS DATA). */
  #exclusive: Promise<unknown> = Promise.resolve();

  /**
   * `instanceId`: the id to give the log when the data dir has none yet (SERVICE_INSTANCE_ID); null: a random UUID.
   * @throws Error when the data dir holds a record log of another format, or of another instance id than `instanceId`
   */
  constructor(root: RootDatabase, trail: LoggedTrail, instanceId: string | null = null) {
    this.#root = root;
    this.#durability = LmdbDurability.of(root);
    this.#trail = trail;
    this.#pending = root.openDB<Buffer, [number, string]>(RECORD_LOG_DATABASES.pending, { encoding: "binary" });
    this.#entries = root.openDB<Buffer, number>(RECORD_LOG_DATABASES.entries, { encoding: "binary" });
    this.#index = root.openDB<number, string>(RECORD_LOG_DATABASES.index, { encoding: "msgpack" });
    this.#nodes = root.openDB<Buffer, [number, number]>(RECORD_LOG_DATABASES.nodes, { encoding: "binary" });
    this.#checkpoints = root.openDB<SignedCheckpoint, number>(RECORD_LOG_DATABASES.checkpoints, { encoding: "json" });
    this.#prunes = root.openDB<Buffer, [number, number]>(RECORD_LOG_DATABASES.prunes, { encoding: "binary" });
    this.#meta = root.openDB<unknown, string>(RECORD_LOG_DATABASES.meta, { encoding: "json" });
    this.#hold = holdDataDir(environmentDir(root));
    try {
      this.logId = this.#open(instanceId);
    } catch (error) {
      this.#hold?.release();
      throw error;
    }
  }

  /**
   * Hot path, inside a replay transition's write that stores the record: nothing is written; once `written` says the
   * write committed, the record is held in memory for the next sequencing round (the header's PENDING RECORDS).
   */
  pendOnCommit(written: Promise<boolean | null>, locator: string, leaf: Uint8Array): void {
    this.#awaiting += 1;
    this.#awaitingLocators.set(locator, (this.#awaitingLocators.get(locator) ?? 0) + 1);
    void written.then((committed) => {
      if (committed === true) this.#committed.set(locator, leaf);
      else if (committed === null) this.#incomplete = true;
      const left = this.#awaitingLocators.get(locator)! - 1;
      if (left === 0) this.#awaitingLocators.delete(locator);
      else this.#awaitingLocators.set(locator, left);
      this.#awaiting -= 1;
      if (this.#awaiting === 0) this.#allSettled?.();
    });
  }

  /** Inside the write that stores the record: its leaf, queued with the environment's asynchronous put. */
  pend(ms: number, locator: string, leaf: Uint8Array): Promise<boolean> {
    return this.#pending.put([ms, locator], asStored(leaf));
  }

  /** The same, inside a write transaction callback. */
  pendSync(ms: number, locator: string, leaf: Uint8Array): void {
    this.#pending.putSync([ms, locator], asStored(leaf));
  }

  /**
   * Inside a write transaction: logs that retention removed `removedRecords` (those sequenced; a pending one is simply
   * dropped, it never enters the log), each with the time its pending entry is keyed by. The note is itself a record,
   * pending like any other; `pruned` moves past the positions it lists (the header's ACCOUNTING).
   */
  notePruned(removedRecords: readonly PrunedRecord[], ms: number, ordinal: number): void {
    const positions: number[] = [];
    for (const { locator, ms: at } of removedRecords) {
      const position = this.#index.get(locator);
      if (position !== undefined) positions.push(position);
      // Its pending entry, if any: written with its time, or with 0 when adopted.
      this.#pending.removeSync([at, locator]);
      this.#pending.removeSync([0, locator]);
    }
    for (const { locator } of removedRecords) {
      // Should this transaction fail, those records stay stored: the next open's adoption takes them in.
      if (this.#committed.delete(locator)) this.#incomplete = true;
    }
    if (positions.length === 0) return;
    this.#meta.putSync("pruned", this.#pruned() + positions.length);
    const bytes = encoded({ positions, reason: "retention" });
    this.#prunes.putSync([ms, ordinal], asStored(bytes));
    this.pendSync(ms, locators.prune(ms, ordinal), entryLeafHash({ kind: "prune", record: bytes }));
  }

  /** Reads the index entries of `locators` into memory off the event loop: what `notePruned` reads of them. */
  async prefetchIndex(locators: readonly string[]): Promise<void> {
    await prefetched(this.#root, this.#index, locators);
  }

  /** The stored bytes of a prune note. */
  readPrune(ms: number, ordinal: number): Buffer | undefined {
    return this.#prunes.getBinary([ms, ordinal]) ?? undefined;
  }

  /** Every prune note, with its locator, newest first, in pages (slices.ts). */
  *prunes(): Generator<StoredRecord> {
    for (const { key, value } of pages(this.#prunes, { reverse: true })) yield { locator: locators.prune(key[0], key[1]), raw: value };
  }

  /**
   * Runs `work` once every earlier work run here has settled, alone: sequencing, checkpoints, adoption, and retention's
   * chunks (whose transaction writes `notePruned`), so what a round read stays true until its batch commits.
   */
  exclusively<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#exclusive.then(work, work);
    this.#exclusive = run.catch(() => undefined);
    return run;
  }

  /**
   * Appends the pending entries first, then the records held in memory; a record the log already holds (adopted at open
   * while another process held it in memory) is skipped. One batch (the header's WRITTEN AS DATA); the records taken from
   * memory leave it once the batch commits: should it fail, the next round takes them again.
   */
  sequence(logId: string, max: number): Promise<number> {
    this.#own(logId);
    return this.exclusively(async () => {
      const state = this.#state();
      const log = new LogAppender(state);
      const appended: { readonly position: number; readonly locator: string; readonly leaf: Uint8Array }[] = [];
      const inRound = new Set<string>();
      const append = (locator: string, leaf: Uint8Array): void => {
        if (inRound.has(locator) || this.#index.get(locator) !== undefined) return;
        inRound.add(locator);
        appended.push({ position: log.size, locator, leaf });
        log.append(leaf);
      };
      const fromStore = Array.from(this.#pending.getRange({ limit: max }), ({ key, value }) => ({ key, value }));
      // Retention drops the pending entry of a record it removes (notePruned): a record gone otherwise is logged
      // anyway, and shows as removed without a prune note, which the export's verification reports.
      for (const { key, value } of fromStore) append(key[1], value);
      const taken: string[] = [];
      for (const [locator, leaf] of this.#committed) {
        if (fromStore.length + taken.length >= max) break;
        append(locator, leaf);
        taken.push(locator);
      }
      const count = fromStore.length + taken.length;
      if (count === 0) return 0;
      const next = log.state();
      await this.#durability.commit(
        this.#root.batch(() => {
          for (const { key } of fromStore) this.#pending.remove(key);
          for (const { position, locator, leaf } of appended) {
            this.#index.put(locator, position);
            const value = Buffer.allocUnsafe(HASH + Buffer.byteLength(locator));
            value.set(leaf);
            value.write(locator, HASH);
            this.#entries.put(position, asStored(value));
          }
          for (const node of log.nodes) this.#nodes.put([node.height, node.index], asStored(node.hash));
          if (next.size > state.size)
            this.#meta.put("state", { size: next.size, frontier: next.frontier.map(toHex) } satisfies StoredState);
        }),
      );
      for (const locator of taken) this.#committed.delete(locator);
      return count;
    });
  }

  /** Signed on the event loop, written as one batch (the header's WRITTEN AS DATA). */
  checkpoint(logId: string, key: SigningKey, now: Date): Promise<SignedCheckpoint | null> {
    this.#own(logId);
    return this.exclusively(async () => {
      const checkpoint = nextCheckpoint(this.logId, this.#state(), this.#latest(), key, now);
      if (checkpoint === null) return null;
      await this.#durability.commit(
        this.#root.batch(() => {
          this.#checkpoints.put(checkpoint.size, checkpoint);
          this.#meta.put("latest", { size: checkpoint.size, hash: checkpointHash(checkpoint) } satisfies LatestCheckpoint);
        }),
      );
      return checkpoint;
    });
  }

  async stale(): Promise<string[]> {
    return [];
  }

  async logIds(): Promise<string[]> {
    return [this.logId];
  }

  /** Once an adoption under way is done: the records it takes in are pending, not missing. */
  async counts(logId: string): Promise<LogCounts | null> {
    if (logId !== this.logId) return null;
    await this.#adopting?.catch(() => undefined);
    return { size: this.#state().size, pending: entryCount(this.#pending) + this.#committed.size + this.#awaiting, latest: this.#latest() };
  }

  async checkpoints(logId: string, from: number, limit: number): Promise<SignedCheckpoint[]> {
    if (logId !== this.logId) return [];
    return Array.from(this.#checkpoints.getRange({ start: from, limit }), ({ value }) => value);
  }

  async checkpointAt(logId: string, size: number): Promise<SignedCheckpoint | null> {
    return logId === this.logId ? (this.#checkpoints.get(size) ?? null) : null;
  }

  async leaves(logId: string, range: LeafRange): Promise<Uint8Array[]> {
    this.#own(logId);
    return Array.from(this.#entries.getRange({ start: range.start, end: range.end }), ({ value }) => value.subarray(0, HASH));
  }

  async nodes(logId: string, subtrees: readonly PerfectSubtree[]): Promise<Uint8Array[]> {
    this.#own(logId);
    return subtrees.map((s) => {
      const hash = this.#nodes.getBinary([s.height, s.index]);
      if (hash === undefined)
        throw new Error(`the record log has no root of the subtree of height ${s.height} at ${s.index}: its store is damaged`);
      return hash;
    });
  }

  async decisionEntry(executionId: string): Promise<{ readonly logId: string; readonly position: number } | null> {
    const locator = await this.#trail.decisionLocator(executionId);
    const position = locator === undefined ? undefined : this.#index.get(locator);
    return position === undefined ? null : { logId: this.logId, position };
  }

  /**
   * In pages of EXPORT_PAGE entries, each page's entries and records read into memory by a thread of libuv's pool
   * while the page before is served (`#readAhead`): an export of any length holds no read transaction for long, and
   * its reads of a store larger than memory wait on the disk off the event loop, never on it.
   */
  async *entries(logId: string, from: number, to: number): AsyncGenerator<StoredEntry> {
    this.#own(logId);
    let ahead = from < to ? this.#readAhead(from, to) : null;
    for (let start = from; ahead !== null; start += EXPORT_PAGE) {
      const page = await ahead;
      ahead = start + EXPORT_PAGE < to ? this.#readAhead(start + EXPORT_PAGE, to) : null;
      // An abandoned export leaves no rejection unhandled.
      ahead?.catch(() => undefined);
      for (const { position, leaf, locator, kind } of page) {
        const raw = this.#trail.raw(locator);
        yield { position, kind, leaf, record: raw === undefined ? null : raw.toString("utf8") };
      }
    }
  }

  /** The entries at positions [start, min(start + EXPORT_PAGE, to)), with their records' pages prefetched. */
  async #readAhead(start: number, to: number): Promise<readonly LocatedEntry[]> {
    const end = Math.min(start + EXPORT_PAGE, to);
    // Positions are dense (0 to size − 1): the page's keys are known before it is read.
    await prefetched(
      this.#root,
      this.#entries,
      Array.from({ length: end - start }, (_, i) => start + i),
    );
    const page = Array.from(this.#entries.getRange({ start, end }), ({ key: position, value }): LocatedEntry => {
      const locator = value.subarray(HASH).toString("utf8");
      const kind = LOCATOR_KIND[locator[0]!];
      if (kind === undefined || !isLogEntryKind(kind))
        throw new Error(`the record log's entry ${position} names no record (\`${locator}\`): its store is damaged`);
      return { position, kind, leaf: value.subarray(0, HASH), locator };
    });
    await this.#trail.prefetch(page.map((entry) => entry.locator));
    return page;
  }

  /** Nothing to read when the store's counts add up (the header's ACCOUNTING); else the trail, walked in slices. */
  async *unlogged(): AsyncGenerator<UnloggedRecord> {
    await this.#adopting?.catch(() => undefined);
    if (this.#unaccounted() === 0) return;
    const slicer = new Slicer();
    for (const record of this.#everyStored()) {
      if (!this.#accountedFor(record))
        yield { kind: LOCATOR_KIND[record.locator[0]!]! as LogEntryKind, record: record.raw.toString("utf8") };
      await slicer.pause();
    }
  }

  /**
   * How many stored records are neither in the log nor pending nor held in memory (the header's ACCOUNTING), read in one
   * snapshot: 0 in an untouched store. Costs a few counts and one read per record held in memory.
   */
  #unaccounted(): number {
    const stored = this.#trail.storedCount() + entryCount(this.#prunes);
    const logged = this.#state().size - this.#pruned();
    let inMemory = 0;
    const held = (locator: string): void => {
      if (this.#index.get(locator) === undefined && this.#trail.raw(locator) !== undefined) inMemory += 1;
    };
    for (const locator of this.#committed.keys()) held(locator);
    for (const locator of this.#awaitingLocators.keys()) held(locator);
    return stored - logged - entryCount(this.#pending) - inMemory;
  }

  /** Whether `record` is in the log, pending, or held in memory. */
  #accountedFor(record: StoredRecord): boolean {
    const { locator } = record;
    if (this.#index.get(locator) !== undefined) return true;
    const at = pendingTime(record);
    if (this.#pending.doesExist([0, locator]) || (Number.isFinite(at) && this.#pending.doesExist([at, locator]))) return true;
    return this.#awaitingLocators.has(locator) || this.#committed.has(locator);
  }

  /** Every record the store holds: the trail's, then the prune notes. */
  *#everyStored(): Generator<StoredRecord> {
    yield* this.#trail.stored();
    yield* this.prunes();
  }

  #pruned(): number {
    return (this.#meta.get("pruned") as number | undefined) ?? 0;
  }

  #state(): LogState {
    const stored = this.#meta.get("state") as StoredState | undefined;
    return stored === undefined ? { size: 0, frontier: [] } : { size: stored.size, frontier: stored.frontier.map(hashFromHex) };
  }

  #latest(): SignedCheckpoint | null {
    const latest = this.#meta.get("latest") as LatestCheckpoint | undefined;
    return latest === undefined ? null : (this.#checkpoints.get(latest.size) ?? null);
  }

  #own(logId: string): void {
    if (logId !== this.logId) throw new RangeError(`this data dir holds the log \`${this.logId}\`, not \`${logId}\``);
  }

  /** The instance id, made at the first open of the data dir and kept; the format checked. */
  #open(configured: string | null): string {
    return this.#root.transactionSync(() => {
      const format = this.#meta.get("format");
      const known = this.#meta.get("logId");
      if (format === undefined && this.#meta.get("state") !== undefined) {
        throw new Error(
          "the audit record log in this data dir was written by a development version of writ whose leaves are hashed otherwise: remove its `audit-log-*` databases, or run with SERVICE_AUDIT_LOG=off",
        );
      }
      if (format !== undefined && format !== FORMAT && format !== FORMAT_WITHOUT_MARKS) {
        throw new Error(
          `the audit record log in this data dir has format ${String(format)}, not ${FORMAT}: run the writ release that wrote it`,
        );
      }
      if (format !== FORMAT) this.#meta.putSync("format", FORMAT);
      // A log written before `pruned` was kept: counted once from its prune notes (one read per note).
      if (this.#meta.get("pruned") === undefined) this.#meta.putSync("pruned", this.#countPrunedPositions());
      // In the write transaction that leaves this process's mark: of two processes opening the data dir at once, the
      // second sees the first's mark.
      const owner = this.#liveOwner();
      if (owner !== null) {
        throw new InstanceInUseError(
          typeof known === "string" ? known : (configured ?? "(not named yet)"),
          owner,
          "give each sidecar its own data dir (SERVICE_DATA_DIR), and its own SERVICE_INSTANCE_ID if set",
        );
      }
      this.#meta.putSync(this.#mark, ownMark());
      if (typeof known === "string") {
        if (configured !== null && configured !== known) {
          throw new Error(
            `SERVICE_INSTANCE_ID is \`${configured}\`, but this data dir's audit record log is \`${known}\`: the id of a data dir's log never changes (unset SERVICE_INSTANCE_ID, or set it to \`${known}\`)`,
          );
        }
        return known;
      }
      const made = configured ?? randomUUID();
      this.#meta.putSync("logId", made);
      return made;
    });
  }

  /** The positions listed by every prune note. */
  #countPrunedPositions(): number {
    let pruned = 0;
    for (const { value } of pages(this.#prunes))
      pruned += (JSON.parse(value.toString("utf8")) as { positions: readonly number[] }).positions.length;
    return pruned;
  }

  /**
   * Takes every stored record that the log lacks (neither in it, nor pending, nor held in memory) into the pending set,
   * key [0, locator]: the records written while the log was off (a trail older than the log, or run with
   * SERVICE_AUDIT_LOG=off; the `complete` mark is then absent), and those a crashed process held in memory (its open mark
   * is left). Nothing is read when the counts add up (the header's ACCOUNTING). Otherwise the trail is walked in slices,
   * newest decisions first, each slice's records checked again and taken in one write transaction; after a crash, the walk
   * stops once it has found as many as the counts miss. Then `complete` is set and the crashed marks removed. One adoption
   * at a time; answers how many records it took.
   */
  adoptUnlogged(): Promise<number> {
    this.#adopting ??= this.#adopt().finally(() => (this.#adopting = null));
    return this.#adopting;
  }

  async #adopt(): Promise<number> {
    const crashed = this.#crashedMarks();
    const complete = this.#meta.get("complete") === true;
    if (complete && crashed.length === 0) return 0;
    const missing = this.#unaccounted();
    let adopted = 0;
    if (missing !== 0) {
      // After a crash (the log complete before it), the records missing are the ones it held: enough once found.
      const enough = complete && missing > 0 ? missing : Infinity;
      const slicer = new Slicer();
      let chunk: StoredRecord[] = [];
      for (const record of this.#everyStored()) {
        if (!this.#accountedFor(record)) chunk.push(record);
        if (chunk.length >= ADOPT_CHUNK || adopted + chunk.length >= enough || (chunk.length > 0 && slicer.due())) {
          adopted += await this.#pendAdopted(chunk);
          chunk = [];
          if (adopted >= enough) break;
        }
        await slicer.pause();
      }
      if (chunk.length > 0) adopted += await this.#pendAdopted(chunk);
    }
    await this.#root.transaction(() => {
      this.#meta.putSync("complete", true);
      for (const mark of crashed) this.#meta.removeSync(mark);
    });
    return adopted;
  }

  /** In one write transaction: each of `records` still unaccounted for enters the pending set. Answers how many did. */
  #pendAdopted(records: readonly StoredRecord[]): Promise<number> {
    return this.exclusively(() =>
      this.#root.transaction(() => {
        let taken = 0;
        for (const record of records) {
          if (this.#accountedFor(record)) continue;
          this.pendSync(0, record.locator, entryLeafHash({ kind: LOCATOR_KIND[record.locator[0]!]!, record: record.raw }));
          taken += 1;
        }
        return taken;
      }),
    );
  }

  /**
   * Another live process with the data dir open (another sidecar), as the refusal names it, if any: its log is not this
   * one's to take. The lock's holder, named by its mark when the mark tells; or a live process's mark without the lock.
   */
  #liveOwner(): string | null {
    for (const { mark } of this.#otherMarks()) if (!markIsStale(mark)) return `${describeMark(mark)} has this data dir open`;
    return this.#hold === null ? `another process holds the data dir's lock (${LOCK_FILE})` : null;
  }

  /** The open marks of processes gone without closing (the header's INVARIANT; open-marks.ts). */
  #crashedMarks(): string[] {
    const crashed: string[] = [];
    for (const { key, mark } of this.#otherMarks()) if (markIsStale(mark)) crashed.push(key);
    return crashed;
  }

  /** The open marks of other processes than this one, live or not (open-marks.ts), with their keys. */
  *#otherMarks(): Generator<{ readonly key: string; readonly mark: OpenMark }> {
    for (const { key, value } of this.#meta.getRange({ start: MARK_PREFIX, end: `${MARK_PREFIX}\uffff` })) {
      if (key !== this.#mark) yield { key, mark: value as OpenMark };
    }
  }

  /**
   * Appends what is held in memory once every write under way has its outcome, then removes this process's open mark,
   * unless a record left memory without entering the log (then the next open adopts it). Before the environment
   * closes; a failure leaves the mark, never loses a record.
   */
  async close(): Promise<void> {
    await this.#adopting?.catch(() => (this.#incomplete = true));
    if (this.#awaiting > 0) {
      // A write whose outcome never comes (its environment closed under it) must not hold the close: after
      // CLOSE_WAIT_MS, the mark stays and the next open looks for what it wrote.
      let timer: NodeJS.Timeout | undefined;
      const settled = await Promise.race([
        new Promise<boolean>((resolve) => (this.#allSettled = () => resolve(true))),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CLOSE_WAIT_MS))),
      ]);
      clearTimeout(timer);
      if (!settled) this.#incomplete = true;
    }
    try {
      while (this.#committed.size > 0) await this.sequence(this.logId, this.#committed.size);
      if (!this.#incomplete) await this.#root.transaction(() => this.#meta.removeSync(this.#mark));
    } finally {
      this.#hold?.release();
    }
  }

  /** The log stops being complete: records are about to be written without it (SERVICE_AUDIT_LOG=off). */
  static markIncomplete(root: RootDatabase): void {
    const meta = root.openDB<unknown, string>(RECORD_LOG_DATABASES.meta, { encoding: "json" });
    if (meta.get("complete") !== undefined) root.transactionSync(() => meta.removeSync("complete"));
  }
}

/** A record retention removed: its locator, and the time its pending entry (if any) is keyed by. */
export interface PrunedRecord {
  readonly locator: string;
  readonly ms: number;
}

/** Log entries an export reads, and prefetches, at a time: 256 records of 4 KB or so, a megabyte. */
const EXPORT_PAGE = 256;

/** An entry of the log as an export reads it, before its record. */
interface LocatedEntry {
  readonly position: number;
  readonly kind: LogEntryKind;
  readonly leaf: Buffer;
  readonly locator: string;
}

/** The entries of `db`, counted by LMDB in O(1). */
function entryCount(db: { getStats(): unknown }): number {
  return (db.getStats() as { entryCount: number }).entryCount;
}

/**
 * The time a record's pending entry is keyed by when the trail wrote it: the key's time for a decision, verification,
 * security event or prune note; an override's or confirmation's `recordedAt` (storage/lmdb/audit-log.ts `#instant`).
 */
function pendingTime(record: StoredRecord): number {
  const { kind, fields } = parseLocator(record.locator);
  if (kind !== "override" && kind !== "confirmation") return Number(fields[0]);
  const recordedAt = (JSON.parse(record.raw.toString("utf8")) as { recordedAt?: unknown }).recordedAt;
  return typeof recordedAt === "string" ? Date.parse(recordedAt) : NaN;
}
