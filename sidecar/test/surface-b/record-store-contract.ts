/**
 * The TrustRecordStore contract (sidecar/src/surface-b/record-store.ts) as one suite that every backend runs:
 * `trustRecordStoreContract("lmdb", open)`. Records, verifications and receipts are opaque JSON here: the store keeps
 * what it is given.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TrustRecordStore } from "../../src/trust-records/record-store.js";
import type { Receipt, SealedRecord, Verification } from "../../src/trust-records/types.js";

export interface RecordStoreHarness {
  readonly store: TrustRecordStore;
  /** Stores `text` verbatim as the record of `id` (a record damaged in the store). */
  corrupt(id: string, text: string): Promise<void>;
  dispose(): Promise<void>;
}

export const recordOf = (id: string, n = 0): SealedRecord =>
  ({ businessTransactionId: id, n, seal: { signature: `sig-${n}` } }) as unknown as SealedRecord;
export const verificationOf = (id: string, n: number): Verification =>
  ({ businessTransactionId: id, verified: true, n }) as unknown as Verification;
export const receiptOf = (id: string, n: number): Receipt => ({ businessTransactionId: id, receiptId: `r-${n}` }) as unknown as Receipt;

export function trustRecordStoreContract(label: string, open: () => Promise<RecordStoreHarness>): void {
  describe(`TrustRecordStore contract: ${label}`, () => {
    let harness: RecordStoreHarness;
    let store: TrustRecordStore;
    beforeEach(async () => {
      harness = await open();
      store = harness.store;
    });
    afterEach(() => harness.dispose());

    it("creates a record once with its first verification and receipt; a second create writes nothing", async () => {
      expect(await store.create(recordOf("tx-1"), verificationOf("tx-1", 0), receiptOf("tx-1", 0))).toBe(true);
      expect(await store.create(recordOf("tx-1", 1), verificationOf("tx-1", 1), receiptOf("tx-1", 1))).toBe(false);
      expect(await store.record("tx-1")).toEqual({ state: "stored", value: recordOf("tx-1") });
      expect(await store.latestVerification("tx-1")).toEqual(verificationOf("tx-1", 0));
      expect(await store.latestReceipt("tx-1")).toEqual(receiptOf("tx-1", 0));
      expect(await store.count()).toBe(1);
    });

    it("answers undefined for an unknown id and for an id that could never be stored", async () => {
      for (const id of ["absent", "not/a path", "x".repeat(65)]) {
        expect(await store.record(id)).toBeUndefined();
        expect(await store.latestVerification(id)).toBeUndefined();
        expect(await store.latestReceipt(id)).toBeUndefined();
      }
    });

    it("appends verifications and receipts; the latest is the last appended", async () => {
      await store.create(recordOf("tx-h"), verificationOf("tx-h", 0), receiptOf("tx-h", 0));
      for (let n = 1; n <= 3; n++) {
        await store.appendVerification("tx-h", verificationOf("tx-h", n));
        await store.appendReceipt("tx-h", receiptOf("tx-h", n * 10));
      }
      expect(await store.latestVerification("tx-h")).toEqual(verificationOf("tx-h", 3));
      expect(await store.latestReceipt("tx-h")).toEqual(receiptOf("tx-h", 30));
    });

    it("pages ids in creation order", async () => {
      const ids = Array.from({ length: 25 }, (_, i) => `tx-${String(i).padStart(2, "0")}-${i % 3}`);
      for (const id of ids) await store.create(recordOf(id), verificationOf(id, 0), receiptOf(id, 0));
      expect(await store.count()).toBe(25);
      expect(await store.ids(0, 10)).toEqual(ids.slice(0, 10));
      expect(await store.ids(20, 10)).toEqual(ids.slice(20));
      expect(await store.ids(30, 10)).toEqual([]);
    });

    it("reads a record whose stored text is no longer strict JSON as unreadable", async () => {
      await harness.corrupt("tx-bad", '{"a":1,"a":2}');
      expect(await store.record("tx-bad")).toEqual({ state: "unreadable", text: '{"a":1,"a":2}' });
    });

    it("50 racing creates of one id: exactly one wins, and the record has the winner's verification", async () => {
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, n) => store.create(recordOf("tx-race", n), verificationOf("tx-race", n), receiptOf("tx-race", n))),
      );
      const winners = results.flatMap((won, n) => (won ? [n] : []));
      expect(winners).toHaveLength(1);
      expect(await store.record("tx-race")).toEqual({ state: "stored", value: recordOf("tx-race", winners[0]) });
      expect(await store.latestVerification("tx-race")).toEqual(verificationOf("tx-race", winners[0]!));
      expect(await store.count()).toBe(1);
    });

    it("100 racing appends: none lost, the latest is one of them", async () => {
      await store.create(recordOf("tx-app"), verificationOf("tx-app", 0), receiptOf("tx-app", 0));
      await Promise.all(Array.from({ length: 100 }, (_, n) => store.appendVerification("tx-app", verificationOf("tx-app", n + 1))));
      const latest = (await store.latestVerification("tx-app")) as { n: number };
      expect(latest.n).toBeGreaterThanOrEqual(1);
      expect(latest.n).toBeLessThanOrEqual(100);
    });
  });
}
