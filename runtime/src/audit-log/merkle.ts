/**
 * The Merkle tree of the audit log: RFC 9162 (Certificate Transparency v2) section 2.1 with SHA-256, as docs/audit.md
 * writes it ("Leaf and node hashes", "The tree", "Inclusion proofs", "Consistency proofs"). The functions take leaf
 * hashes, not leaf inputs: a log stores or recomputes the hashes of its entries once, and builds every root and proof
 * from them.
 *
 * INVARIANT (domain separation): a leaf hash and a node hash never hash the same bytes (their first byte differs), so
 * an interior node can never be presented as a leaf, nor a leaf as a subtree (the second-preimage attack on plain
 * Merkle trees). Sizes and indices are numbers up to Number.MAX_SAFE_INTEGER, divided, never put through the 32-bit
 * bit operators.
 */
import { sha256 } from "../canonical/digest.js";

/** The length of every hash of the tree, in bytes. */
export const HASH_BYTES = 32;

/**
 * 0x01 || left || right, filled and hashed synchronously by `nodeHash`: one buffer, not one per node. Hashed one-shot
 * (canonical/digest.ts `sha256`): a Hash object costs more than hashing a node's 65 bytes (docs/benchmarks.md, "Audit
 * record log").
 */
const NODE_INPUT = new Uint8Array(1 + 2 * HASH_BYTES);
NODE_INPUT[0] = 0x01;

/** SHA-256 of nothing: the root of the empty tree. Kept private so that no caller can change it. */
const EMPTY = sha256(new Uint8Array(0));

/**
 * The root of the empty tree (RFC 9162: MTH({}) = SHA-256 of the empty string),
 * e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855. A copy: changing it changes nothing here.
 */
export const EMPTY_ROOT: Uint8Array = new Uint8Array(EMPTY);

/** A fresh copy of the empty tree's root, whatever a caller did to {@link EMPTY_ROOT}. */
export function emptyRoot(): Uint8Array {
  return new Uint8Array(EMPTY);
}

/** Whether `value` is a 32-byte hash. */
export function isHash(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && value.length === HASH_BYTES;
}

/** Whether two hashes are the same 32 bytes. */
export function hashEquals(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function assertHash(value: unknown, what: string): asserts value is Uint8Array {
  if (!isHash(value)) throw new RangeError(`${what} is not a ${HASH_BYTES}-byte hash`);
}

/** The hash of a leaf: SHA-256(0x00 || leafInput). */
export function leafHash(leafInput: Uint8Array): Uint8Array {
  if (!(leafInput instanceof Uint8Array)) throw new TypeError("leaf input is not bytes (Uint8Array)");
  return leafHashOfParts([leafInput]);
}

/** The hash of the leaf whose input is `parts` one after the other, copied once behind the 0x00 prefix and hashed one-shot. */
export function leafHashOfParts(parts: readonly Uint8Array[]): Uint8Array {
  let length = 1;
  for (const part of parts) length += part.length;
  const input = Buffer.allocUnsafe(length);
  input[0] = 0x00;
  let at = 1;
  for (const part of parts) {
    input.set(part, at);
    at += part.length;
  }
  return sha256(input);
}

/**
 * The hash of an interior node: SHA-256(0x01 || left || right).
 * @throws RangeError when either child is not a 32-byte hash
 */
export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  assertHash(left, "left child");
  assertHash(right, "right child");
  NODE_INPUT.set(left, 1);
  NODE_INPUT.set(right, 1 + HASH_BYTES);
  return sha256(NODE_INPUT);
}

/** A non-negative safe integer: a tree size or a leaf index. */
function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

const half = (n: number): number => Math.floor(n / 2);

/** The largest power of two smaller than `n` (n >= 2): RFC 9162's k. */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  let k = 1;
  while (k < n) k *= 2;
  return k === n;
}

/**
 * MTH over already-hashed leaves (RFC 9162 2.1.1), in O(n) hashing and without recursion: each level pairs its nodes
 * left to right, and a last node without a partner moves up unchanged. This builds exactly RFC 9162's tree (the left
 * subtree of every node holds the largest power of two of its leaves). The empty list gives {@link EMPTY_ROOT}; one
 * leaf hash gives (a copy of) itself.
 * @throws RangeError when an element is not a 32-byte hash
 */
export function rootOf(leafHashes: readonly Uint8Array[]): Uint8Array {
  leafHashes.forEach((h, i) => assertHash(h, `leaf hash ${i}`));
  if (leafHashes.length === 0) return emptyRoot();
  let level: readonly Uint8Array[] = leafHashes;
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) next.push(nodeHash(level[i]!, level[i + 1]!));
    if (level.length % 2 === 1) next.push(level[level.length - 1]!);
    level = next;
  }
  return new Uint8Array(level[0]!);
}

function rangeRoot(leafHashes: readonly Uint8Array[], range: LeafRange): Uint8Array {
  return rootOf(leafHashes.slice(range.start, range.end));
}

/**
 * A range of leaves, [start, end), whose MTH a proof holds. Every range a proof names starts at a multiple of the
 * largest power of two not above its length (by induction on RFC 9162's split), so its MTH is the fold of the perfect
 * subtrees {@link perfectSubtrees} lists: a store that keeps some subtree roots builds it from them.
 */
export interface LeafRange {
  readonly start: number;
  readonly end: number;
}

/** A perfect subtree of 2^height leaves: leaves [index * 2^height, (index + 1) * 2^height). */
export interface PerfectSubtree {
  readonly height: number;
  readonly index: number;
}

/**
 * The ranges whose MTH make the audit path of leaf `index` in a tree of `size` leaves (RFC 9162 2.1.3.1,
 * PATH(m, D[n])), deepest first: what {@link inclusionProof} hashes, for a store that builds the path from what it keeps.
 * @throws RangeError unless `index` and `size` are integers with 0 <= index < size
 */
export function inclusionProofRanges(index: number, size: number): LeafRange[] {
  if (!isCount(size) || !isCount(index) || index >= size)
    throw new RangeError(`leaf index \`${String(index)}\` is not in a tree of ${String(size)} leaves`);
  // PATH(m, D[n]) = PATH(m, D[0:k]) : MTH(D[k:n])   when m < k
  //               = PATH(m - k, D[k:n]) : MTH(D[0:k]) otherwise
  // walked from the root down, so the siblings are collected top first and reversed at the end.
  const siblings: LeafRange[] = [];
  let start = 0;
  let end = size;
  let m = index;
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (m < k) {
      siblings.push({ start: start + k, end });
      end = start + k;
    } else {
      siblings.push({ start, end: start + k });
      start += k;
      m -= k;
    }
  }
  return siblings.reverse();
}

/**
 * The audit path of leaf `index` in the tree of all of `leafHashes` (RFC 9162 2.1.3.1, PATH(m, D[n])): the sibling
 * subtree roots from the leaf up to the root, deepest first. A tree of one leaf gives the empty path. O(n) hashing.
 * @throws RangeError when `index` is not an integer with 0 <= index < leafHashes.length (no leaf has a path in the
 *   empty tree), or an element is not a 32-byte hash
 */
export function inclusionProof(leafHashes: readonly Uint8Array[], index: number): Uint8Array[] {
  const ranges = inclusionProofRanges(index, leafHashes.length);
  leafHashes.forEach((h, i) => assertHash(h, `leaf hash ${i}`));
  return ranges.map((range) => rangeRoot(leafHashes, range));
}

/**
 * RFC 9162 2.1.3.2: whether `proof` proves that `leafHash` is the leaf at `index` of the tree of `size` leaves whose
 * root is `root`. False (never an exception) for anything malformed: an index not below the size (so nothing is in
 * the empty tree), a size or index that is not a non-negative safe integer, a path element or hash that is not 32
 * bytes, a path too long or too short.
 */
export function verifyInclusion(
  leafHash: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  if (!isHash(leafHash) || !isHash(root) || !Array.isArray(proof) || !proof.every(isHash)) return false;
  if (!isCount(index) || !isCount(size) || index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && hashEquals(r, root);
}

/**
 * The ranges whose MTH make the consistency proof from the tree of `oldSize` leaves to the tree of `newSize` leaves
 * (RFC 9162 2.1.4.1, PROOF(m, D[n])), in the proof's order: what {@link consistencyProof} hashes. Empty from the empty
 * tree and between equal sizes.
 * @throws RangeError unless 0 <= oldSize <= newSize (integers)
 */
export function consistencyProofRanges(oldSize: number, newSize: number): LeafRange[] {
  if (!isCount(newSize)) throw new RangeError(`new size \`${String(newSize)}\` is not a non-negative safe integer`);
  if (!isCount(oldSize) || oldSize > newSize)
    throw new RangeError(`old size \`${String(oldSize)}\` is not a size between 0 and the new size ${newSize}`);
  if (oldSize === 0 || oldSize === newSize) return [];
  // SUBPROOF(m, D[m], true) = {}; SUBPROOF(m, D[m], false) = {MTH(D[m])}
  // SUBPROOF(m, D[n], b) = SUBPROOF(m, D[0:k], b) : MTH(D[k:n])          when m <= k
  //                      = SUBPROOF(m - k, D[k:n], false) : MTH(D[0:k])   otherwise
  // walked from the root down, collected top first and reversed at the end.
  const nodes: LeafRange[] = [];
  let start = 0;
  let end = newSize;
  let m = oldSize;
  let complete = true;
  while (end - start !== m) {
    const k = splitPoint(end - start);
    if (m <= k) {
      nodes.push({ start: start + k, end });
      end = start + k;
    } else {
      nodes.push({ start, end: start + k });
      start += k;
      m -= k;
      complete = false;
    }
  }
  if (!complete) nodes.push({ start, end });
  return nodes.reverse();
}

/**
 * The consistency proof from the tree of the first `oldSize` leaves to the tree of the first `newSize` leaves
 * (default: all of `leafHashes`), RFC 9162 2.1.4.1 PROOF(m, D[n]). O(newSize) hashing.
 *
 * Beyond RFC 9162, which defines the proof for 0 < m < n: the proof from a tree to itself (oldSize == newSize) and
 * from the empty tree (oldSize 0) is the empty list, and {@link verifyConsistency} accepts exactly that.
 * @throws RangeError unless 0 <= oldSize <= newSize <= leafHashes.length (integers), or an element is not a hash
 */
export function consistencyProof(leafHashes: readonly Uint8Array[], oldSize: number, newSize: number = leafHashes.length): Uint8Array[] {
  if (!isCount(newSize) || newSize > leafHashes.length) {
    throw new RangeError(`new size \`${String(newSize)}\` is not a size of a log of ${leafHashes.length} leaves`);
  }
  const ranges = consistencyProofRanges(oldSize, newSize);
  leafHashes.forEach((h, i) => assertHash(h, `leaf hash ${i}`));
  return ranges.map((range) => rangeRoot(leafHashes, range));
}

/**
 * The perfect subtrees that cover `range`, left to right, largest first: one per bit set in its length. Their roots,
 * folded by {@link rootOfSubtrees}, are the range's MTH when it starts at a multiple of the largest (as every range of
 * a proof does, {@link LeafRange}).
 * @throws RangeError when the range is empty or does not start at such a multiple
 */
export function perfectSubtrees(range: LeafRange): PerfectSubtree[] {
  const { start, end } = range;
  if (!isCount(start) || !isCount(end) || end <= start)
    throw new RangeError(`leaf range [${String(start)}, ${String(end)}) is empty or not of leaf indices`);
  const subtrees: PerfectSubtree[] = [];
  let at = start;
  let width = 1;
  let height = 0;
  while (width * 2 <= end - start) {
    width *= 2;
    height += 1;
  }
  if (start % width !== 0)
    throw new RangeError(`leaf range [${start}, ${end}) does not start at a multiple of ${width}: it is no subtree of a log`);
  for (; width >= 1; width /= 2, height -= 1) {
    if (end - at >= width) {
      subtrees.push({ height, index: at / width });
      at += width;
    }
  }
  return subtrees;
}

/**
 * The root of perfect subtrees side by side, left (largest) to right: node(h0, node(h1, ... node(h_{j-1}, h_j))).
 * The MTH of a range from {@link perfectSubtrees}' roots, and of a whole tree from its frontier; EMPTY_ROOT for none.
 * @throws RangeError when an element is not a 32-byte hash
 */
export function rootOfSubtrees(roots: readonly Uint8Array[]): Uint8Array {
  roots.forEach((h, i) => assertHash(h, `subtree root ${i}`));
  const last = roots.length - 1;
  if (last < 0) return emptyRoot();
  let root = roots[last]!;
  for (let i = last - 1; i >= 0; i--) root = nodeHash(roots[i]!, root);
  return new Uint8Array(root);
}

/**
 * RFC 9162 2.1.4.2: whether `proof` proves that the tree of `oldSize` leaves with root `oldRoot` is a prefix of the
 * tree of `newSize` leaves with root `newRoot`. Beyond the RFC (which covers 0 < oldSize < newSize): equal sizes are
 * consistent exactly when the proof is empty and the roots are equal; the empty tree (oldSize 0) is consistent with
 * every tree exactly when the proof is empty and `oldRoot` is {@link EMPTY_ROOT}. False (never an exception) for
 * anything malformed, and when oldSize > newSize.
 */
export function verifyConsistency(
  oldSize: number,
  newSize: number,
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  if (!isHash(oldRoot) || !isHash(newRoot) || !Array.isArray(proof) || !proof.every(isHash)) return false;
  if (!isCount(oldSize) || !isCount(newSize) || oldSize > newSize) return false;
  if (oldSize === newSize) return proof.length === 0 && hashEquals(oldRoot, newRoot);
  if (oldSize === 0) return proof.length === 0 && hashEquals(oldRoot, EMPTY);
  // 1. An empty path fails. 2. When the old size is a power of two, its root is the path's first node.
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(oldSize) ? [oldRoot, ...proof] : proof;
  // 3., 4.
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (fn % 2 === 1) {
    fn = half(fn);
    sn = half(sn);
  }
  // 5., 6.
  let fr = path[0]!;
  let sr = path[0]!;
  for (let i = 1; i < path.length; i++) {
    const c = path[i]!;
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  // 7.
  return hashEquals(fr, oldRoot) && hashEquals(sr, newRoot) && sn === 0;
}
