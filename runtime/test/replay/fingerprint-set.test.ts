import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FingerprintSet, fingerprintHash, type FingerprintHash } from "../../src/replay/fingerprint-set.js";

/** Hashes from a small space, so that runs share home slots and hashes collide (the set must keep every location). */
const hash = fc.record({
  hi: fc.integer({ min: 0, max: 3 }).map((n) => n * 0x0100_0000 + 7),
  lo: fc.nat({ max: 200 }).map((n) => n * 21_474_836),
});
const location = fc.integer({ min: 1, max: 6 });
const op = fc.oneof(
  fc.record({ kind: fc.constant("add" as const), hash, location }),
  fc.record({ kind: fc.constant("remove" as const), hash, location }),
);

const keyOf = (h: FingerprintHash) => `${h.hi}:${h.lo}`;

describe("FingerprintSet", () => {
  it("holds exactly the locations added and not removed, through growth and backward-shift removal", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 600 }), (ops) => {
        const set = new FingerprintSet();
        const model = new Map<string, Set<number>>();
        for (const { kind, hash: h, location: at } of ops) {
          const held = model.get(keyOf(h)) ?? new Set<number>();
          if (kind === "add") {
            set.add(h, at);
            held.add(at);
          } else {
            expect(set.remove(h, at)).toBe(held.delete(at));
          }
          model.set(keyOf(h), held);
        }
        let size = 0;
        for (const [key, held] of model) {
          const [hi, lo] = key.split(":").map(Number) as [number, number];
          expect(new Set(set.find({ hi, lo }))).toEqual(held);
          size += held.size;
        }
        expect(set.size).toBe(size);
      }),
    );
  });

  it("takes 12 bytes a slot at a load between 0.6 and 0.8: 15 to 20 bytes a fingerprint", () => {
    const count = 200_000;
    const set = new FingerprintSet(count);
    const sized = set.bytes;
    for (let i = 0; i < count; i++) set.add(fingerprintHash(`fp-${i}`), i + 1);
    expect(set.size).toBe(count);
    expect(set.bytes).toBe(sized);
    expect(set.bytes / count).toBeGreaterThanOrEqual(15);
    expect(set.bytes / count).toBeLessThanOrEqual(20.5);
    // Grown one shard at a time past 0.8, back to 0.6.
    const grown = new FingerprintSet();
    for (let i = 0; i < count; i++) grown.add(fingerprintHash(`fp-${i}`), i + 1);
    expect(grown.bytes / count).toBeLessThanOrEqual(20.5);
    const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !grown.find(fingerprintHash(`fp-${i}`)).includes(i + 1));
    expect(missing).toEqual([]);
  });

  it("refuses a location outside 1 to 2^32 - 1 (0 marks a free slot)", () => {
    const set = new FingerprintSet();
    for (const bad of [0, -1, 2 ** 32, 1.5]) expect(() => set.add({ hi: 1, lo: 2 }, bad)).toThrow(RangeError);
  });

  it("hashes SHA-256 hex by its first 64 bits and anything else by its SHA-256", () => {
    const hex = "0123456789abcdef" + "0".repeat(48);
    expect(fingerprintHash(hex)).toEqual({ hi: 0x01234567, lo: 0x89abcdef });
    // Upper case is not what writ makes: hashed, not read as hex.
    expect(fingerprintHash(hex.toUpperCase())).not.toEqual({ hi: 0x01234567, lo: 0x89abcdef });
    fc.assert(
      fc.property(fc.string(), (text) => {
        const h = fingerprintHash(text);
        expect(fingerprintHash(text)).toEqual(h);
        for (const word of [h.hi, h.lo]) expect(Number.isInteger(word) && word >= 0 && word < 2 ** 32).toBe(true);
      }),
    );
  });
});
