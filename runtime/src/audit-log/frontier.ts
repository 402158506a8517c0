/**
 * The frontier of a log: what it takes to extend a Merkle tree (merkle.ts) and compute its root without its leaves
 * (docs/audit.md, "The frontier"): the roots of the perfect subtrees that cover the tree left to right, one for each
 * bit set in `size`, largest first. Appending merges equal trailing subtrees, as binary addition carries; the root
 * folds the frontier from the right, which is RFC 9162's MTH because every left subtree of that chain holds the largest
 * power of two of its leaves.
 *
 * INVARIANT (the frontier describes the tree): `hashes().length` is the number of bits set in `size`, and `root()`
 * equals `rootOf` of the first `size` leaf hashes. A checkpoint carries its frontier, so a checkpointer or an offline
 * verifier resumes from it (`MerkleFrontier.from`) with O(log n) memory.
 */
import { isHash, nodeHash, rootOfSubtrees, type PerfectSubtree } from "./merkle.js";

/** A perfect subtree an append completed, with its root. */
export interface CompletedSubtree extends PerfectSubtree {
  readonly hash: Uint8Array;
}

const NONE: readonly CompletedSubtree[] = Object.freeze([]);

/** The number of bits set in a non-negative safe integer (division, not 32-bit bit operators). */
export function popcount(n: number): number {
  let count = 0;
  for (let rest = n; rest > 0; rest = Math.floor(rest / 2)) count += rest % 2;
  return count;
}

export class MerkleFrontier {
  #size: number;
  /** The subtree roots, left (largest) to right (smallest). */
  readonly #hashes: Uint8Array[];

  private constructor(size: number, hashes: Uint8Array[]) {
    this.#size = size;
    this.#hashes = hashes;
  }

  /** The frontier of the empty tree. */
  static empty(): MerkleFrontier {
    return new MerkleFrontier(0, []);
  }

  /**
   * The frontier of a tree of `size` leaves from its subtree roots, left to right (as {@link hashes} gives them, or a
   * checkpoint's `frontier`). The hashes are copied.
   * @throws RangeError when `size` is not a non-negative safe integer, the number of hashes is not the number of bits
   *   set in `size`, or a hash is not 32 bytes
   */
  static from(size: number, hashes: readonly Uint8Array[]): MerkleFrontier {
    if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) {
      throw new RangeError(`frontier size \`${String(size)}\` is not a non-negative safe integer`);
    }
    const expected = popcount(size);
    if (hashes.length !== expected) {
      throw new RangeError(`a frontier of size ${size} has ${expected} hashes (one per bit set in the size), not ${hashes.length}`);
    }
    hashes.forEach((h, i) => {
      if (!isHash(h)) throw new RangeError(`frontier hash ${i} is not a 32-byte hash`);
    });
    return new MerkleFrontier(
      size,
      hashes.map((h) => new Uint8Array(h)),
    );
  }

  /** The number of leaves. */
  get size(): number {
    return this.#size;
  }

  /**
   * Appends the leaf with hash `leafHash` (merkle.ts `leafHash` of its leaf input). O(log n) hashing at worst,
   * amortized one node hash per leaf. Answers the perfect subtrees of height `reportFrom` or more that this leaf
   * completed (the subtrees ending at the new size; heights 1 and up), lowest first, with their roots: a store keeps them to build
   * proofs without reading every leaf. None by default.
   * @throws RangeError when `leafHash` is not 32 bytes, or the tree already has Number.MAX_SAFE_INTEGER leaves
   */
  append(leafHash: Uint8Array, reportFrom = Number.POSITIVE_INFINITY): readonly CompletedSubtree[] {
    if (!isHash(leafHash)) throw new RangeError("leaf hash is not a 32-byte hash");
    if (this.#size >= Number.MAX_SAFE_INTEGER) throw new RangeError("the log has the most leaves a frontier can count");
    let carry: Uint8Array = new Uint8Array(leafHash);
    let completed: CompletedSubtree[] | null = null;
    const size = this.#size + 1;
    // Each trailing 1 bit of the size is a subtree as large as the one being carried: merge them.
    let height = 0;
    let width = 1;
    for (let rest = this.#size; rest % 2 === 1; rest = Math.floor(rest / 2)) {
      carry = nodeHash(this.#hashes.pop()!, carry);
      height += 1;
      width *= 2;
      if (height >= reportFrom) (completed ??= []).push({ height, index: size / width - 1, hash: carry });
    }
    this.#hashes.push(carry);
    this.#size = size;
    return completed ?? NONE;
  }

  /** The tree's root (RFC 9162 MTH); EMPTY_ROOT for the empty tree. */
  root(): Uint8Array {
    return rootOfSubtrees(this.#hashes);
  }

  /** The subtree roots, left to right: copies. */
  hashes(): Uint8Array[] {
    return this.#hashes.map((h) => new Uint8Array(h));
  }
}
