/**
 * The tamper-evident record log as the `/audit/log` routes answer it (docs/audit.md, "Serving the log"), built once over
 * any store's `RecordLogStorage`: the state of a log, its checkpoints, inclusion proofs of decisions, consistency
 * proofs, and the export. Proofs are built from the kept subtree roots and a few leaves (log-tree.ts `rangeRoot`), so
 * their cost does not grow with the log.
 */
import { consistencyProofRanges, inclusionProofRanges, toHex, type ExportLine, type LeafRange, type SignedCheckpoint } from "@writ/runtime";
import type { AuditLogStatus, ConsistencyProofJson, InclusionProofJson } from "@writ/wire";
import { SLICE_MS, Slicer } from "../slices.js";
import type { Checkpointer } from "./checkpointer.js";
import type { RecordLogStorage } from "./log-storage.js";
import { rangeRoot, type TreeReader } from "./log-tree.js";

export type { ExportLine };

export class RecordLog {
  readonly #storage: RecordLogStorage;
  readonly #checkpointer: Checkpointer | null;

  /** `checkpointer`: null when nothing signs checkpoints here (the log is then read only). */
  constructor(storage: RecordLogStorage, checkpointer: Checkpointer | null) {
    this.#storage = storage;
    this.#checkpointer = checkpointer;
  }

  /** The sidecar instance's log id: `instanceId` in `GET /health`. */
  get logId(): string {
    return this.#storage.logId;
  }

  /** The logs the store holds: this sidecar's, and on a fleet's database every other sidecar's. */
  logIds(): Promise<string[]> {
    return this.#storage.logIds();
  }

  /** Null when the store holds no log `logId`. */
  async status(logId: string = this.logId): Promise<AuditLogStatus | null> {
    const counts = await this.#storage.counts(logId);
    return counts === null ? null : { logId, ...counts };
  }

  checkpoints(logId: string, from: number, limit: number): Promise<SignedCheckpoint[]> {
    return this.#storage.checkpoints(logId, from, limit);
  }

  checkpointAt(logId: string, size: number): Promise<SignedCheckpoint | null> {
    return this.#storage.checkpointAt(logId, size);
  }

  /**
   * The inclusion proof of the decision of `executionId` in the log that holds it, against that log's checkpoint at
   * `size` (default: its latest); null when no log holds it yet or the checkpoint does not cover it.
   */
  async decisionInclusionProof(executionId: string, size?: number): Promise<InclusionProofJson | null> {
    if (!executionId.isWellFormed()) return null;
    const entry = await this.#storage.decisionEntry(executionId);
    if (entry === null) return null;
    const checkpoint =
      size === undefined
        ? ((await this.#storage.counts(entry.logId))?.latest ?? null)
        : await this.#storage.checkpointAt(entry.logId, size);
    if (checkpoint === null || entry.position >= checkpoint.size) return null;
    const tree = this.#tree(entry.logId);
    const [leaf] = await tree.leaves({ start: entry.position, end: entry.position + 1 });
    return {
      logId: entry.logId,
      leafIndex: entry.position,
      treeSize: checkpoint.size,
      leafHash: toHex(leaf!),
      auditPath: await this.#hashes(tree, inclusionProofRanges(entry.position, checkpoint.size)),
      checkpoint,
    };
  }

  /** The consistency proof between the checkpoints of `logId` at sizes `from` <= `to`; null when either is not a checkpoint. */
  async consistencyProof(logId: string, from: number, to: number): Promise<ConsistencyProofJson | null> {
    if (from > to) return null;
    const [older, newer] = await Promise.all([this.#storage.checkpointAt(logId, from), this.#storage.checkpointAt(logId, to)]);
    if (older === null || newer === null) return null;
    return { logId, from: older, to: newer, proof: await this.#hashes(this.#tree(logId), consistencyProofRanges(from, to)) };
  }

  /** Appends everything pending to this sidecar's log and signs a checkpoint when it grew (null: nothing new, or no signing key). */
  async checkpointNow(): Promise<SignedCheckpoint | null> {
    return (await this.#checkpointer?.now()) ?? null;
  }

  /**
   * The export of `logId` (runtime `ExportLine`, docs/audit.md "Export") from its checkpoint at `from` (0: the start of
   * the log) to its latest checkpoint, read lazily: each entry with the record's exact stored text (the leaf alone when
   * the record is gone), each checkpoint after the entry that completes it, then every stored record no log holds. Every
   * read from the store's export session (log-storage.ts `exportSession`), given back when the export ends, fails or is
   * abandoned (`return()`).
   * @throws RangeError when `from` is not 0 or the size of a checkpoint of the log
   */
  async *export(logId: string, from = 0): AsyncGenerator<ExportLine> {
    // However long the log, the event loop is served between slices of the export (slices.ts), on every store, and
    // while requests wait, the export takes at most EXPORT_SHARE of it: a streaming export does not saturate the core.
    const slicer = new Slicer(SLICE_MS, EXPORT_SHARE);
    const session = (await this.#storage.exportSession?.()) ?? { reads: this.#storage, end: () => undefined };
    try {
      const reads = session.reads;
      const start = from === 0 ? null : await reads.checkpointAt(logId, from);
      if (from !== 0 && start === null) throw new RangeError(`no checkpoint at size ${from}`);
      const latest = (await reads.counts(logId))?.latest ?? null;
      yield { type: "start", logId, size: from, frontier: start?.frontier ?? [], checkpoint: start };
      if (latest !== null && latest.size > from) {
        let checkpoints = await reads.checkpoints(logId, from + 1, CHECKPOINT_PAGE);
        for await (const entry of reads.entries(logId, from, latest.size)) {
          const leaf = toHex(entry.leaf);
          yield entry.record === null
            ? { type: "entry", position: entry.position, kind: entry.kind, leaf, removed: true }
            : {
                type: "entry",
                position: entry.position,
                kind: entry.kind,
                leaf,
                record: entry.record,
                ...(entry.indexed === undefined ? {} : { indexed: entry.indexed }),
              };
          while (checkpoints[0] !== undefined && checkpoints[0].size === entry.position + 1) {
            const checkpoint = checkpoints.shift()!;
            yield { type: "checkpoint", checkpoint };
            if (checkpoints.length === 0 && checkpoint.size < latest.size)
              checkpoints = await reads.checkpoints(logId, checkpoint.size + 1, CHECKPOINT_PAGE);
          }
          await slicer.pause();
        }
      }
      for await (const record of reads.unlogged()) {
        yield { type: "unlogged", kind: record.kind, record: record.record };
        await slicer.pause();
      }
    } finally {
      session.end();
    }
  }

  #tree(logId: string): TreeReader {
    return { leaves: (range) => this.#storage.leaves(logId, range), nodes: (subtrees) => this.#storage.nodes(logId, subtrees) };
  }

  async #hashes(tree: TreeReader, ranges: readonly LeafRange[]): Promise<string[]> {
    const roots: string[] = [];
    for (const range of ranges) roots.push(toHex(await rangeRoot(tree, range)));
    return roots;
  }
}

/** The largest share of the event loop's time an export takes while requests wait for it (slices.ts `Slicer`). */
export const EXPORT_SHARE = 0.25;

/** Checkpoints read at a time while exporting. */
const CHECKPOINT_PAGE = 1_000;
