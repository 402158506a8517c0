/**
 * The ReplayStore contract (runtime/src/replay/store.ts, spec 2.12, docs/replay.md) as one suite that
 * every implementation runs: `replayStoreContract("memory", factory)`. Time is passed explicitly through the
 * `now` parameters; nothing sleeps.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ReplayStoreClosedError } from "../replay/errors.js";
import type { DecisionAuditRecord, OverrideAuditRecord, TransitionRecord } from "../replay/records.js";
import type { ReplayEntry, ReplayResult, ReplayState, ReplayStore } from "../replay/store.js";
import { FAILED_TTL_MS, RESERVATION_TTL_MS } from "../replay/store.js";

export interface StoreHarness {
  readonly store: ReplayStore;
  /** Called after `store.close()`; removes whatever the factory created (e.g. a temporary directory). */
  dispose(): Promise<void>;
  /** The transition records the store has kept so far (records.ts), in any order, read back from where it keeps them. */
  records(): Promise<readonly TransitionRecord[]>;
  /**
   * The keys of the store's expiry index as stored, `[expiresAt, fingerprint]`, for a store that keeps one as data of
   * its own (LMDB); absent where the index is the engine's (PostgreSQL) or lazy, in memory. When present, the suite
   * checks it holds exactly the stored entries that expire.
   */
  expiryIndex?(): Promise<ReadonlyArray<readonly [number, string]>>;
}

/** A decision record as the authorizer hands it over; only the members a store indexes need to be real. */
export function decisionRecord(executionId: string, at = T0): TransitionRecord {
  const body = {
    executionId,
    endpoint: "evaluate",
    status: "approved",
    ruleMatched: "r1",
    attestation: { policyId: "payments", execution_fingerprint: executionId },
    recordedAt: new Date(at).toISOString(),
  };
  return { kind: "decision", body: body as unknown as DecisionAuditRecord };
}

export function overrideRecord(executionId: string, approved: boolean, by: string, at = T0): TransitionRecord {
  const body = {
    executionId,
    approved,
    approvedBy: by,
    approverRole: "ops",
    reason: "checked",
    overrideId: `o-${by}`,
    record: {},
    recordedAt: new Date(at).toISOString(),
  };
  return { kind: "override", body: body as unknown as OverrideAuditRecord };
}

export const T0 = 1_700_000_000_000;
const YEAR = 365 * 24 * 3600 * 1000;

export function ok(result: ReplayResult): ReplayEntry {
  if (!result.ok) throw new Error(`expected ok, got ${result.reason}`);
  return result.entry;
}

/** Brings `fp` into `state` at time T0 (+1 ms per step); returns the token. */
export async function into(store: ReplayStore, fp: string, state: ReplayState): Promise<string> {
  const { token } = ok(await store.reserve(fp, { now: T0 }));
  switch (state) {
    case "reserved":
      break;
    case "executing":
      ok(await store.startExecution(fp, token, T0 + 1));
      break;
    case "consumed":
      ok(await store.startExecution(fp, token, T0 + 1));
      ok(await store.confirm(fp, token, T0 + 2));
      break;
    case "failed":
      ok(await store.startExecution(fp, token, T0 + 1));
      ok(await store.fail(fp, token, { now: T0 + 2 }));
      break;
    case "pending_override":
      ok(await store.markPendingOverride(fp, token, { why: "escalate" }, T0 + 1));
      break;
    case "rejected":
      ok(await store.markPendingOverride(fp, token, { why: "escalate" }, T0 + 1));
      ok(await store.resolveOverride(fp, token, false, { now: T0 + 2 }));
      break;
  }
  return token;
}

const ALL_STATES: readonly ReplayState[] = ["reserved", "executing", "consumed", "failed", "pending_override", "rejected"];
const FINAL_OR_BLOCKING: readonly ReplayState[] = ["executing", "consumed", "pending_override", "rejected"];

type Op = "startExecution" | "confirm" | "fail" | "markPendingOverride" | "resolveOverride";
const OPS: readonly Op[] = ["startExecution", "confirm", "fail", "markPendingOverride", "resolveOverride"];
const ALLOWED_FROM: Record<Op, readonly ReplayState[]> = {
  startExecution: ["reserved"],
  confirm: ["reserved", "executing"],
  fail: ["reserved", "executing"],
  markPendingOverride: ["reserved", "executing"],
  resolveOverride: ["pending_override"],
};

function run(store: ReplayStore, op: Op, fp: string, token: string, now: number): Promise<ReplayResult> {
  switch (op) {
    case "startExecution":
      return store.startExecution(fp, token, now);
    case "confirm":
      return store.confirm(fp, token, now);
    case "fail":
      return store.fail(fp, token, { now });
    case "markPendingOverride":
      return store.markPendingOverride(fp, token, { k: 1 }, now);
    case "resolveOverride":
      return store.resolveOverride(fp, token, true, { now });
  }
}

export function replayStoreContract(label: string, create: () => Promise<StoreHarness>): void {
  describe(`ReplayStore contract: ${label}`, () => {
    let harness: StoreHarness;
    let store: ReplayStore;

    beforeEach(async () => {
      harness = await create();
      store = harness.store;
    });
    afterEach(async () => {
      await store.close();
      await harness.dispose();
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
        const byKey = (a: readonly [number, string], b: readonly [number, string]) =>
          a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
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
        for (const fp of ["started", "confirmed", "pending", "consumed", "consumed-pending"])
          expect(await store.read(fp), fp).not.toBeNull();
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

    describe("INV-013: a consumed fingerprint is consumed once", () => {
      const paths: ReadonlyArray<readonly [string, (fp: string) => Promise<void>]> = [
        ["confirm", async (fp) => void (await into(store, fp, "consumed"))],
        ["confirm from reserved", async (fp) => void ok(await store.confirm(fp, await into(store, fp, "reserved"), T0 + 1))],
        [
          "approved override",
          async (fp) => void ok(await store.resolveOverride(fp, await into(store, fp, "pending_override"), true, { now: T0 + 2 })),
        ],
      ];
      it.each(paths)("after %s, no reserve ever succeeds again, long past any TTL", async (_name, consume) => {
        await consume("fp");
        const consumed = await store.read("fp");
        expect(consumed?.state).toBe("consumed");
        for (const now of [T0 + 3, T0 + RESERVATION_TTL_MS, T0 + FAILED_TTL_MS + 10, T0 + RESERVATION_TTL_MS * 2 + 1, T0 + 100 * YEAR]) {
          expect(await store.reserve("fp", { now })).toEqual({ ok: false, reason: "conflict", entry: consumed });
          expect(await store.reserve("fp", { now, ttlMs: 1 })).toMatchObject({ ok: false, reason: "conflict" });
          expect(await store.expire("fp", now)).toBe(false);
          expect(await store.sweep(now)).toBe(0);
        }
        for (const op of OPS) {
          expect(await run(store, op, "fp", consumed?.token ?? "", T0 + 100 * YEAR)).toMatchObject({ ok: false, reason: "wrong_state" });
        }
        expect(await store.read("fp")).toEqual(consumed);
      });

      it.each(["rejected", "pending_override"] as const)("a %s fingerprint is never reservable again either", async (state) => {
        await into(store, "fp", state);
        expect(await store.reserve("fp", { now: T0 + 100 * YEAR })).toMatchObject({ ok: false, reason: "conflict", entry: { state } });
        expect(await store.sweep(T0 + 100 * YEAR)).toBe(0);
      });
    });

    describe("read", () => {
      it("answers null for an unknown fingerprint and the entry otherwise", async () => {
        expect(await store.read("nope")).toBeNull();
        const token = await into(store, "fp", "pending_override");
        expect(await store.read("fp")).toEqual({
          fingerprint: "fp",
          state: "pending_override",
          token,
          createdAt: T0,
          updatedAt: T0 + 1,
          expiresAt: null,
          context: { why: "escalate" },
        });
      });

      it("keeps fingerprints apart, including unusual characters", async () => {
        const fps = ["a", "A", "a ", "é", "😀", "sha256:" + "0".repeat(64), "a/b", "a\u0000b"];
        for (const fp of fps) ok(await store.reserve(fp, { now: T0 }));
        for (const fp of fps) expect((await store.read(fp))?.fingerprint).toBe(fp);
      });
    });

    describe("consume", () => {
      it("creates a consumed entry in one step, never expiring; a second consume conflicts", async () => {
        const entry = ok(await store.consume("fp-c", { now: T0 }));
        expect(entry).toEqual({
          fingerprint: "fp-c",
          state: "consumed",
          token: expect.any(String),
          createdAt: T0,
          updatedAt: T0,
          expiresAt: null,
        });
        expect(await store.read("fp-c")).toEqual(entry);
        expect(await store.consume("fp-c", { now: T0 + 10 * RESERVATION_TTL_MS })).toEqual({ ok: false, reason: "conflict", entry });
        expect(await store.reserve("fp-c", { now: T0 + 10 * RESERVATION_TTL_MS })).toEqual({ ok: false, reason: "conflict", entry });
      });

      it("with a context creates a pending override that resolves once", async () => {
        const entry = ok(await store.consume("fp-p", { context: { k: "v" }, now: T0 }));
        expect(entry).toMatchObject({ state: "pending_override", context: { k: "v" }, expiresAt: null });
        ok(await store.resolveOverride("fp-p", entry.token, true, { resolution: { by: "h" }, now: T0 + 1 }));
        expect(await store.resolveOverride("fp-p", entry.token, true, { now: T0 + 2 })).toMatchObject({ ok: false, reason: "wrong_state" });
      });

      it("conflicts with a live reservation and takes over an expired one", async () => {
        const reserved = ok(await store.reserve("fp-r", { now: T0 }));
        expect(await store.consume("fp-r", { now: T0 + 1 })).toEqual({ ok: false, reason: "conflict", entry: reserved });
        const taken = ok(await store.consume("fp-r", { now: T0 + RESERVATION_TTL_MS }));
        expect(taken.state).toBe("consumed");
        expect(await store.confirm("fp-r", reserved.token, T0 + RESERVATION_TTL_MS)).toMatchObject({ ok: false, reason: "token_mismatch" });
      });

      it("keeps a consumption's record exactly with it: 200 racing consumes, one record, the winner's", async () => {
        const results = await Promise.all(
          Array.from({ length: 200 }, (_, i) => store.consume("fp-a", { now: T0, record: decisionRecord(`exec-a`, T0 + i) })),
        );
        const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
        expect(winners).toHaveLength(1);
        expect(await harness.records()).toEqual([decisionRecord("exec-a", T0 + winners[0]!)]);
        // An expired reservation taken over keeps the same guarantee; a refused consumption keeps nothing.
        ok(await store.reserve("fp-b", { now: T0, ttlMs: 1 }));
        ok(await store.consume("fp-b", { now: T0 + 5, record: decisionRecord("exec-b") }));
        expect(await store.consume("fp-b", { now: T0 + 6, record: decisionRecord("exec-c") })).toMatchObject({ ok: false });
        const kept = (await harness.records()).map((r) => r.body.executionId).sort();
        expect(kept).toEqual(["exec-a", "exec-b"]);
      });

      it("keeps resolveOverride's record with the winning resolution only", async () => {
        const token = await into(store, "fp-ra", "pending_override");
        const racing = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            store.resolveOverride("fp-ra", token, i % 2 === 0, {
              now: T0 + 1,
              record: overrideRecord("exec-ra", i % 2 === 0, `approver-${i}`),
            }),
          ),
        );
        const winners = racing.flatMap((r, i) => (r.ok ? [i] : []));
        expect(winners).toHaveLength(1);
        expect(
          await store.resolveOverride("fp-ra", "wrong", true, { now: T0 + 2, record: overrideRecord("exec-ra", true, "late") }),
        ).toMatchObject({ ok: false });
        const w = winners[0]!;
        expect(await harness.records()).toEqual([overrideRecord("exec-ra", w % 2 === 0, `approver-${w}`)]);
      });
    });

    describe("concurrency", () => {
      it("1,000 concurrent consumes of one fingerprint: exactly one ok", async () => {
        const results = await Promise.all(Array.from({ length: 1_000 }, () => store.consume("hot-c", { now: T0 })));
        expect(results.filter((r) => r.ok)).toHaveLength(1);
        const winner = ok(results.find((r) => r.ok)!);
        for (const r of results) if (!r.ok) expect(r).toEqual({ ok: false, reason: "conflict", entry: winner });
      });

      it("1,000 concurrent reserves of one fingerprint: exactly one ok, 999 conflicts naming the winner", async () => {
        const results = await Promise.all(Array.from({ length: 1_000 }, () => store.reserve("hot", { now: T0 })));
        const wins = results.filter((r) => r.ok);
        expect(wins).toHaveLength(1);
        const winner = ok(wins[0] as ReplayResult);
        for (const r of results) if (!r.ok) expect(r).toEqual({ ok: false, reason: "conflict", entry: winner });
        expect(await store.read("hot")).toEqual(winner);
      });

      it("concurrent transitions with the right token: exactly one confirm, one resolveOverride wins", async () => {
        const token = await into(store, "fp", "executing");
        const confirms = await Promise.all(Array.from({ length: 200 }, () => store.confirm("fp", token, T0 + 5)));
        expect(confirms.filter((r) => r.ok)).toHaveLength(1);
        expect(confirms.filter((r) => !r.ok && r.reason === "wrong_state")).toHaveLength(199);

        const t2 = await into(store, "fp2", "pending_override");
        const resolutions = await Promise.all(
          Array.from({ length: 200 }, (_, i) => store.resolveOverride("fp2", t2, i % 2 === 0, { now: T0 + 5 })),
        );
        expect(resolutions.filter((r) => r.ok)).toHaveLength(1);
      });

      it("a freed fingerprint is won once by concurrent re-reservers", async () => {
        await into(store, "fp", "failed");
        const after = T0 + 2 + FAILED_TTL_MS;
        const results = await Promise.all(
          Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? store.expire("fp", after) : store.reserve("fp", { now: after }))),
        );
        expect(results.filter((r) => typeof r !== "boolean" && r.ok)).toHaveLength(1);
        expect((await store.read("fp"))?.state).toBe("reserved");
      });
    });

    describe("close", () => {
      it("rejects every operation after close, and close is idempotent", async () => {
        const token = await into(store, "fp", "reserved");
        await store.close();
        await store.close();
        await expect(store.reserve("x")).rejects.toBeInstanceOf(ReplayStoreClosedError);
        await expect(store.startExecution("fp", token)).rejects.toBeInstanceOf(ReplayStoreClosedError);
        await expect(store.confirm("fp", token)).rejects.toBeInstanceOf(ReplayStoreClosedError);
        await expect(store.fail("fp", token)).rejects.toBeInstanceOf(ReplayStoreClosedError);
        await expect(store.markPendingOverride("fp", token, {})).rejects.toBeInstanceOf(ReplayStoreClosedError);
        await expect(store.resolveOverride("fp", token, true)).rejects.toBeInstanceOf(ReplayStoreClosedError);
        await expect(store.expire("fp")).rejects.toBeInstanceOf(ReplayStoreClosedError);
        await expect(store.sweep()).rejects.toBeInstanceOf(ReplayStoreClosedError);
        await expect(store.read("fp")).rejects.toBeInstanceOf(ReplayStoreClosedError);
      });
    });
  });
}
