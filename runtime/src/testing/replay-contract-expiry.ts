/**
 * The ReplayStore contract (replay-contract.ts): `expire` and `sweep`, and the expiry bookkeeping behind them after any transition.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { ReplayStore } from "../replay/store.js";
import { FAILED_TTL_MS, RESERVATION_TTL_MS } from "../replay/store.js";
import { ALL_STATES, FINAL_OR_BLOCKING, T0, YEAR, into, ok, type StoreHarness } from "./replay-contract-support.js";

export function expiryCases(current: () => StoreHarness): void {
  let store: ReplayStore;
  let harness: StoreHarness;
  beforeEach(() => {
    harness = current();
    store = harness.store;
  });

  describe("expire and sweep", () => {
    it("expire removes a reservation only once its TTL has passed", async () => {
      await into(store, "fp", "reserved");
      expect(await store.expire("fp", T0 + RESERVATION_TTL_MS - 1)).toBe(false);
      expect(await store.read("fp")).not.toBeNull();
      expect(await store.expire("fp", T0 + RESERVATION_TTL_MS)).toBe(true);
      expect(await store.read("fp")).toBeNull();
      expect(await store.expire("fp", T0 + RESERVATION_TTL_MS)).toBe(false);
    });

    it("expire removes a failed entry once its TTL has passed", async () => {
      await into(store, "fp", "failed");
      expect(await store.expire("fp", T0 + 2 + FAILED_TTL_MS - 1)).toBe(false);
      expect(await store.expire("fp", T0 + 2 + FAILED_TTL_MS)).toBe(true);
      expect(await store.read("fp")).toBeNull();
    });

    it.each(FINAL_OR_BLOCKING)("expire never removes a %s entry", async (state) => {
      await into(store, "fp", state);
      expect(await store.expire("fp", T0 + 100 * YEAR)).toBe(false);
      expect((await store.read("fp"))?.state).toBe(state);
    });

    it("expire of an unknown fingerprint is false", async () => {
      expect(await store.expire("nope", T0)).toBe(false);
    });

    it("sweep removes exactly the expired entries and counts them", async () => {
      for (const state of ALL_STATES) await into(store, `old-${state}`, state);
      const later = T0 + RESERVATION_TTL_MS + 10;
      ok(await store.reserve("fresh-reserved", { now: later - 1 }));
      const { token } = ok(await store.reserve("fresh-failed", { now: later - 1 }));
      ok(await store.fail("fresh-failed", token, { now: later - 1 }));

      expect(await store.sweep(T0 + 1)).toBe(0);
      expect(await store.sweep(later)).toBe(2);
      expect(await store.read("old-reserved")).toBeNull();
      expect(await store.read("old-failed")).toBeNull();
      for (const state of FINAL_OR_BLOCKING) expect((await store.read(`old-${state}`))?.state).toBe(state);
      expect((await store.read("fresh-reserved"))?.state).toBe("reserved");
      expect((await store.read("fresh-failed"))?.state).toBe("failed");
      expect(await store.sweep(later)).toBe(0);
      expect(await store.sweep(later + 100 * YEAR)).toBe(2);
    });

    it("sweep handles many entries", async () => {
      const ttl = (i: number): number => (i % 2 === 0 ? 10 : 1_000);
      await Promise.all(Array.from({ length: 2_500 }, (_, i) => store.reserve(`bulk-${i}`, { now: T0, ttlMs: ttl(i) })));
      expect(await store.sweep(T0 + 10)).toBe(1_250);
      expect(await store.sweep(T0 + 1_000)).toBe(1_250);
      expect(await store.read("bulk-1")).toBeNull();
    });

    it("read returns an expired entry as stored until it is removed (read has no clock)", async () => {
      const entry = ok(await store.reserve("fp", { now: T0, ttlMs: 1 }));
      expect(await store.read("fp")).toEqual(entry);
    });
  });

  describe("expiry bookkeeping: sweep finds every expired entry and only those, after any transition", () => {
    /** For a store with an expiry index of its own: it holds exactly `[expiresAt, fingerprint]` of the entries of `fps` that expire. */
    async function expectIndexInStep(fps: readonly string[]): Promise<void> {
      if (harness.expiryIndex === undefined) return;
      const expected: Array<readonly [number, string]> = [];
      for (const fp of fps) {
        const entry = await store.read(fp);
        if (entry?.expiresAt != null) expected.push([entry.expiresAt, fp]);
      }
      const byKey = (a: readonly [number, string], b: readonly [number, string]) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
      expect([...(await harness.expiryIndex())].sort(byKey)).toEqual(expected.sort(byKey));
    }

    it("an expiry is kept while reserved or failed, dropped by every transition into a state without one", async () => {
      ok(await store.reserve("reserved", { now: T0, ttlMs: 100 }));
      const started = ok(await store.reserve("started", { now: T0, ttlMs: 10 }));
      ok(await store.startExecution("started", started.token, T0 + 1));
      const confirmed = ok(await store.reserve("confirmed", { now: T0, ttlMs: 10 }));
      ok(await store.confirm("confirmed", confirmed.token, T0 + 1));
      const pending = ok(await store.reserve("pending", { now: T0, ttlMs: 10 }));
      ok(await store.markPendingOverride("pending", pending.token, { why: "escalate" }, T0 + 1));
      const failed = ok(await store.reserve("failed", { now: T0, ttlMs: 10 }));
      ok(await store.fail("failed", failed.token, { now: T0 + 1, ttlMs: 50 }));
      const executingFailed = ok(await store.reserve("executing-failed", { now: T0, ttlMs: 10 }));
      ok(await store.startExecution("executing-failed", executingFailed.token, T0 + 1));
      ok(await store.fail("executing-failed", executingFailed.token, { now: T0 + 2, ttlMs: 200 }));
      ok(await store.consume("consumed", { now: T0 }));
      ok(await store.consume("consumed-pending", { now: T0, context: { k: 1 } }));
      const fps = ["reserved", "started", "confirmed", "pending", "failed", "executing-failed", "consumed", "consumed-pending"];
      await expectIndexInStep(fps);

      // The reservations left behind expired long ago (TTL 10): the states they moved into keep them.
      expect(await store.sweep(T0 + 50)).toBe(0);
      expect(await store.sweep(T0 + 51)).toBe(1);
      expect(await store.read("failed")).toBeNull();
      expect(await store.sweep(T0 + 100)).toBe(1);
      expect(await store.read("reserved")).toBeNull();
      expect(await store.sweep(T0 + 201)).toBe(0);
      expect(await store.sweep(T0 + 202)).toBe(1);
      expect(await store.sweep(T0 + 100 * YEAR)).toBe(0);
      for (const fp of ["started", "confirmed", "pending", "consumed", "consumed-pending"]) expect(await store.read(fp), fp).not.toBeNull();
      await expectIndexInStep(fps);
    });

    it("a take-over replaces the expiry it finds: reserve and consume of an expired reservation or failure", async () => {
      ok(await store.reserve("re-reserved", { now: T0, ttlMs: 10 }));
      ok(await store.reserve("re-reserved", { now: T0 + 10, ttlMs: 1_000 }));
      ok(await store.reserve("consumed", { now: T0, ttlMs: 10 }));
      ok(await store.consume("consumed", { now: T0 + 10 }));
      const token = await into(store, "failed", "failed");
      const freed = T0 + 2 + FAILED_TTL_MS;
      expect(ok(await store.reserve("failed", { now: freed, ttlMs: 5 })).token).not.toBe(token);
      const fps = ["re-reserved", "consumed", "failed"];
      await expectIndexInStep(fps);
      // The first reservations' expiries are gone with them: nothing expires at T0 + 10.
      expect(await store.sweep(T0 + 10)).toBe(0);
      expect(await store.sweep(T0 + 1_010)).toBe(1);
      expect(await store.read("consumed")).toMatchObject({ state: "consumed" });
      expect(await store.sweep(freed + 5)).toBe(1);
      expect(await store.read("failed")).toBeNull();
      await expectIndexInStep(fps);
    });

    it("expire takes the expiry with the entry; expire and sweep racing remove an entry once", async () => {
      ok(await store.reserve("expired", { now: T0, ttlMs: 10 }));
      expect(await store.expire("expired", T0 + 10)).toBe(true);
      await expectIndexInStep(["expired"]);
      expect(await store.sweep(T0 + 10)).toBe(0);
      await Promise.all(Array.from({ length: 20 }, (_, i) => store.reserve(`race-${i}`, { now: T0, ttlMs: 10 })));
      const fps = Array.from({ length: 20 }, (_, i) => `race-${i}`);
      const [swept, ...expired] = await Promise.all([store.sweep(T0 + 10), ...fps.map((fp) => store.expire(fp, T0 + 10))]);
      expect((swept as number) + expired.filter((e) => e === true).length).toBe(20);
      for (const fp of fps) expect(await store.read(fp)).toBeNull();
      await expectIndexInStep(fps);
    });
  });
}
