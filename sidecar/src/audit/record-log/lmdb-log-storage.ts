/**
 * The record log of the LMDB audit trail (log-storage.ts; docs/audit.md, "Serving the log"): one log, this data dir's
 * instance, in named databases beside the trail's.
 *
 * LAYOUT (format 2):
 * - `audit-log-pending`: key [ms, locator], value the record's leaf hash (32 bytes): records written, not yet in the
 *   log. The write that stores a record adds its entry here, with the leaf hashed from the bytes it writes (runtime
 *   `entryLeafHash`): no read, no serialization beyond the record's own.
 * - `audit-log-entries`: key position, value leaf hash (32 bytes) || UTF-8 locator: the log, in order.
 * - `audit-log-index`: key locator, value position: where a record is in the log.
 * - `audit-log-nodes`: key [height, index], value the root (32 bytes) of a perfect subtree of height NODE_HEIGHT or more.
 * - `audit-log-checkpoints`: key size, value the signed checkpoint at that size.
 * - `audit-log-prunes`: key [ms, ordinal], value the prune note's JSON bytes: what retention removed, itself logged.
 * - `audit-log-meta`: `logId` (the instance id, made once), `format`, `state` {size, frontier}, `latest` (the last
 *   checkpoint's size and hash), `complete` (every stored record is in the log or pending: absent once the trail was
 *   written without the log, until `adoptUnlogged` takes those records in).
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
import { appendToLog, nextCheckpoint, type LogState, type PendingRecord } from "./log-tree.js";
import type { LogCounts, RecordLogStorage, StoredEntry, UnloggedRecord } from "./log-storage.js";
import { LOCATOR_KIND, locators } from "./locator.js";

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
const FORMAT = 2;
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

  /** Hot path, inside the write that stores the record: its leaf, queued with the environment's asynchronous put. */
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

  sequence(logId: string, max: number): Promise<number> {
    this.#own(logId);
    return this.#root.transaction(() => {
      const pending: PendingRecord[] = [];
      for (const { key, value } of this.#pending.getRange({ limit: max })) {
        this.#pending.removeSync(key);
        // Retention drops the pending entry of a record it removes (notePruned): a record gone otherwise is logged
        // anyway, and shows as removed without a prune note, which the export's verification reports.
        const locator = key[1];
        pending.push({ kind: LOCATOR_KIND[locator[0]!]!, ref: locator, leaf: value });
      }
      if (pending.length === 0) return 0;
      const appended = appendToLog(this.#state(), pending);
      for (const entry of appended.entries) {
        this.#entries.putSync(entry.position, asStored(Buffer.concat([entry.leaf, Buffer.from(entry.ref)])));
        this.#index.putSync(entry.ref, entry.position);
      }
      for (const node of appended.nodes) this.#nodes.putSync([node.height, node.index], asStored(node.hash));
      this.#meta.putSync("state", { size: appended.state.size, frontier: appended.state.frontier.map(toHex) } satisfies StoredState);
      return pending.length;
    });
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
    return { size: this.#state().size, pending: this.#pending.getKeysCount(), latest: this.#latest() };
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
    const pending = new Set(Array.from(this.#pending.getKeys({}), (key) => key[1]));
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
      if (format !== undefined && format !== FORMAT) throw new Error(`the audit record log in this data dir has format ${String(format)}, not ${FORMAT}: run the writ release that wrote it`);
      if (format === undefined) this.#meta.putSync("format", FORMAT);
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
    if (this.#meta.get("complete") === true) return 0;
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
    this.#root.transactionSync(() => this.#meta.putSync("complete", true));
    return adopted;
  }

  /** The log stops being complete: records are about to be written without it (SERVICE_AUDIT_LOG=off). */
  static markIncomplete(root: RootDatabase): void {
    const meta = root.openDB<unknown, string>(RECORD_LOG_DATABASES.meta, { encoding: "json" });
    if (meta.get("complete") !== undefined) root.transactionSync(() => meta.removeSync("complete"));
  }
}
