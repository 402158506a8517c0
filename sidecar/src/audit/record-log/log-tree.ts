/**
 * The arithmetic of a record log that every store shares (docs/audit.md, "Serving the log"): appending pending records
 * to the tree, the next checkpoint, and the Merkle hash of any range a proof needs, built from what a store keeps (the
 * leaves, and the roots of the perfect subtrees of NODE_HEIGHT leaves or more) instead of every leaf of the log.
 *
 * INVARIANT (a store keeps every perfect subtree root of height NODE_HEIGHT and up): `appendToLog` answers them as the
 * appends complete them, and each store writes them in the same transaction as the entries they cover. A range's hash
 * then reads at most 2 * 2^NODE_HEIGHT leaves per subtree it spans below that height, whatever the size of the log.
 */
import {
  MerkleFrontier,
  signCheckpoint,
  perfectSubtrees,
  rootOf,
  rootOfSubtrees,
  type CompletedSubtree,
  type LeafRange,
  type LogEntryKind,
  type PerfectSubtree,
  type SignedCheckpoint,
} from "@writ/runtime";
import type { CheckpointSigner } from "./log-storage.js";

/** Subtrees of 2^NODE_HEIGHT leaves and more are kept: about one stored root per 128 entries. */
export const NODE_HEIGHT = 8;

/** The log's size and frontier: all it takes to append and to compute the root. */
export interface LogState {
  readonly size: number;
  readonly frontier: readonly Uint8Array[];
}

/** A record written and not yet in the log: its kind, where the store keeps it, and its leaf hash. */
export interface PendingRecord {
  readonly kind: LogEntryKind;
  /** The store's reference to the record (an LMDB locator, a PostgreSQL row key). */
  readonly ref: string;
  readonly leaf: Uint8Array;
}

export interface SequencedEntry extends PendingRecord {
  readonly position: number;
}

export interface Appended {
  readonly entries: readonly SequencedEntry[];
  readonly nodes: readonly CompletedSubtree[];
  readonly state: LogState;
}

/**
 * The log at `state`, appended to one leaf at a time, for a store that decides record by record whether it enters (the
 * LMDB store skips a record its index already holds): the subtree roots to keep are collected as the appends complete them.
 */
export class LogAppender {
  readonly #frontier: MerkleFrontier;
  readonly nodes: CompletedSubtree[] = [];

  constructor(state: LogState) {
    this.#frontier = MerkleFrontier.from(state.size, state.frontier);
  }

  /** The next leaf's position. */
  get size(): number {
    return this.#frontier.size;
  }

  append(leaf: Uint8Array): void {
    for (const node of this.#frontier.append(leaf, NODE_HEIGHT)) this.nodes.push(node);
  }

  state(): LogState {
    return { size: this.#frontier.size, frontier: this.#frontier.hashes() };
  }
}

/** `pending`, in order, appended to the log at `state`: the entries with their positions, the subtree roots to keep, the new state. */
export function appendToLog(state: LogState, pending: readonly PendingRecord[]): Appended {
  const log = new LogAppender(state);
  const entries = pending.map((record): SequencedEntry => {
    const position = log.size;
    log.append(record.leaf);
    return { kind: record.kind, ref: record.ref, leaf: record.leaf, position };
  });
  return { entries, nodes: log.nodes, state: log.state() };
}

/** The checkpoint to sign for the log at `state`, or null when the latest one already covers it (or the log is empty). */
export async function nextCheckpoint(
  logId: string,
  state: LogState,
  latest: SignedCheckpoint | null,
  signer: CheckpointSigner,
  now: Date,
): Promise<SignedCheckpoint | null> {
  if (state.size === 0 || state.size === latest?.size) return null;
  const fields = { logId, frontier: MerkleFrontier.from(state.size, state.frontier), timestamp: now, previous: latest };
  return signCheckpoint(fields, signer.key, signer.engine);
}

/** What a store reads of one log to hash a range: its leaves and the subtree roots it keeps. */
export interface TreeReader {
  /** The leaf hashes of positions [start, end). */
  leaves(range: LeafRange): Promise<Uint8Array[]>;
  /** The kept roots of `subtrees` (each of height NODE_HEIGHT or more), in order. */
  nodes(subtrees: readonly PerfectSubtree[]): Promise<Uint8Array[]>;
}

/** The Merkle tree hash of `range` (a range of a proof: runtime `LeafRange`), from the kept subtree roots and the leaves below them. */
export async function rangeRoot(tree: TreeReader, range: LeafRange): Promise<Uint8Array> {
  const subtrees = perfectSubtrees(range);
  const kept = subtrees.filter((s) => s.height >= NODE_HEIGHT);
  const keptRoots = kept.length === 0 ? [] : await tree.nodes(kept);
  let next = 0;
  const roots: Uint8Array[] = [];
  for (const subtree of subtrees) {
    if (subtree.height >= NODE_HEIGHT) {
      roots.push(keptRoots[next++]!);
      continue;
    }
    const width = 2 ** subtree.height;
    roots.push(rootOf(await tree.leaves({ start: subtree.index * width, end: (subtree.index + 1) * width })));
  }
  return rootOfSubtrees(roots);
}
