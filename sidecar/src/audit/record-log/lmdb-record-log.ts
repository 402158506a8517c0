/**
 * The tamper-evident record log of the LMDB audit trail (issue 15; docs/audit.md, "Tamper evidence"): every audit
 * record gets a position in one append-only log per sidecar instance, its leaf hash, and is covered by signed
 * checkpoints (runtime `audit-log/`), so an export proves what was logged and that nothing logged was changed or
 * removed.
 *
 * LAYOUT (named databases beside the trail's):
 * - `audit-log-pending`: key [ms, locator], value kind: records written and not yet sequenced. The hot path adds one
 *   small entry here in the write that stores the record (no hashing, no read).
 * - `audit-log-entries`: key position, value {kind, locator, leaf}: the log, in sequence order.
 * - `audit-log-index`: key locator, value position: where a record is in the log.
 * - `audit-log-checkpoints`: key size, value the signed checkpoint at that size.
 * - `audit-log-prunes`: key [ms, ordinal], value {positions, reason}: what retention removed, itself logged.
 * - `audit-log-meta`: `logId` (the instance id, made once), `state` {size, frontier}, `latest` (the last checkpoint's
 *   hash and size).
 *
 * SEQUENCING (background, `checkpoint()`): pending entries are taken in key order, each record's stored bytes read
 * and hashed into its leaf (runtime `entryLeafInput`), appended at the next position, and the pending entry removed,
 * in one write transaction per batch, so a crash leaves each record either pending or sequenced, never both, never
 * lost. A record removed before it was sequenced (retention) never enters the log.
 * INVARIANT (the log only grows): entries, the index and checkpoints are written once and never changed; `state`
 * and `latest` only move forward, in the transaction that writes what they describe.
 */
import { randomUUID } from "node:crypto";
import {
  MerkleFrontier,
  checkpointHash,
  consistencyProof,
  createCheckpoint,
  entryLeafInput,
  inclusionProof,
  hashFromHex,
  leafHash,
  toHex,
  type SignedCheckpoint,
  type SigningKey,
} from "@writ/runtime";
import type { Database, RootDatabase } from "lmdb";
import type { ConsistencyProofJson, InclusionProofJson } from "@writ/wire";
import type { ExportLine } from "@writ/runtime";
import { LOCATOR_KIND, type LogKind } from "./locator.js";

export const RECORD_LOG_DATABASES = {
  pending: "audit-log-pending",
  entries: "audit-log-entries",
  index: "audit-log-index",
  checkpoints: "audit-log-checkpoints",
  prunes: "audit-log-prunes",
  meta: "audit-log-meta",
} as const;

/** Pending records sequenced per write transaction (fewer, larger transactions cost the hot path less than many small ones: docs/benchmarks.md). */
const SEQUENCE_BATCH = 2_000;

interface LogEntryRow {
  readonly kind: LogKind;
  readonly locator: string;
  /** Hex SHA-256 leaf hash. */
  readonly leaf: string;
}

interface LogState {
  readonly size: number;
  /** Hex frontier hashes at `size`. */
  readonly frontier: readonly string[];
}

interface LatestCheckpoint {
  readonly size: number;
  readonly hash: string;
}


export interface RecordLogStatus {
  readonly logId: string;
  /** Records sequenced into the log. */
  readonly size: number;
  /** Records written and not sequenced yet. */
  readonly pending: number;
  readonly latest: SignedCheckpoint | null;
}

/** What the log reads of the trail it logs. */
export interface LoggedTrail {
  /** The exact stored bytes of the record `locator` names; undefined when it is gone. */
  raw(locator: string): Buffer | undefined;
  /** Every record the trail stores, with its locator: for the export's check that none is missing from the log. */
  stored(): Iterable<{ readonly locator: string; readonly raw: Buffer }>;
}


export class LmdbRecordLog {
  readonly #root: RootDatabase;
  readonly #pending: Database<LogKind, [number, string]>;
  readonly #entries: Database<LogEntryRow, number>;
  readonly #index: Database<number, string>;
  readonly #checkpoints: Database<SignedCheckpoint, number>;
  readonly #prunes: Database<{ positions: number[]; reason: string }, [number, number]>;
  readonly #meta: Database<unknown, string>;
  readonly #trail: LoggedTrail;
  readonly logId: string;

  constructor(root: RootDatabase, trail: LoggedTrail) {
    this.#root = root;
    this.#trail = trail;
    this.#pending = root.openDB<LogKind, [number, string]>(RECORD_LOG_DATABASES.pending, { encoding: "json" });
    this.#entries = root.openDB<LogEntryRow, number>(RECORD_LOG_DATABASES.entries, { encoding: "json" });
    this.#index = root.openDB<number, string>(RECORD_LOG_DATABASES.index, { encoding: "json" });
    this.#checkpoints = root.openDB<SignedCheckpoint, number>(RECORD_LOG_DATABASES.checkpoints, { encoding: "json" });
    this.#prunes = root.openDB<{ positions: number[]; reason: string }, [number, number]>(RECORD_LOG_DATABASES.prunes, { encoding: "json" });
    this.#meta = root.openDB<unknown, string>(RECORD_LOG_DATABASES.meta, { encoding: "json" });
    this.logId = this.#instanceId();
  }

  /** Hot path, inside the write that stores the record: queued with the environment's asynchronous put. */
  pend(ms: number, locator: string): Promise<boolean> {
    return this.#pending.put([ms, locator], LOCATOR_KIND[locator[0]!]!);
  }

  /** The same, inside a write transaction callback. */
  pendSync(ms: number, locator: string): void {
    this.#pending.putSync([ms, locator], LOCATOR_KIND[locator[0]!]!);
  }

  /**
   * Inside a write transaction: logs that retention removed the records at `locators` (those sequenced; a pending one
   * is simply dropped, it never enters the log). The note is itself a record, pending like any other.
   */
  notePruned(locators: readonly string[], ms: number, ordinal: number): void {
    const positions: number[] = [];
    for (const locator of locators) {
      const position = this.#index.get(locator);
      if (position !== undefined) positions.push(position);
    }
    const removed = new Set(locators);
    for (const { key } of this.#pending.getRange({})) if (removed.has(key[1])) this.#pending.removeSync(key);
    if (positions.length === 0) return;
    this.#prunes.putSync([ms, ordinal], { positions, reason: "retention" });
    this.#pending.putSync([ms, `p:${ms}:${ordinal}`], "prune");
  }

  /** The stored bytes of a prune note. */
  readPrune(ms: number, ordinal: number): Buffer | undefined {
    return this.#prunes.getBinary([ms, ordinal]) ?? undefined;
  }

  status(): RecordLogStatus {
    const state = this.#state();
    return { logId: this.logId, size: state.size, pending: this.#pending.getKeysCount(), latest: this.latest() };
  }

  latest(): SignedCheckpoint | null {
    const latest = this.#meta.get("latest") as LatestCheckpoint | undefined;
    return latest === undefined ? null : (this.#checkpoints.get(latest.size) ?? null);
  }

  /** The checkpoints with `size` at least `from`, oldest first, at most `limit`. */
  checkpoints(from: number, limit: number): SignedCheckpoint[] {
    return Array.from(this.#checkpoints.getRange({ start: from, limit }), ({ value }) => value);
  }

  checkpointAt(size: number): SignedCheckpoint | null {
    return this.#checkpoints.get(size) ?? null;
  }

  /**
   * Sequences every pending record, then signs a checkpoint of the log when it grew since the last one. Returns the
   * checkpoint made, or null when nothing was pending. Runs in the background (the checkpointer), never on a request.
   */
  async checkpoint(key: SigningKey, now: Date = new Date()): Promise<SignedCheckpoint | null> {
    while (await this.#root.transaction(() => this.#sequenceBatch())) {
      // Each batch is its own transaction: a long backlog never holds the write lock for long.
    }
    return this.#root.transaction(() => {
      const state = this.#state();
      const previous = this.latest();
      if (state.size === 0 || state.size === previous?.size) return null;
      const frontier = MerkleFrontier.from(state.size, state.frontier.map(hashFromHex));
      const checkpoint = createCheckpoint({ logId: this.logId, frontier, timestamp: now, previous }, key);
      this.#checkpoints.putSync(state.size, checkpoint);
      this.#meta.putSync("latest", { size: state.size, hash: checkpointHash(checkpoint) } satisfies LatestCheckpoint);
      return checkpoint;
    });
  }

  /** The inclusion proof of the record `locator` against the checkpoint at `size` (default: the latest); null when it is not covered. */
  inclusionProof(locator: string, size?: number): InclusionProofJson | null {
    const checkpoint = size === undefined ? this.latest() : this.checkpointAt(size);
    const position = this.#index.get(locator);
    if (checkpoint === null || position === undefined || position >= checkpoint.size) return null;
    const leaves = this.#leaves(checkpoint.size);
    return {
      logId: this.logId,
      leafIndex: position,
      treeSize: checkpoint.size,
      leafHash: toHex(leaves[position]!),
      auditPath: inclusionProof(leaves, position).map(toHex),
      checkpoint,
    };
  }

  /** The consistency proof between the checkpoints at sizes `from` and `to`; null when either is not a checkpoint. */
  consistencyProof(from: number, to: number): ConsistencyProofJson | null {
    const older = this.checkpointAt(from);
    const newer = this.checkpointAt(to);
    if (older === null || newer === null || from > to) return null;
    return { logId: this.logId, from: older, to: newer, proof: consistencyProof(this.#leaves(to), from, to).map(toHex) };
  }

  /**
   * The export (runtime `ExportLine`, docs/audit.md "Export") from the checkpoint at `from` (0: the start of the log)
   * to the latest checkpoint, one line at a time, read lazily: each record's exact stored text with its logged leaf
   * (the leaf alone when the record is gone), each checkpoint after the entry that completes it, then every stored
   * record the log does not hold (neither sequenced nor pending).
   * @throws RangeError when `from` is not 0 or the size of a checkpoint
   */
  *export(from = 0): Generator<ExportLine> {
    const latest = this.latest();
    const start = from === 0 ? null : this.checkpointAt(from);
    if (from !== 0 && start === null) throw new RangeError(`no checkpoint at size ${from}`);
    yield { type: "start", logId: this.logId, size: from, frontier: start?.frontier ?? [], checkpoint: start };
    if (latest === null) return;
    const checkpoints = this.#checkpoints.getRange({ start: from + 1, end: latest.size + 1 })[Symbol.iterator]();
    let next = checkpoints.next();
    for (const { key: position, value: entry } of this.#entries.getRange({ start: from, end: latest.size })) {
      const raw = this.#trail.raw(entry.locator);
      yield raw === undefined
        ? { type: "entry", position, kind: entry.kind, leaf: entry.leaf, removed: true }
        : { type: "entry", position, kind: entry.kind, leaf: entry.leaf, record: raw.toString("utf8") };
      while (!next.done && next.value.key === position + 1) {
        yield { type: "checkpoint", checkpoint: next.value.value };
        next = checkpoints.next();
      }
    }
    const pending = new Set(Array.from(this.#pending.getKeys({}), (key) => key[1]));
    for (const { locator, raw } of this.#trail.stored()) {
      if (this.#index.get(locator) === undefined && !pending.has(locator)) yield { type: "unlogged", kind: LOCATOR_KIND[locator[0]!]!, record: raw.toString("utf8") };
    }
  }

  /** Inside a write transaction: sequences up to SEQUENCE_BATCH pending records; true when more may be pending. */
  #sequenceBatch(): boolean {
    const state = this.#state();
    const frontier = MerkleFrontier.from(state.size, state.frontier.map(hashFromHex));
    let taken = 0;
    for (const { key, value: kind } of this.#pending.getRange({ limit: SEQUENCE_BATCH })) {
      taken += 1;
      const locator = key[1];
      this.#pending.removeSync(key);
      const raw = this.#trail.raw(locator);
      if (raw === undefined) continue;
      const position = frontier.size;
      const leaf = leafHash(entryLeafInput({ kind, position, record: raw.toString("utf8") }));
      this.#entries.putSync(position, { kind, locator, leaf: toHex(leaf) });
      this.#index.putSync(locator, position);
      frontier.append(leaf);
    }
    if (frontier.size !== state.size) this.#meta.putSync("state", { size: frontier.size, frontier: frontier.hashes().map(toHex) } satisfies LogState);
    return taken === SEQUENCE_BATCH;
  }

  #state(): LogState {
    return (this.#meta.get("state") as LogState | undefined) ?? { size: 0, frontier: [] };
  }

  /** The leaf hashes of positions [0, size). */
  #leaves(size: number): Uint8Array[] {
    return Array.from(this.#entries.getRange({ start: 0, end: size }), ({ value }) => hashFromHex(value.leaf));
  }

  /** The instance id: made once, at the first open of the data dir, and kept. */
  #instanceId(): string {
    return this.#root.transactionSync(() => {
      const known = this.#meta.get("logId");
      if (typeof known === "string") return known;
      const made = randomUUID();
      this.#meta.putSync("logId", made);
      return made;
    });
  }
}
