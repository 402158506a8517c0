/**
 * The ReplayStore contract (replay-contract.ts): `reserve`, every transition of the lifecycle, and the refusals.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { ReplayStore } from "../replay/store.js";
import { FAILED_TTL_MS, RESERVATION_TTL_MS } from "../replay/store.js";
import { ALL_STATES, ALLOWED_FROM, OPS, T0, YEAR, into, ok, run, type StoreHarness } from "./replay-contract-support.js";

export function transitionCases(current: () => StoreHarness): void {
  let store: ReplayStore;
  beforeEach(() => {
    store = current().store;
  });

  describe("reserve", () => {
    it("creates a reserved entry with the 300 s default TTL and a fresh token", async () => {
      const entry = ok(await store.reserve("fp-1", { now: T0 }));
      expect(entry).toEqual({
        fingerprint: "fp-1",
        state: "reserved",
        token: expect.any(String),
        createdAt: T0,
        updatedAt: T0,
        expiresAt: T0 + RESERVATION_TTL_MS,
      });
      expect(RESERVATION_TTL_MS).toBe(300_000);
      expect(entry.token.length).toBeGreaterThanOrEqual(16);
      expect(await store.read("fp-1")).toEqual(entry);
      const other = ok(await store.reserve("fp-2", { now: T0 }));
      expect(other.token).not.toBe(entry.token);
    });

    it("uses Date.now() when no `now` is given", async () => {
      const before = Date.now();
      const entry = ok(await store.reserve("fp-clock"));
      const after = Date.now();
      expect(entry.createdAt).toBeGreaterThanOrEqual(before);
      expect(entry.createdAt).toBeLessThanOrEqual(after);
      expect(entry.expiresAt).toBe(entry.createdAt + RESERVATION_TTL_MS);
    });

    it("honours a custom TTL", async () => {
      const entry = ok(await store.reserve("fp", { ttlMs: 5_000, now: T0 }));
      expect(entry.expiresAt).toBe(T0 + 5_000);
      expect(await store.reserve("fp", { now: T0 + 4_999 })).toMatchObject({ ok: false, reason: "conflict" });
      expect(ok(await store.reserve("fp", { now: T0 + 5_000 })).createdAt).toBe(T0 + 5_000);
    });

    it("answers conflict (with the stored entry) while the reservation is live, up to its last millisecond", async () => {
      const first = ok(await store.reserve("fp", { now: T0 }));
      for (const now of [T0, T0 + 1, T0 + RESERVATION_TTL_MS - 1]) {
        const again = await store.reserve("fp", { now });
        expect(again).toEqual({ ok: false, reason: "conflict", entry: first });
      }
      expect(await store.read("fp")).toEqual(first);
    });

    it("replaces a reservation once its TTL has passed, with a new token; the old token is dead", async () => {
      const first = ok(await store.reserve("fp", { now: T0 }));
      const second = ok(await store.reserve("fp", { now: T0 + RESERVATION_TTL_MS }));
      expect(second.token).not.toBe(first.token);
      expect(second).toMatchObject({ state: "reserved", createdAt: T0 + RESERVATION_TTL_MS, expiresAt: T0 + 2 * RESERVATION_TTL_MS });
      expect(await store.startExecution("fp", first.token, T0 + RESERVATION_TTL_MS + 1)).toMatchObject({
        ok: false,
        reason: "token_mismatch",
      });
      ok(await store.startExecution("fp", second.token, T0 + RESERVATION_TTL_MS + 1));
    });

    it.each(["executing", "consumed", "pending_override", "rejected", "failed", "reserved"] as const)(
      "answers conflict for a fingerprint in state %s",
      async (state) => {
        await into(store, "fp", state);
        const stored = await store.read("fp");
        expect(await store.reserve("fp", { now: T0 + 3 })).toEqual({ ok: false, reason: "conflict", entry: stored });
      },
    );

    it("rejects invalid arguments", async () => {
      await expect(store.reserve("")).rejects.toBeInstanceOf(TypeError);
      await expect(store.reserve(42 as unknown as string)).rejects.toBeInstanceOf(TypeError);
      await expect(store.reserve("x".repeat(513))).rejects.toBeInstanceOf(RangeError);
      await expect(store.reserve("fp", { ttlMs: 0 })).rejects.toBeInstanceOf(RangeError);
      await expect(store.reserve("fp", { ttlMs: -1 })).rejects.toBeInstanceOf(RangeError);
      await expect(store.reserve("fp", { ttlMs: Number.NaN })).rejects.toBeInstanceOf(RangeError);
      await expect(store.reserve("fp", { now: Number.POSITIVE_INFINITY })).rejects.toBeInstanceOf(TypeError);
      expect(await store.read("fp")).toBeNull();
      ok(await store.reserve("x".repeat(512), { now: T0 }));
    });
  });

  describe("transitions", () => {
    it("reserved -> executing -> consumed", async () => {
      const { token } = ok(await store.reserve("fp", { now: T0 }));
      const executing = ok(await store.startExecution("fp", token, T0 + 10));
      expect(executing).toEqual({
        fingerprint: "fp",
        state: "executing",
        token,
        createdAt: T0,
        updatedAt: T0 + 10,
        expiresAt: null,
      });
      expect(await store.read("fp")).toEqual(executing);
      const consumed = ok(await store.confirm("fp", token, T0 + 20));
      expect(consumed).toEqual({ ...executing, state: "consumed", updatedAt: T0 + 20 });
      expect(await store.read("fp")).toEqual(consumed);
    });

    it("reserved -> consumed directly", async () => {
      const { token } = ok(await store.reserve("fp", { now: T0 }));
      expect(ok(await store.confirm("fp", token, T0 + 5))).toMatchObject({ state: "consumed", expiresAt: null, updatedAt: T0 + 5 });
    });

    it("an executing entry never expires (an execution with an unknown outcome stays blocked)", async () => {
      const token = await into(store, "fp", "executing");
      const later = T0 + 100 * YEAR;
      expect(await store.reserve("fp", { now: later })).toMatchObject({ ok: false, reason: "conflict" });
      expect(await store.expire("fp", later)).toBe(false);
      expect(await store.sweep(later)).toBe(0);
      expect(ok(await store.confirm("fp", token, later)).state).toBe("consumed");
    });

    it.each(["reserved", "executing"] as const)("%s -> failed blocks for the 30 s default, then frees the fingerprint", async (from) => {
      const token = await into(store, "fp", from);
      const failed = ok(await store.fail("fp", token, { now: T0 + 100 }));
      expect(FAILED_TTL_MS).toBe(30_000);
      expect(failed).toMatchObject({ state: "failed", token, createdAt: T0, updatedAt: T0 + 100, expiresAt: T0 + 100 + FAILED_TTL_MS });
      expect(await store.reserve("fp", { now: T0 + 100 + FAILED_TTL_MS - 1 })).toMatchObject({ ok: false, reason: "conflict" });
      const again = ok(await store.reserve("fp", { now: T0 + 100 + FAILED_TTL_MS }));
      expect(again.token).not.toBe(token);
      expect(again.state).toBe("reserved");
    });

    it("fail honours a custom TTL, including 0 (free at once)", async () => {
      const token = await into(store, "fp", "executing");
      expect(ok(await store.fail("fp", token, { ttlMs: 1_000, now: T0 + 10 })).expiresAt).toBe(T0 + 1_010);
      const token2 = await into(store, "fp2", "executing");
      expect(ok(await store.fail("fp2", token2, { ttlMs: 0, now: T0 + 10 })).expiresAt).toBe(T0 + 10);
      ok(await store.reserve("fp2", { now: T0 + 10 }));
      await expect(store.fail("fp3", "t", { ttlMs: -5 })).rejects.toBeInstanceOf(RangeError);
    });

    it.each(["reserved", "executing"] as const)("%s -> pending_override keeps the context as JSON", async (from) => {
      const token = await into(store, "fp", from);
      const context = { decisionId: "d-1", amount: 12.5, nested: { list: [1, "two", null], skipped: undefined }, at: new Date(T0) };
      const pending = ok(await store.markPendingOverride("fp", token, context, T0 + 50));
      const json = { decisionId: "d-1", amount: 12.5, nested: { list: [1, "two", null] }, at: new Date(T0).toISOString() };
      expect(pending).toEqual({
        fingerprint: "fp",
        state: "pending_override",
        token,
        createdAt: T0,
        updatedAt: T0 + 50,
        expiresAt: null,
        context: json,
      });
      context.nested.list.push(4);
      expect((await store.read("fp"))?.context).toEqual(json);
    });

    it("pending_override without a context stores none", async () => {
      const token = await into(store, "fp", "reserved");
      const pending = ok(await store.markPendingOverride("fp", token, undefined, T0 + 1));
      expect("context" in pending).toBe(false);
      await expect(store.markPendingOverride("fp2", "t", { big: 1n })).rejects.toBeInstanceOf(TypeError);
    });

    it("resolveOverride approved -> consumed, keeping the context", async () => {
      const token = await into(store, "fp", "pending_override");
      const consumed = ok(await store.resolveOverride("fp", token, true, { now: T0 + 99 }));
      expect(consumed).toMatchObject({ state: "consumed", token, updatedAt: T0 + 99, expiresAt: null, context: { why: "escalate" } });
      expect(await store.read("fp")).toEqual(consumed);
    });

    it("resolveOverride keeps the resolution beside the original context, durably readable", async () => {
      const token = await into(store, "fp", "pending_override");
      const record = { approved_by: "alice", approver_role: "risk-officer", reason: "known customer" };
      const consumed = ok(await store.resolveOverride("fp", token, true, { resolution: record, now: T0 + 99 }));
      expect(consumed).toMatchObject({ state: "consumed", context: { why: "escalate" }, resolution: record });
      expect(await store.read("fp")).toEqual(consumed);
      expect(Object.isFrozen((consumed as { resolution: object }).resolution)).toBe(true);
      await expect(store.resolveOverride("fp3", "t", true, { resolution: { big: 1n } })).rejects.toBeInstanceOf(TypeError);
    });

    it("resolveOverride rejected -> rejected; resolving again answers wrong_state", async () => {
      const token = await into(store, "fp", "pending_override");
      const rejected = ok(await store.resolveOverride("fp", token, false, { now: T0 + 99 }));
      expect(rejected).toMatchObject({ state: "rejected", expiresAt: null, context: { why: "escalate" } });
      expect(await store.resolveOverride("fp", token, true, { now: T0 + 100 })).toEqual({
        ok: false,
        reason: "wrong_state",
        entry: rejected,
      });
      expect(await store.resolveOverride("fp", token, false, { now: T0 + 100 })).toEqual({
        ok: false,
        reason: "wrong_state",
        entry: rejected,
      });
    });

    it("returned entries cannot be used to change the store", async () => {
      const entry = ok(await store.reserve("fp", { now: T0 }));
      expect(() => {
        (entry as { state: string }).state = "consumed";
      }).toThrow(TypeError);
      expect((await store.read("fp"))?.state).toBe("reserved");
    });
  });

  describe("refusals", () => {
    it.each(OPS)("%s of an unknown fingerprint answers not_found and stores nothing", async (op) => {
      expect(await run(store, op, "nope", "token", T0)).toEqual({ ok: false, reason: "not_found" });
      expect(await store.read("nope")).toBeNull();
    });

    it.each(OPS)("%s with a wrong token answers token_mismatch in every state", async (op) => {
      for (const state of ALL_STATES) {
        const fp = `fp-${state}`;
        await into(store, fp, state);
        const before = await store.read(fp);
        expect(await run(store, op, fp, "not-the-token", T0 + 3)).toEqual({ ok: false, reason: "token_mismatch", entry: before });
        expect(await store.read(fp)).toEqual(before);
      }
    });

    it.each(OPS)("%s from a state it does not leave answers wrong_state and changes nothing", async (op) => {
      const refused = ALL_STATES.filter((s) => !ALLOWED_FROM[op].includes(s));
      expect(refused.length).toBeGreaterThan(0);
      for (const state of refused) {
        const fp = `fp-${state}`;
        const token = await into(store, fp, state);
        const before = await store.read(fp);
        const refusal = await run(store, op, fp, token, T0 + 3);
        expect(refusal, `${op} from ${state}`).toEqual({ ok: false, reason: "wrong_state", entry: before });
        expect(await store.read(fp)).toEqual(before);
      }
      for (const state of ALLOWED_FROM[op]) {
        const fp = `fp-ok-${state}`;
        const token = await into(store, fp, state);
        ok(await run(store, op, fp, token, T0 + 3));
      }
    });

    it.each(OPS)("%s of an expired reservation answers not_found (the fingerprint is free)", async (op) => {
      const { token } = ok(await store.reserve("fp", { now: T0 }));
      expect(await run(store, op, "fp", token, T0 + RESERVATION_TTL_MS)).toEqual({ ok: false, reason: "not_found" });
      expect((await store.read("fp"))?.state).toBe("reserved");
    });

    it("a failed entry refuses transitions with its token: wrong_state while blocking, not_found once expired", async () => {
      const token = await into(store, "fp", "failed");
      expect(await store.confirm("fp", token, T0 + 3)).toMatchObject({ ok: false, reason: "wrong_state" });
      expect(await store.confirm("fp", token, T0 + 2 + FAILED_TTL_MS)).toEqual({ ok: false, reason: "not_found" });
    });

    it("rejects an invalid token or approved argument", async () => {
      const token = await into(store, "fp", "pending_override");
      await expect(store.confirm("fp", undefined as unknown as string)).rejects.toBeInstanceOf(TypeError);
      await expect(store.resolveOverride("fp", token, "yes" as unknown as boolean)).rejects.toBeInstanceOf(TypeError);
      expect((await store.read("fp"))?.state).toBe("pending_override");
    });
  });
}
