/**
 * The record log of the LMDB audit trail (log-storage.ts; docs/audit.md, "Serving the log"): one log, this data dir's
 * instance, in named databases beside the trail's.
 *
 * PENDING RECORDS, two ways. A record written inside a replay transition (a decision, an override, a confirmation: the
 * hot path) is hashed from the bytes it writes (runtime `entryLeafHash`) and held in memory once its write is known to
 * have committed (runtime `RecordWriter`'s `written`), with no write of its own: the next sequencing round appends it.
 * Any other record (a verification, a security event, a prune note, a record adopted at open) gets an entry in
 * `audit-log-pending`, written in the transaction that stores it.
 * INVARIANT (a committed record held only in memory is not lost with the process): every process that opens the data
 * dir leaves an `open:<id>` mark in `audit-log-meta` until it closes with nothing left in memory; a mark whose process
 * is gone (it crashed) makes the next open take every record the log lacks into the pending set (`adoptUnlogged`).
 *
 * LAYOUT (format 3; format 2, which had no open marks, is taken over as it is):
 * - `audit-log-pending`: key [ms, locator], value the record's leaf hash (32 bytes): records written, not yet in the
 *   log, other than those held in memory.
 * - `audit-log-entries`: key position, value leaf hash (32 bytes) || UTF-8 locator: the log, in order.
 * - `audit-log-index`: key locator, value position: where a record is in the log.
 * - `audit-log-nodes`: key [height, index], value the root (32 bytes) of a perfect subtree of height NODE_HEIGHT or more.
 * - `audit-log-checkpoints`: key size, value the signed checkpoint at that size.
 * - `audit-log-prunes`: key [ms, ordinal], value the prune note's JSON bytes: what retention removed, itself logged.
 * - `audit-log-meta`: `logId` (the instance id, made once), `format`, `state` {size, frontier}, `latest` (the last
 *   checkpoint's size and hash), `complete` (every stored record is in the log or pending: absent once the trail was
 *   written without the log, until `adoptUnlogged` takes those records in), `open:<id>` {pid, host, started} (a process that
 *   has the data dir open, or crashed with it open).
 *
 * Sequencing and checkpoints are write transactions of their own (`root.transaction`), so they hold LMDB's one write
 * lock: the log's only writer. Locators: locator.ts.
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
import type { Database, RootDatabase } from "lmdb";
import { asStored, encoded } from "../stored-bytes.js";
import { LogAppender, nextCheckpoint, type LogState } from "./log-tree.js";
import type { LogCounts, RecordLogStorage, StoredEntry, UnloggedRecord } from "./log-storage.js";
import { LOCATOR_KIND, locators } from "./locator.js";
import { markIsStale, ownMark, type OpenMark } from "./open-marks.js";

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
/** Records taken into the pending set per transaction when the log adopts a trail written without it. */
const ADOPT_CHUNK = 10_000;

interface StoredState {
  readonly size: number;
  /** Hex frontier hashes at `size`. */
  readonly frontier: readonly string[];
}

interface LatestCheckpoint {
  readonly size: number;
  readonly hash: string;
}

/** A record whose write committed, held in memory until a sequencing round appends it. */
interface CommittedRecord {
  readonly locator: string;
  readonly leaf: Uint8Array;
}

/** What the log reads of the trail it logs. */
export interface LoggedTrail {
  /** The exact stored bytes of the record `locator` names; undefined when it is gone. */
  raw(locator: string): Buffer | undefined;
  /** Every record the trail stores, with its locator: for the export's check that none is missing from the log. */
  stored(): Iterable<{ readonly locator: string; readonly raw: Buffer }>;
  /** The locator of the decision of `executionId`; undefined when the trail has none. */
  decisionLocator(executionId: string): Promise<string | undefined>;
}

export class LmdbLogStorage implements RecordLogStorage {
  readonly #root: RootDatabase;
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
  /** Records whose write committed, oldest first, not yet appended. */
  readonly #committed: CommittedRecord[] = [];
  /** Records whose write's outcome is not known yet. */
  #awaiting = 0;
  #allSettled: (() => void) | null = null;
  /** A record left memory without entering the log (its write's outcome unknown, or retention): keep the mark at close. */
  #incomplete = false;

  /**
   * `instanceId`: the id to give the log when the data dir has none yet (SERVICE_INSTANCE_ID); null: a random UUID.
   * @throws Error when the data dir holds a record log of another format, or of another instance id than `instanceId`
   */
  constructor(root: RootDatabase, trail: LoggedTrail, instanceId: string | null = null) {
    this.#root = root;
    this.#trail = trail;
    this.#pending = root.openDB<Buffer, [number, string]>(RECORD_LOG_DATABASES.pending, { encoding: "binary" });
    this.#entries = root.openDB<Buffer, number>(RECORD_LOG_DATABASES.entries, { encoding: "binary" });
    this.#index = root.openDB<number, string>(RECORD_LOG_DATABASES.index, { encoding: "msgpack" });
    this.#nodes = root.openDB<Buffer, [number, number]>(RECORD_LOG_DATABASES.nodes, { encoding: "binary" });
    this.#checkpoints = root.openDB<SignedCheckpoint, number>(RECORD_LOG_DATABASES.checkpoints, { encoding: "json" });
    this.#prunes = root.openDB<Buffer, [number, number]>(RECORD_LOG_DATABASES.prunes, { encoding: "binary" });
    this.#meta = root.openDB<unknown, string>(RECORD_LOG_DATABASES.meta, { encoding: "json" });
    this.logId = this.#open(instanceId);
  }

  /**
   * Hot path, inside a replay transition's write that stores the record: nothing is written; once `written` says the
   * write committed, the record is held in memory for the next sequencing round (the header's PENDING RECORDS).
   */
  pendOnCommit(written: Promise<boolean | null>, locator: string, leaf: Uint8Array): void {
    this.#awaiting += 1;
    void written.then((committed) => {
      if (committed === true) this.#committed.push({ locator, leaf });
      else if (committed === null) this.#incomplete = true;
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
   * Inside a write transaction: logs that retention removed the records at `locators` (those sequenced; a pending one
   * is simply dropped, it never enters the log). The note is itself a record, pending like any other.
   */
  notePruned(locatorsRemoved: readonly string[], ms: number, ordinal: number): void {
    const positions: number[] = [];
    for (const locator of locatorsRemoved) {
      const position = this.#index.get(locator);
      if (position !== undefined) positions.push(position);
    }
    const removed = new Set(locatorsRemoved);
    for (const { key } of this.#pending.getRange({})) if (removed.has(key[1])) this.#pending.removeSync(key);
    const kept = this.#committed.filter((record) => !removed.has(record.locator));
    if (kept.length < this.#committed.length) {
      // Should this transaction fail, those records stay stored: the next open's adoption takes them in.
      this.#committed.splice(0, this.#committed.length, ...kept);
      this.#incomplete = true;
    }
    if (positions.length === 0) return;
    const bytes = encoded({ positions, reason: "retention" });
    this.#prunes.putSync([ms, ordinal], asStored(bytes));
    this.pendSync(ms, locators.prune(ms, ordinal), entryLeafHash({ kind: "prune", record: bytes }));
  }

  /** The stored bytes of a prune note. */
  readPrune(ms: number, ordinal: number): Buffer | undefined {
    return this.#prunes.getBinary([ms, ordinal]) ?? undefined;
  }

  /** Every prune note, with its locator. */
  *prunes(): Generator<{ readonly locator: string; readonly raw: Buffer }> {
    for (const { key, value } of this.#prunes.getRange({})) yield { locator: locators.prune(key[0], key[1]), raw: value };
  }

  /**
   * Appends the pending entries first, then the records held in memory; a record the log already holds (adopted at open
   * while another process held it in memory) is skipped. The records taken from memory leave it once the transaction
   * commits: should it fail, the next round takes them again.
   */
  sequence(logId: string, max: number): Promise<number> {
    this.#own(logId);
    let fromMemory = 0;
    const sequenced = this.#root.transaction(() => {
      const state = this.#state();
      const log = new LogAppender(state);
      let fromStore = 0;
      for (const { key, value } of this.#pending.getRange({ limit: max })) {
        this.#pending.removeSync(key);
        fromStore += 1;
        // Retention drops the pending entry of a record it removes (notePruned): a record gone otherwise is logged
        // anyway, and shows as removed without a prune note, which the export's verification reports.
        this.#append(log, key[1], value);
      }
      fromMemory = Math.min(this.#committed.length, max - fromStore);
      for (let i = 0; i < fromMemory; i++) this.#append(log, this.#committed[i]!.locator, this.#committed[i]!.leaf);
      if (log.size > state.size) {
        for (const node of log.nodes) this.#nodes.putSync([node.height, node.index], asStored(node.hash));
        const next = log.state();
        this.#meta.putSync("state", { size: next.size, frontier: next.frontier.map(toHex) } satisfies StoredState);
      }
      return fromStore + fromMemory;
    });
    return sequenced.then((count) => {
      this.#committed.splice(0, fromMemory);
      return count;
    });
  }

  /**
   * Inside the sequencing transaction: the record at `locator` enters the log at the next position, unless the log
   * holds it already. The index write is the check (noOverwrite): one B-tree write, not a read and a write.
   */
  #append(log: LogAppender, locator: string, leaf: Uint8Array): void {
    const position = log.size;
    // lmdb-js's README: putSync answers whether it wrote (its type declaration says void).
    const written = this.#index.putSync(locator, position, { noOverwrite: true }) as unknown as boolean;
    if (!written) return;
    log.append(leaf);
    const value = Buffer.allocUnsafe(HASH + Buffer.byteLength(locator));
    value.set(leaf);
    value.write(locator, HASH);
    this.#entries.putSync(position, asStored(value));
  }

  checkpoint(logId: string, key: SigningKey, now: Date): Promise<SignedCheckpoint | null> {
    this.#own(logId);
    return this.#root.transaction(() => {
      const checkpoint = nextCheckpoint(this.logId, this.#state(), this.#latest(), key, now);
      if (checkpoint === null) return null;
      this.#checkpoints.putSync(checkpoint.size, checkpoint);
      this.#meta.putSync("latest", { size: checkpoint.size, hash: checkpointHash(checkpoint) } satisfies LatestCheckpoint);
      return checkpoint;
    });
  }

  async stale(): Promise<string[]> {
    return [];
  }

  async logIds(): Promise<string[]> {
    return [this.logId];
  }

  async counts(logId: string): Promise<LogCounts | null> {
    if (logId !== this.logId) return null;
    return { size: this.#state().size, pending: this.#pending.getKeysCount() + this.#committed.length + this.#awaiting, latest: this.#latest() };
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
      if (hash === undefined) throw new Error(`the record log has no root of the subtree of height ${s.height} at ${s.index}: its store is damaged`);
      return hash;
    });
  }

  async decisionEntry(executionId: string): Promise<{ readonly logId: string; readonly position: number } | null> {
    const locator = await this.#trail.decisionLocator(executionId);
    const position = locator === undefined ? undefined : this.#index.get(locator);
    return position === undefined ? null : { logId: this.logId, position };
  }

  async *entries(logId: string, from: number, to: number): AsyncGenerator<StoredEntry> {
    this.#own(logId);
    for (const { key: position, value } of this.#entries.getRange({ start: from, end: to })) {
      const locator = value.subarray(HASH).toString("utf8");
      const kind = LOCATOR_KIND[locator[0]!];
      if (kind === undefined || !isLogEntryKind(kind)) throw new Error(`the record log's entry ${position} names no record (\`${locator}\`): its store is damaged`);
      const raw = this.#trail.raw(locator);
      yield { position, kind, leaf: value.subarray(0, HASH), record: raw === undefined ? null : raw.toString("utf8") };
    }
  }

  async *unlogged(): AsyncGenerator<UnloggedRecord> {
    const pending = new Set([...Array.from(this.#pending.getKeys({}), (key) => key[1]), ...this.#committed.map((record) => record.locator)]);
    for (const { locator, raw } of this.#trail.stored()) {
      if (this.#index.get(locator) === undefined && !pending.has(locator)) yield { kind: LOCATOR_KIND[locator[0]!]! as LogEntryKind, record: raw.toString("utf8") };
    }
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
        throw new Error("the audit record log in this data dir was written by a development version of writ whose leaves are hashed otherwise: remove its `audit-log-*` databases, or run with SERVICE_AUDIT_LOG=off");
      }
      if (format !== undefined && format !== FORMAT && format !== FORMAT_WITHOUT_MARKS) {
        throw new Error(`the audit record log in this data dir has format ${String(format)}, not ${FORMAT}: run the writ release that wrote it`);
      }
      if (format !== FORMAT) this.#meta.putSync("format", FORMAT);
      this.#meta.putSync(this.#mark, ownMark());
      if (typeof known === "string") {
        if (configured !== null && configured !== known) {
          throw new Error(`SERVICE_INSTANCE_ID is \`${configured}\`, but this data dir's audit record log is \`${known}\`: the id of a data dir's log never changes (unset SERVICE_INSTANCE_ID, or set it to \`${known}\`)`);
        }
        return known;
      }
      const made = configured ?? randomUUID();
      this.#meta.putSync("logId", made);
      return made;
    });
  }

  /**
   * Takes every stored record that the log does not hold into the pending set, unless the log is known to hold them
   * all (the `complete` mark): the trail's records written while the log was off (a trail older than the log, or run
   * with SERVICE_AUDIT_LOG=off) enter the log at its next open, ahead of newer ones (key [0, locator]). In transactions
   * of ADOPT_CHUNK records. Answers how many it took.
   */
  adoptUnlogged(): number {
    const crashed = this.#crashedMarks();
    if (this.#meta.get("complete") === true && crashed.length === 0) return 0;
    const pending = new Set(Array.from(this.#pending.getKeys({}), (key) => key[1]));
    let adopted = 0;
    let chunk: { locator: string; raw: Buffer }[] = [];
    const flush = () => {
      this.#root.transactionSync(() => {
        for (const { locator, raw } of chunk) this.pendSync(0, locator, entryLeafHash({ kind: LOCATOR_KIND[locator[0]!]!, record: raw }));
      });
      adopted += chunk.length;
      chunk = [];
    };
    for (const stored of [...this.#trail.stored(), ...this.prunes()]) {
      if (this.#index.get(stored.locator) !== undefined || pending.has(stored.locator)) continue;
      chunk.push(stored);
      if (chunk.length === ADOPT_CHUNK) flush();
    }
    if (chunk.length > 0) flush();
    this.#root.transactionSync(() => {
      this.#meta.putSync("complete", true);
      for (const mark of crashed) this.#meta.removeSync(mark);
    });
    return adopted;
  }

  /** The open marks of processes gone without closing (the header's INVARIANT; open-marks.ts). */
  #crashedMarks(): string[] {
    const crashed: string[] = [];
    for (const { key, value } of this.#meta.getRange({ start: MARK_PREFIX, end: `${MARK_PREFIX}\uffff` })) {
      if (key !== this.#mark && markIsStale(value as OpenMark)) crashed.push(key);
    }
    return crashed;
  }

  /**
   * Appends what is held in memory once every write under way has its outcome, then removes this process's open mark,
   * unless a record left memory without entering the log (then the next open adopts it). Before the environment
   * closes; a failure leaves the mark, never loses a record.
   */
  async close(): Promise<void> {
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
    while (this.#committed.length > 0) await this.sequence(this.logId, this.#committed.length);
    if (!this.#incomplete) await this.#root.transaction(() => this.#meta.removeSync(this.#mark));
  }

  /** The log stops being complete: records are about to be written without it (SERVICE_AUDIT_LOG=off). */
  static markIncomplete(root: RootDatabase): void {
    const meta = root.openDB<unknown, string>(RECORD_LOG_DATABASES.meta, { encoding: "json" });
    if (meta.get("complete") !== undefined) root.transactionSync(() => meta.removeSync("complete"));
  }
}
