import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EMPTY_ROOT, MerkleFrontier, popcount, rootOf, toHex } from "../../src/index.js";
import { leavesOf } from "./reference.js";

const hex = (b: Uint8Array): string => toHex(b);
const leaves = leavesOf(2000, "frontier");

function grown(from: MerkleFrontier, hashes: readonly Uint8Array[]): MerkleFrontier {
  for (const h of hashes) from.append(h);
  return from;
}

describe("MerkleFrontier", () => {
  it("after every append up to 300 leaves: the root is rootOf, one hash per bit of the size, each a perfect subtree's root", () => {
    const f = MerkleFrontier.empty();
    expect(f.size).toBe(0);
    expect(f.hashes()).toEqual([]);
    expect(hex(f.root())).toBe(hex(EMPTY_ROOT));
    for (let n = 1; n <= 300; n++) {
      f.append(leaves[n - 1]!);
      expect(f.size).toBe(n);
      expect(hex(f.root()), `size ${n}`).toBe(hex(rootOf(leaves.slice(0, n))));
      const hashes = f.hashes();
      expect(hashes).toHaveLength(popcount(n));
      // Largest subtree first: the set bits of n from the highest.
      let start = 0;
      for (let bit = 2 ** 8, j = 0; bit >= 1; bit /= 2) {
        if (Math.floor(n / bit) % 2 === 1) {
          expect(hex(hashes[j]!), `size ${n}, subtree [${start}, ${start + bit})`).toBe(hex(rootOf(leaves.slice(start, start + bit))));
          start += bit;
          j++;
        }
      }
    }
  });

  it("random sizes up to 2,000, resumed at a random size from (size, hashes()): the same root as rootOf", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2000 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n }))),
        ([n, cut]) => {
          const first = grown(MerkleFrontier.empty(), leaves.slice(0, cut));
          expect(hex(first.root())).toBe(hex(rootOf(leaves.slice(0, cut))));
          const resumed = grown(MerkleFrontier.from(first.size, first.hashes()), leaves.slice(cut, n));
          expect(resumed.size).toBe(n);
          expect(hex(resumed.root())).toBe(hex(rootOf(leaves.slice(0, n))));
          expect(resumed.hashes().map(hex)).toEqual(grown(MerkleFrontier.empty(), leaves.slice(0, n)).hashes().map(hex));
        },
      ),
      { numRuns: 50 },
    );
  });

  it("hands out copies and keeps its own: changing a returned or given hash changes nothing", () => {
    const given = leaves.slice(0, 3).map((h) => new Uint8Array(h));
    const f = grown(MerkleFrontier.empty(), given);
    const root = hex(f.root());
    given[2]!.fill(0);
    f.hashes()[0]!.fill(0);
    f.root().fill(0);
    expect(hex(f.root())).toBe(root);
    const hashes = f.hashes();
    const g = MerkleFrontier.from(3, hashes);
    hashes[0]!.fill(0);
    expect(hex(g.root())).toBe(root);
  });

  it("from() refuses a count of hashes other than the bits set in the size, and what is not a size or a hash", () => {
    const two = leaves.slice(0, 2);
    expect(() => MerkleFrontier.from(4, two)).toThrow("a frontier of size 4 has 1 hashes (one per bit set in the size), not 2");
    expect(() => MerkleFrontier.from(3, two.slice(0, 1))).toThrow(RangeError);
    expect(() => MerkleFrontier.from(0, two)).toThrow(RangeError);
    expect(() => MerkleFrontier.from(-1, [])).toThrow("frontier size `-1` is not a non-negative safe integer");
    expect(() => MerkleFrontier.from(1.5, [])).toThrow(RangeError);
    expect(() => MerkleFrontier.from(2 ** 53, [two[0]!])).toThrow(RangeError);
    expect(() => MerkleFrontier.from(3, [two[0]!, new Uint8Array(31)])).toThrow("frontier hash 1 is not a 32-byte hash");
    expect(() => MerkleFrontier.empty().append(new Uint8Array(33))).toThrow("leaf hash is not a 32-byte hash");
  });

  it("counts sizes beyond 32 bits without 32-bit arithmetic, up to Number.MAX_SAFE_INTEGER", () => {
    expect(popcount(2 ** 32)).toBe(1);
    expect(popcount(2 ** 32 + 3)).toBe(3);
    expect(popcount(Number.MAX_SAFE_INTEGER)).toBe(53);
    const bits = leavesOf(53, "bits");
    const full = MerkleFrontier.from(Number.MAX_SAFE_INTEGER, bits);
    expect(() => full.append(leaves[0]!)).toThrow("the log has the most leaves a frontier can count");
    const big = MerkleFrontier.from(2 ** 32 + 1, bits.slice(0, 2));
    big.append(leaves[0]!);
    expect(big.size).toBe(2 ** 32 + 2);
    expect(big.hashes()).toHaveLength(2);
    big.append(leaves[1]!);
    expect(big.hashes()).toHaveLength(3);
  });
});
