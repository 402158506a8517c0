/**
 * The ReplayStore contract (replay-contract.ts): INV-013, `read`, `consume` with the records kept exactly with their transitions, concurrency, and `close`.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { ReplayStoreClosedError } from "../replay/errors.js";
import type { ReplayResult, ReplayStore } from "../replay/store.js";
import { FAILED_TTL_MS, RESERVATION_TTL_MS } from "../replay/store.js";
import { OPS, T0, YEAR, decisionRecord, into, ok, overrideRecord, run, type StoreHarness } from "./replay-contract-support.js";

export function consumptionCases(current: () => StoreHarness): void {
  let store: ReplayStore;
  let harness: StoreHarness;
  beforeEach(() => {
    harness = current();
    store = harness.store;
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
}
