/**
 * The contract every bundle pin store passes (runtime `BundlePins`; docs/bundles.md, "Immutable at run time"): the
 * first hash claimed for a version is the one every later claim gets back, concurrent claims agree on one winner,
 * versions are independent, and (for a durable store) a pin survives reopening the store.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BundlePins } from "@writ/runtime";

export interface PinsHarness {
  /** A store over the harness's state; a second call gives another store over the same state (a restart, another host). */
  open(): BundlePins;
  dispose(): Promise<void>;
}

const hash = (n: number) => n.toString(16).padStart(64, "0");

export function bundlePinsContract(label: string, harness: () => Promise<PinsHarness>, options: { durable: boolean }): void {
  describe(`BundlePins contract: ${label}`, () => {
    let h: PinsHarness;
    let pins: BundlePins;
    beforeEach(async () => {
      h = await harness();
      pins = h.open();
    });
    afterEach(() => h.dispose());

    it("the first hash claimed for a version is pinned; a later claim with other bytes gets the first back", async () => {
      expect(await pins.claim("payments.transfer", "1.2.0", hash(1))).toBe(hash(1));
      expect(await pins.claim("payments.transfer", "1.2.0", hash(2))).toBe(hash(1));
      expect(await pins.claim("payments.transfer", "1.2.0", hash(1))).toBe(hash(1));
    });

    it("versions and policies are pinned independently", async () => {
      expect(await pins.claim("payments.transfer", "1.2.0", hash(1))).toBe(hash(1));
      expect(await pins.claim("payments.transfer", "1.3.0", hash(2))).toBe(hash(2));
      expect(await pins.claim("payments.refund", "1.2.0", hash(3))).toBe(hash(3));
    });

    it("concurrent claims of one version with different hashes all get the same winner, one of them", async () => {
      const claims = await Promise.all(Array.from({ length: 24 }, (_, n) => pins.claim("deploy.production", "2.0.0", hash(100 + n))));
      expect(new Set(claims).size).toBe(1);
      expect(Array.from({ length: 24 }, (_, n) => hash(100 + n))).toContain(claims[0]);
    });

    if (options.durable) {
      it("a pin outlives the store that made it: another store over the same state gets it back", async () => {
        await pins.claim("payments.transfer", "1.2.0", hash(7));
        const other = h.open();
        expect(await other.claim("payments.transfer", "1.2.0", hash(8))).toBe(hash(7));
        const raced = await Promise.all([pins.claim("x.y", "1.0.0", hash(9)), other.claim("x.y", "1.0.0", hash(10))]);
        expect(raced[0]).toBe(raced[1]);
      });
    }
  });
}
