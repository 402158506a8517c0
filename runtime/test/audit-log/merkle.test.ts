import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  EMPTY_ROOT,
  consistencyProof,
  inclusionProof,
  leafHash,
  nodeHash,
  rootOf,
  toHex,
  verifyConsistency,
  verifyInclusion,
} from "../../src/index.js";
import { leavesOf, refMth, refPath, refProof } from "./reference.js";

const hex = (b: Uint8Array): string => toHex(b);
const flipped = (h: Uint8Array, byte = 0): Uint8Array => {
  const out = new Uint8Array(h);
  out[byte] = (out[byte] ?? 0) ^ 0x01;
  return out;
};

/**
 * The known-answer tree of the Certificate Transparency reference implementations (RFC 6962 and RFC 9162 use the same
 * hashing): eight leaf inputs, the roots of every prefix, and proofs that appear in their test data.
 */
const CT_INPUTS = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"];
const CT_ROOTS = [
  "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
  "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
  "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
  "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
  "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
  "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
  "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
  "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
];
const ct = CT_INPUTS.map((h) => leafHash(new Uint8Array(Buffer.from(h, "hex"))));

describe("hashing (RFC 9162 2.1.1)", () => {
  it("separates leaves from nodes by a first byte 0x00 / 0x01", () => {
    const input = new TextEncoder().encode("writ");
    expect(hex(leafHash(input))).toBe(
      createHash("sha256")
        .update(Buffer.from([0]))
        .update(input)
        .digest("hex"),
    );
    const [l, r] = [leafHash(input), leafHash(new Uint8Array(0))];
    expect(hex(nodeHash(l, r))).toBe(
      createHash("sha256")
        .update(Buffer.from([1]))
        .update(l)
        .update(r)
        .digest("hex"),
    );
    // A node's two children, concatenated, are not a leaf that hashes to the node.
    expect(hex(leafHash(Buffer.concat([l, r])))).not.toBe(hex(nodeHash(l, r)));
  });

  it("the empty tree's root is SHA-256 of nothing, and EMPTY_ROOT cannot be changed from outside", () => {
    expect(hex(EMPTY_ROOT)).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(hex(rootOf([]))).toBe(hex(EMPTY_ROOT));
    EMPTY_ROOT[0] = 0;
    try {
      expect(hex(rootOf([]))).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
      expect(verifyConsistency(0, 1, rootOf([]), ct[0]!, [])).toBe(true);
    } finally {
      EMPTY_ROOT[0] = 0xe3;
    }
  });

  it("refuses children that are not 32-byte hashes", () => {
    expect(() => nodeHash(new Uint8Array(31), ct[0]!)).toThrow("left child is not a 32-byte hash");
    expect(() => rootOf([ct[0]!, new Uint8Array(33)])).toThrow("leaf hash 1 is not a 32-byte hash");
    expect(() => leafHash("text" as unknown as Uint8Array)).toThrow("leaf input is not bytes");
  });
});

describe("the Certificate Transparency known-answer tree", () => {
  it("every prefix has the published root", () => {
    for (let n = 1; n <= 8; n++) expect(hex(rootOf(ct.slice(0, n))), `size ${n}`).toBe(CT_ROOTS[n - 1]);
  });

  it("the path of leaf 0 in the tree of 8", () => {
    expect(inclusionProof(ct, 0).map(hex)).toEqual([
      "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
      "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
      "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
    ]);
  });

  it("consistency proofs 6 -> 8 and 2 -> 5", () => {
    expect(consistencyProof(ct, 6, 8).map(hex)).toEqual([
      "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
      "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
      "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    ]);
    expect(consistencyProof(ct, 2, 5).map(hex)).toEqual([
      "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
      "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
    ]);
  });
});

describe("rootOf, inclusionProof and consistencyProof are RFC 9162's recursive definitions", () => {
  it("every size up to 64, every index, every old size: exactly the recursive result, and each verifies", () => {
    const leaves = leavesOf(64);
    for (let n = 0; n <= 64; n++) {
      const d = leaves.slice(0, n);
      const root = rootOf(d);
      expect(hex(root), `root ${n}`).toBe(hex(refMth(d)));
      for (let i = 0; i < n; i++) {
        const path = inclusionProof(d, i);
        expect(path.map(hex), `path ${i} of ${n}`).toEqual(refPath(i, d).map(hex));
        expect(verifyInclusion(d[i]!, i, n, path, root), `path ${i} of ${n}`).toBe(true);
      }
      for (let m = 0; m <= n; m++) {
        const proof = consistencyProof(leaves, m, n);
        expect(proof.map(hex), `proof ${m} -> ${n}`).toEqual(m === 0 || m === n ? [] : refProof(m, d).map(hex));
        expect(verifyConsistency(m, n, rootOf(leaves.slice(0, m)), root, proof), `proof ${m} -> ${n}`).toBe(true);
      }
    }
  });

  it("random sizes up to 2,000: the root is MTH", () => {
    const leaves = leavesOf(2000);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2000 }), (n) => hex(rootOf(leaves.slice(0, n))) === hex(refMth(leaves.slice(0, n)))),
      { numRuns: 40 },
    );
  });

  it("random trees up to 2,000 leaves: paths and proofs are the recursive ones and verify; one change makes them fail", () => {
    const leaves = leavesOf(2000, "random");
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2000 }).chain((n) => fc.tuple(fc.constant(n), fc.nat(n - 1), fc.integer({ min: 1, max: n }), fc.nat(31))),
        ([n, i, m, byte]) => {
          const d = leaves.slice(0, n);
          const root = rootOf(d);
          const path = inclusionProof(d, i);
          expect(path.map(hex)).toEqual(refPath(i, d).map(hex));
          expect(verifyInclusion(d[i]!, i, n, path, root)).toBe(true);
          // Any one hash of the path changed, another index, another leaf, a hash more or less: refused. (Not another
          // size: a path alone does not fix the size, e.g. leaf 0 has a path of the same shape in trees of 9 and 10
          // leaves; the size is bound with the root by the signed checkpoint.)
          path.forEach((_, j) =>
            expect(
              verifyInclusion(
                d[i]!,
                i,
                n,
                path.map((p, x) => (x === j ? flipped(p, byte) : p)),
                root,
              ),
            ).toBe(false),
          );
          if (n > 1) expect(verifyInclusion(d[i]!, (i + 1) % n, n, path, root)).toBe(false);
          expect(verifyInclusion(flipped(d[i]!, byte), i, n, path, root)).toBe(false);
          expect(verifyInclusion(d[i]!, i, n, [...path, root], root)).toBe(false);
          if (path.length > 0) expect(verifyInclusion(d[i]!, i, n, path.slice(1), root)).toBe(false);

          const oldRoot = rootOf(leaves.slice(0, m));
          const proof = consistencyProof(d, m);
          if (m < n) expect(proof.map(hex)).toEqual(refProof(m, d).map(hex));
          expect(verifyConsistency(m, n, oldRoot, root, proof)).toBe(true);
          proof.forEach((_, j) =>
            expect(
              verifyConsistency(
                m,
                n,
                oldRoot,
                root,
                proof.map((p, x) => (x === j ? flipped(p, byte) : p)),
              ),
            ).toBe(false),
          );
          expect(verifyConsistency(m, n, flipped(oldRoot, byte), root, proof)).toBe(false);
          expect(verifyConsistency(m, n, oldRoot, flipped(root, byte), proof)).toBe(false);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("edges", () => {
  const leaves = leavesOf(5);
  const root5 = rootOf(leaves);

  it("a size whose path has another shape is refused; one whose path has the same shape is not (the checkpoint binds it)", () => {
    const nine = leavesOf(9);
    const root = rootOf(nine);
    expect(verifyInclusion(nine[0]!, 0, 9, inclusionProof(nine, 0), root)).toBe(true);
    expect(verifyInclusion(nine[0]!, 0, 10, inclusionProof(nine, 0), root)).toBe(true);
    expect(verifyInclusion(nine[0]!, 0, 8, inclusionProof(nine, 0), root)).toBe(false);
    expect(verifyInclusion(nine[8]!, 8, 10, inclusionProof(nine, 8), root)).toBe(false);
    expect(verifyConsistency(3, 8, rootOf(nine.slice(0, 3)), rootOf(nine.slice(0, 8)), consistencyProof(nine, 3, 8))).toBe(true);
    expect(verifyConsistency(3, 9, rootOf(nine.slice(0, 3)), rootOf(nine.slice(0, 8)), consistencyProof(nine, 3, 8))).toBe(false);
    expect(verifyConsistency(2, 8, rootOf(nine.slice(0, 3)), rootOf(nine.slice(0, 8)), consistencyProof(nine, 3, 8))).toBe(false);
  });

  it("a tree of one leaf: the root is the leaf hash, the path is empty", () => {
    expect(hex(rootOf([leaves[0]!]))).toBe(hex(leaves[0]!));
    expect(inclusionProof([leaves[0]!], 0)).toEqual([]);
    expect(verifyInclusion(leaves[0]!, 0, 1, [], leaves[0]!)).toBe(true);
    expect(verifyInclusion(leaves[0]!, 0, 1, [leaves[1]!], leaves[0]!)).toBe(false);
  });

  it("inclusionProof refuses an index outside the tree; nothing is in the empty tree", () => {
    for (const index of [-1, 5, 1.5, Number.NaN]) expect(() => inclusionProof(leaves, index)).toThrow(RangeError);
    expect(() => inclusionProof([], 0)).toThrow("leaf index `0` is not in a tree of 0 leaves");
    expect(verifyInclusion(leaves[0]!, 0, 0, [], EMPTY_ROOT)).toBe(false);
  });

  it("verifyInclusion answers false for malformed input instead of throwing", () => {
    const path = inclusionProof(leaves, 2);
    expect(verifyInclusion(leaves[2]!, 2, 5, path, root5)).toBe(true);
    expect(verifyInclusion(leaves[2]!, 5, 5, path, root5)).toBe(false);
    expect(verifyInclusion(leaves[2]!, -1, 5, path, root5)).toBe(false);
    expect(verifyInclusion(leaves[2]!, 2, 2 ** 53, path, root5)).toBe(false);
    expect(verifyInclusion(leaves[2]!, 2, 5, [...path.slice(0, -1), new Uint8Array(31)], root5)).toBe(false);
    expect(verifyInclusion(leaves[2]!.subarray(1), 2, 5, path, root5)).toBe(false);
    expect(verifyInclusion(leaves[2]!, 2, 5, "path" as unknown as Uint8Array[], root5)).toBe(false);
  });

  it("consistency: equal sizes need an empty proof and equal roots; the empty tree needs an empty proof and its root", () => {
    expect(consistencyProof(leaves, 5, 5)).toEqual([]);
    expect(consistencyProof(leaves, 3, 3)).toEqual([]);
    expect(verifyConsistency(5, 5, root5, root5, [])).toBe(true);
    expect(verifyConsistency(5, 5, root5, rootOf(leaves.slice(0, 4)), [])).toBe(false);
    expect(verifyConsistency(5, 5, root5, root5, [leaves[0]!])).toBe(false);
    expect(consistencyProof(leaves, 0)).toEqual([]);
    expect(verifyConsistency(0, 5, EMPTY_ROOT, root5, [])).toBe(true);
    expect(verifyConsistency(0, 0, EMPTY_ROOT, EMPTY_ROOT, [])).toBe(true);
    expect(verifyConsistency(0, 5, leaves[0]!, root5, [])).toBe(false);
    expect(verifyConsistency(0, 5, EMPTY_ROOT, root5, [leaves[0]!])).toBe(false);
  });

  it("consistency: a shrinking tree, an empty proof between different sizes, and malformed input are refused", () => {
    const proof = consistencyProof(leaves, 3);
    expect(verifyConsistency(3, 5, rootOf(leaves.slice(0, 3)), root5, proof)).toBe(true);
    expect(verifyConsistency(5, 3, root5, rootOf(leaves.slice(0, 3)), proof)).toBe(false);
    expect(verifyConsistency(3, 5, rootOf(leaves.slice(0, 3)), root5, [])).toBe(false);
    expect(verifyConsistency(3, 5, rootOf(leaves.slice(0, 3)), root5, [...proof, root5])).toBe(false);
    expect(verifyConsistency(3, 5, rootOf(leaves.slice(0, 3)), root5, [new Uint8Array(32), ...proof])).toBe(false);
    expect(verifyConsistency(3, 5.5, rootOf(leaves.slice(0, 3)), root5, proof)).toBe(false);
    expect(verifyConsistency(3, 5, rootOf(leaves.slice(0, 3)), root5, [proof[0]!.subarray(2), ...proof.slice(1)])).toBe(false);
  });

  it("consistency: two trees of which one does not extend the other are refused", () => {
    const other = [...leaves.slice(0, 2), leavesOf(1, "other")[0]!, ...leaves.slice(3)];
    expect(verifyConsistency(3, 5, rootOf(other.slice(0, 3)), root5, consistencyProof(leaves, 3))).toBe(false);
    expect(verifyConsistency(3, 5, rootOf(other.slice(0, 3)), root5, consistencyProof(other, 3))).toBe(false);
  });

  it("consistencyProof refuses sizes outside 0 <= old <= new <= leaves", () => {
    expect(() => consistencyProof(leaves, 3, 6)).toThrow("new size `6` is not a size of a log of 5 leaves");
    expect(() => consistencyProof(leaves, 4, 3)).toThrow("old size `4` is not a size between 0 and the new size 3");
    expect(() => consistencyProof(leaves, -1)).toThrow(RangeError);
    expect(consistencyProof(leaves, 2, 3).map(hex)).toEqual(refProof(2, leaves.slice(0, 3)).map(hex));
  });
});
