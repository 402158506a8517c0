/**
 * The record log of the LMDB audit trail (log-storage.ts; docs/audit.md, "Serving the log"), in named databases beside
 * the trail's (record-log-databases.ts). A record written in a replay transition is held in memory once the
 * transition's answer says it committed (record-log-held.ts); any other record gets an `audit-log-pending` entry in
 * the transaction storing it. INVARIANT (a committed record held only in memory is not lost with the process): a
 * process's open mark stays until it closes with nothing in memory (record-log-open.ts); a mark whose process is gone
 * makes the next open adopt what the log lacks (record-log-accounting.ts). ONE OWNER: the holder of the data dir's lock
 * (data-dir-lock.ts). WRITTEN AS DATA: a round computes on the event loop and queues one `root.batch`; every other
 * writer runs in `exclusively`. SHARED (several processes of one sidecar; docs/audit.md, "Several processes of one
 * sidecar on one data dir"): every record is written with its pending entry, nothing is held in memory, and only the
 * lock's holder sequences, checkpoints and prunes; another takes the lock once it is free (record-log-owner.ts).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { checkpointHash, entryLeafHash, toHex, type LeafRange, type PerfectSubtree, type SignedCheckpoint } from "@writ/runtime";
import { LmdbDurability, type LmdbPut } from "@writ/runtime/lmdb";
import type { Database, Key, RootDatabase } from "lmdb";
import { prefetched } from "./prefetch.js";
import type { LoggedTrail } from "./logged-trail.js";
import { asStored, encoded } from "./stored-bytes.js";
import { LogAppender, nextCheckpoint } from "../../audit/record-log/log-tree.js";
import { SEQUENCE_BATCH } from "../../audit/record-log/checkpointer.js";
import type { CheckpointSigner, LogCounts, RecordLogStorage, StoredEntry, UnloggedRecord } from "../../audit/record-log/log-storage.js";
import { locators } from "../../audit/record-log/locator.js";
import { LmdbLogAccounting } from "./record-log-accounting.js";
import { HASH, entryCount, logState, openLogDatabases, prunedCount, type LogDatabases, type StoredState } from "./record-log-databases.js";
import { exportedEntries } from "./record-log-export.js";
import { DEFAULT_EXPORT_DISK_READS, DiskReadPacer } from "./read-pacer.js";
import { HeldRecords } from "./record-log-held.js";
import { crashedMarks, newMark, openLog } from "./record-log-open.js";
import { LogOwnership } from "./record-log-owner.js";

export { RECORD_LOG_DATABASES } from "./record-log-databases.js";
export type { LoggedTrail, StoredRecord } from "./logged-trail.js";

interface LatestCheckpoint {
  readonly size: number;
  readonly hash: string;
}

/** A record retention removed: its locator, and the time its pending entry (if any) is keyed by. */
export interface PrunedRecord {
  readonly locator: string;
  readonly ms: number;
}

/** How long a process that does not keep the log waits for the checkpoint it asked for, and how often it looks. */
const OWNER_CHECKPOINT_WAIT_MS = 10_000;
const OWNER_CHECKPOINT_POLL_MS = 20;

export class LmdbLogStorage implements RecordLogStorage {
  readonly #dbs: LogDatabases;
  readonly #durability: LmdbDurability;
  readonly #trail: LoggedTrail;
  /** An export's disk reads a second at most (SERVICE_EXPORT_DISK_READS); null: unbounded. */
  readonly #exportDiskReads: number | null;
  readonly #accounting: LmdbLogAccounting;
  readonly #held = new HeldRecords();
  readonly logId: string;
  /** This process's open mark (record-log-open.ts). */
  readonly #mark = newMark();
  /** Whether this process holds the data dir's lock (the header's ONE OWNER), from the open to the end of `close`. */
  readonly #owner: LogOwnership;
  /** The adoption under way (`adoptUnlogged`), or null. */
  #adopting: Promise<number> | null = null;
  /** The end of the latest work run `exclusively` (the header's WRITTEN AS DATA). */
  #exclusive: Promise<unknown> = Promise.resolve();

  /**
   * `instanceId`: the id to give the log when the data dir has none yet (SERVICE_INSTANCE_ID); null: a random UUID.
   * `exportDiskReads`: an export's disk reads a second at most (read-pacer.ts); null: unbounded.
   * `group`: for a process of a sidecar of several on this data dir, its supervisor (open-marks.ts `groupOf`): the
   * header's SHARED; null: one process.
   * @throws Error when the data dir holds a record log of another format, or of another instance id than `instanceId`
   */
  constructor(
    root: RootDatabase,
    trail: LoggedTrail,
    instanceId: string | null = null,
    exportDiskReads: number | null = DEFAULT_EXPORT_DISK_READS,
    group: string | null = null,
  ) {
    this.#dbs = openLogDatabases(root);
    this.#durability = LmdbDurability.of(root);
    this.#trail = trail;
    this.#exportDiskReads = exportDiskReads;
    this.#accounting = new LmdbLogAccounting(this.#dbs, trail, this.#held);
    this.#owner = new LogOwnership(this.#dbs, group);
    try {
      this.logId = openLog(this.#dbs, this.#mark, this.#owner.holds, instanceId, group);
    } catch (error) {
      this.#owner.release();
      throw error;
    }
  }

  /** Whether a transition's record is written with its pending entry (`pendingPut`), not held in memory: the header's SHARED. */
  get pendsWithRecord(): boolean {
    return this.#owner.shared;
  }

  /** The pending entry of a record, as a put for the write that stores it (the header's SHARED). */
  pendingPut(ms: number, locator: string, leaf: Uint8Array): LmdbPut {
    return { db: this.#dbs.pending as unknown as Database<unknown, Key>, key: [ms, locator], value: asStored(leaf) };
  }

  /** Whether this process keeps the log now (record-log-owner.ts): only then does it sequence, checkpoint and prune. */
  owns(): boolean {
    return this.#owner.owns();
  }

  /** For the checkpointer: whether another process of the sidecar asked for a checkpoint (record-log-owner.ts). */
  checkpointWanted(): boolean {
    return this.#owner.checkpointWanted();
  }

  /**
   * Hot path, for a record written with a replay transition: nothing is written; once `written` (the transition's
   * outcome) says it committed, the record is held in memory for the next sequencing round (the header's PENDING RECORDS).
   */
  holdOnCommit(written: Promise<boolean | null>, locator: string, leaf: Uint8Array): void {
    this.#held.holdOnCommit(written, locator, leaf);
  }

  /** With the write that stores the record, queued with the environment's asynchronous put: its pending entry. */
  pend(ms: number, locator: string, leaf: Uint8Array): Promise<boolean> {
    return this.#dbs.pending.put([ms, locator], asStored(leaf));
  }

  /** The same, inside a write transaction callback. */
  pendSync(ms: number, locator: string, leaf: Uint8Array): void {
    this.#dbs.pending.putSync([ms, locator], asStored(leaf));
  }

  /**
   * Inside a write transaction: logs that retention removed `removedRecords` (those sequenced; a pending one is simply
   * dropped, it never enters the log), each with the time its pending entry is keyed by. The note is itself a record,
   * pending like any other; `pruned` moves past the positions it lists (record-log-accounting.ts).
   */
  notePruned(removedRecords: readonly PrunedRecord[], ms: number, ordinal: number): void {
    const dbs = this.#dbs;
    const positions: number[] = [];
    for (const { locator, ms: at } of removedRecords) {
      const position = dbs.index.get(locator);
      if (position !== undefined) positions.push(position);
      // Its pending entry, if any: written with its time, or with 0 when adopted.
      dbs.pending.removeSync([at, locator]);
      dbs.pending.removeSync([0, locator]);
      // Should this transaction fail, the record stays stored: the next open's adoption takes it in.
      this.#held.release(locator, true);
    }
    if (positions.length === 0) return;
    dbs.meta.putSync("pruned", prunedCount(dbs) + positions.length);
    const bytes = encoded({ positions, reason: "retention" });
    dbs.prunes.putSync([ms, ordinal], asStored(bytes));
    this.pendSync(ms, locators.prune(ms, ordinal), entryLeafHash({ kind: "prune", record: bytes }));
  }

  /** Reads the index entries of `locators` into memory off the event loop: what `notePruned` reads of them. */
  async prefetchIndex(locators: readonly string[]): Promise<void> {
    await prefetched(this.#dbs.root, this.#dbs.index, locators);
  }

  /** The stored bytes of a prune note. */
  readPrune(ms: number, ordinal: number): Buffer | undefined {
    return this.#dbs.prunes.getBinary([ms, ordinal]) ?? undefined;
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
   * Appends up to `max` records: the pending entries first, in their keys' order, then the records held in memory; a
   * record the log already holds (adopted at open while another process held it in memory) is skipped. One batch (the
   * header's WRITTEN AS DATA); the records taken from memory leave it once the batch commits: should it fail, the next
   * round takes them again.
   */
  sequence(logId: string, max: number): Promise<number> {
    this.#own(logId);
    if (!this.owns()) return Promise.resolve(0);
    return this.exclusively(async () => {
      const dbs = this.#dbs;
      const state = logState(dbs);
      const log = new LogAppender(state);
      const appended: { readonly position: number; readonly locator: string; readonly leaf: Uint8Array }[] = [];
      const inRound = new Set<string>();
      const append = (locator: string, leaf: Uint8Array): void => {
        if (inRound.has(locator) || dbs.index.get(locator) !== undefined) return;
        inRound.add(locator);
        appended.push({ position: log.size, locator, leaf });
        log.append(leaf);
      };
      const fromStore = Array.from(dbs.pending.getRange({ limit: max }), ({ key, value }) => ({ key, value }));
      // Retention drops the pending entry of a record it removes (notePruned): a record gone otherwise is logged
      // anyway, and shows as removed without a prune note, which the export's verification reports.
      for (const { key, value } of fromStore) append(key[1], value);
      const taken: string[] = [];
      for (const [locator, leaf] of this.#held.committed()) {
        if (fromStore.length + taken.length >= max) break;
        append(locator, leaf);
        taken.push(locator);
      }
      const count = fromStore.length + taken.length;
      if (count === 0) return 0;
      const next = log.state();
      await this.#durability.commit(
        dbs.root.batch(() => {
          for (const { key } of fromStore) dbs.pending.remove(key);
          for (const { position, locator, leaf } of appended) {
            dbs.index.put(locator, position);
            const value = Buffer.allocUnsafe(HASH + Buffer.byteLength(locator));
            value.set(leaf);
            value.write(locator, HASH);
            dbs.entries.put(position, asStored(value));
          }
          for (const node of log.nodes) dbs.nodes.put([node.height, node.index], asStored(node.hash));
          if (next.size > state.size) dbs.meta.put("state", { size: next.size, frontier: next.frontier.map(toHex) } satisfies StoredState);
        }),
      );
      for (const locator of taken) this.#held.release(locator);
      return count;
    });
  }

  /**
   * Signed through the signer's engine (on a signing thread, where there are some), written as one batch (the header's
   * WRITTEN AS DATA): the state it signs cannot move meanwhile, every other writer of it waiting in `exclusively`. A
   * process that does not keep the log asks the one that does, and answers its checkpoint once it covers every record
   * that was logged or pending when asked (the latest one after OWNER_CHECKPOINT_WAIT_MS, should it not come).
   */
  checkpoint(logId: string, signer: CheckpointSigner, now: Date): Promise<SignedCheckpoint | null> {
    this.#own(logId);
    if (!this.owns()) return this.#checkpointOfOwner(signer, now);
    return this.exclusively(async () => {
      const checkpoint = await nextCheckpoint(this.logId, logState(this.#dbs), this.#latest(), signer, now);
      if (checkpoint === null) return null;
      await this.#durability.commit(
        this.#dbs.root.batch(() => {
          this.#dbs.checkpoints.put(checkpoint.size, checkpoint);
          this.#dbs.meta.put("latest", { size: checkpoint.size, hash: checkpointHash(checkpoint) } satisfies LatestCheckpoint);
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
    return { size: logState(this.#dbs).size, pending: entryCount(this.#dbs.pending) + this.#held.size, latest: this.#latest() };
  }

  async checkpoints(logId: string, from: number, limit: number): Promise<SignedCheckpoint[]> {
    if (logId !== this.logId) return [];
    return Array.from(this.#dbs.checkpoints.getRange({ start: from, limit }), ({ value }) => value);
  }

  async checkpointAt(logId: string, size: number): Promise<SignedCheckpoint | null> {
    return logId === this.logId ? (this.#dbs.checkpoints.get(size) ?? null) : null;
  }

  async leaves(logId: string, range: LeafRange): Promise<Uint8Array[]> {
    this.#own(logId);
    return Array.from(this.#dbs.entries.getRange({ start: range.start, end: range.end }), ({ value }) => value.subarray(0, HASH));
  }

  async nodes(logId: string, subtrees: readonly PerfectSubtree[]): Promise<Uint8Array[]> {
    this.#own(logId);
    return subtrees.map((s) => {
      const hash = this.#dbs.nodes.getBinary([s.height, s.index]);
      if (hash === undefined)
        throw new Error(`the record log has no root of the subtree of height ${s.height} at ${s.index}: its store is damaged`);
      return hash;
    });
  }

  async decisionEntry(executionId: string): Promise<{ readonly logId: string; readonly position: number } | null> {
    const locator = await this.#trail.decisionLocator(executionId);
    const position = locator === undefined ? undefined : this.#dbs.index.get(locator);
    return position === undefined ? null : { logId: this.logId, position };
  }

  /** In pages read ahead off the event loop (record-log-export.ts), at most `exportDiskReads` disk reads a second. */
  entries(logId: string, from: number, to: number): AsyncGenerator<StoredEntry> {
    this.#own(logId);
    const pacer = this.#exportDiskReads === null ? null : new DiskReadPacer(this.#exportDiskReads);
    return exportedEntries(this.#dbs, this.#trail, from, to, pacer);
  }

  /** Once an adoption under way is done; nothing to read when the store's counts add up (record-log-accounting.ts). */
  async *unlogged(): AsyncGenerator<UnloggedRecord> {
    await this.#adopting?.catch(() => undefined);
    yield* this.#accounting.unlogged();
  }

  /**
   * Takes every stored record that the log lacks into the pending set (record-log-accounting.ts): the records written
   * while the log was off, and those a process that crashed held in memory, its open mark left. One adoption at a
   * time, by the process keeping the log (another adopts none); answers how many records it took.
   */
  adoptUnlogged(): Promise<number> {
    if (!this.#owner.holds) return Promise.resolve(0);
    this.#adopting ??= this.#accounting
      .adopt(crashedMarks(this.#dbs, this.#mark), (work) => this.exclusively(work))
      .finally(() => (this.#adopting = null));
    return this.#adopting;
  }

  /**
   * Appends what is held in memory once every write under way has its outcome, then removes this process's open mark,
   * unless a record left memory without entering the log, or the adoption failed (then the next open adopts them).
   * Before the environment closes; a failure leaves the mark, never loses a record.
   */
  async close(): Promise<void> {
    await this.#adopting?.catch(() => (this.#held.incomplete = true));
    await this.#held.settled();
    try {
      for (let left = this.#held.committedSize; left > 0; left = this.#held.committedSize) await this.sequence(this.logId, left);
      if (!this.#held.incomplete) await this.#dbs.root.transaction(() => this.#dbs.meta.removeSync(this.#mark));
    } finally {
      this.#owner.release();
    }
  }

  /** `checkpoint` where another process keeps the log, or kept it until it died: then this one takes it and signs. */
  async #checkpointOfOwner(signer: CheckpointSigner, now: Date): Promise<SignedCheckpoint | null> {
    const target = logState(this.#dbs).size + entryCount(this.#dbs.pending);
    await this.#owner.askCheckpoint();
    for (const until = Date.now() + OWNER_CHECKPOINT_WAIT_MS; ; await sleep(OWNER_CHECKPOINT_POLL_MS)) {
      if (this.owns()) {
        while (logState(this.#dbs).size < target && (await this.sequence(this.logId, SEQUENCE_BATCH)) > 0);
        return this.checkpoint(this.logId, signer, now);
      }
      const latest = this.#latest();
      if ((latest !== null && latest.size >= target) || Date.now() >= until) return latest;
    }
  }

  #latest(): SignedCheckpoint | null {
    const latest = this.#dbs.meta.get("latest") as LatestCheckpoint | undefined;
    return latest === undefined ? null : (this.#dbs.checkpoints.get(latest.size) ?? null);
  }

  #own(logId: string): void {
    if (logId !== this.logId) throw new RangeError(`this data dir holds the log \`${this.logId}\`, not \`${logId}\``);
  }
}
