/**
 * The AuditLog contract (sidecar/src/audit/types.ts) as one suite that every backend runs:
 * `auditLogContract("lmdb", open)`. Decisions, overrides and confirmations are recorded as the sidecar records them,
 * through the replay store's transitions (runtime `TransitionRecord`); the other records through the log.
 */
import { confirmationKey, executionFingerprint, type ReplayStore, type TransitionRecord } from "@writ/runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AuditLog, SecurityEventInput } from "../../src/audit/types.js";
import { at, decision, type DecisionSpec } from "./support.js";

export interface AuditHarness {
  readonly log: AuditLog;
  /** The replay store that writes the log's transition records. */
  readonly replay: ReplayStore;
  dispose(): Promise<void>;
}

/** 2025-03-10T00:00:00Z, the origin of `at`. */
const DAY0 = Date.UTC(2025, 2, 10);
const QUERY = { limit: 50, offset: 0 } as const;
const EVENT: SecurityEventInput = {
  type: "authentication_failed",
  method: "GET",
  path: "/audit/stats",
  ip: "10.0.0.1",
  detail: "wrong key",
};

export function auditLogContract(label: string, open: () => Promise<AuditHarness>): void {
  describe(`AuditLog contract: ${label}`, () => {
    let h: AuditHarness;
    beforeEach(async () => {
      h = await open();
    });
    afterEach(() => h.dispose());

    async function decide(spec: DecisionSpec): Promise<void> {
      const record: TransitionRecord = { kind: "decision", body: decision(spec) };
      const context = spec.status === "pending_override" ? { pending: true } : undefined;
      const result = await h.replay.consume(executionFingerprint(spec.executionId), {
        now: Date.parse(spec.recordedAt),
        ...(context ? { context } : {}),
        record,
      });
      expect(result.ok).toBe(true);
    }

    it("lists decisions newest first, one millisecond's by fingerprint, with limit and offset", async () => {
      await decide({ executionId: "b", recordedAt: at(2) });
      await decide({ executionId: "old", recordedAt: at(1) });
      await decide({ executionId: "c", recordedAt: at(2) });
      await decide({ executionId: "new", recordedAt: at(3) });
      const sameMs = ["b", "c"].sort((x, y) => (executionFingerprint(y) < executionFingerprint(x) ? -1 : 1));
      expect((await h.log.listDecisions(QUERY)).map((r) => r.executionId)).toEqual(["new", ...sameMs, "old"]);
      expect((await h.log.listDecisions({ limit: 2, offset: 1 })).map((r) => r.executionId)).toEqual(sameMs);
      expect(await h.log.listDecisions({ limit: 5, offset: 4 })).toEqual([]);
    });

    it("pages through a stable set while newer decisions arrive, with `to` fixed at the first page's time", async () => {
      for (let i = 0; i < 30; i++) await decide({ executionId: `before-${i}`, recordedAt: at(100 + (i % 7)) });
      const to = DAY0 + 106;
      const seen: string[] = [];
      for (let page = 0; page < 4; page++) {
        seen.push(...(await h.log.listDecisions({ limit: 8, offset: page * 8, to })).map((r) => r.executionId));
        // Newer decisions arriving between pages.
        for (let i = 0; i < 5; i++) await decide({ executionId: `after-${page}-${i}`, recordedAt: at(107 + i) });
      }
      expect(seen).toHaveLength(30);
      expect([...seen].sort()).toEqual(Array.from({ length: 30 }, (_, i) => `before-${i}`).sort());
    });

    it("filters by policy, by decision, by both, and by inclusive time bounds", async () => {
      const specs: DecisionSpec[] = [
        { executionId: "p1-a", recordedAt: at(10), policyId: "p1", status: "approved" },
        { executionId: "p1-r", recordedAt: at(20), policyId: "p1", status: "rejected" },
        { executionId: "p2-a", recordedAt: at(30), policyId: "p2", status: "approved" },
        { executionId: "p2-p", recordedAt: at(40), policyId: "p2", status: "pending_override" },
      ];
      for (const spec of specs) await decide(spec);
      const ids = async (q: object) => (await h.log.listDecisions({ ...QUERY, ...q })).map((r) => r.executionId);
      expect(await ids({ policyId: "p1" })).toEqual(["p1-r", "p1-a"]);
      expect(await ids({ decision: "approved" })).toEqual(["p2-a", "p1-a"]);
      expect(await ids({ policyId: "p2", decision: "pending_override" })).toEqual(["p2-p"]);
      expect(await ids({ from: DAY0 + 20, to: DAY0 + 30 })).toEqual(["p2-a", "p1-r"]);
      expect(await ids({ decision: "approved", from: DAY0 + 11 })).toEqual(["p2-a"]);
      expect(await ids({ policyId: "p3" })).toEqual([]);
    });

    it("shows a decision with its override and confirmation, recorded by their own transitions", async () => {
      await decide({ executionId: "esc", recordedAt: at(5), status: "pending_override" });
      const fp = executionFingerprint("esc");
      const entry = await h.replay.read(fp);
      const override = {
        executionId: "esc",
        approved: true,
        approvedBy: "ana",
        approverRole: "ops",
        reason: "checked",
        overrideId: "o-1",
        record: { overrideId: "o-1" },
        recordedAt: at(6),
      };
      expect(
        (await h.replay.resolveOverride(fp, entry!.token, true, { now: DAY0 + 6, record: { kind: "override", body: override as never } }))
          .ok,
      ).toBe(true);
      const confirmation = { executionId: "esc", match: true, proof: { executionId: "esc", signature: "sig" }, recordedAt: at(7) };
      expect(
        (await h.replay.consume(confirmationKey("esc"), { now: DAY0 + 7, record: { kind: "confirmation", body: confirmation as never } }))
          .ok,
      ).toBe(true);
      const detail = await h.log.getDecision("esc");
      expect(detail).toMatchObject({
        executionId: "esc",
        decision: "pending_override",
        overrideResolution: "approved",
        confirmed: true,
        override,
        confirmation,
      });
      expect((await h.log.listDecisions(QUERY))[0]).toMatchObject({ executionId: "esc", overrideResolution: "approved", confirmed: true });
      expect(await h.log.getDecision("unknown")).toBeNull();
      expect(await h.log.getDecision("\ud800")).toBeNull();
    });

    it("counts decisions (today by UTC day), verifications, security events and API calls", async () => {
      await decide({ executionId: "yesterday", recordedAt: at(-1) });
      await decide({ executionId: "today-1", recordedAt: at(0) });
      await decide({ executionId: "today-2", recordedAt: at(86_399_999) });
      h.log.recordVerification({ executionId: "today-1", valid: true, checks: {}, errors: [], recordedAt: at(1) });
      h.log.recordVerification({ executionId: null, valid: false, checks: {}, errors: ["bad"], recordedAt: at(2) });
      h.log.recordSecurityEvent(EVENT);
      h.log.countApiCall();
      h.log.countApiCall();
      await h.log.flushed();
      expect(await h.log.stats(new Date(DAY0 + 1_000))).toEqual({
        total_decisions: "3",
        decisions_today: "2",
        total_verifications: "2",
        valid_verifications: "1",
        invalid_verifications: "1",
        total_security_events: "1",
        total_api_calls: "2",
      });
    });

    it("aggregates repeated security events of one source, lists them newest first, keeps no query string", async () => {
      h.log.recordSecurityEvent({ ...EVENT, path: "/audit/stats?api_key=secret" });
      h.log.recordSecurityEvent({
        ...EVENT,
        type: "replay_attempt",
        method: "POST",
        path: "/evaluate",
        executionId: "exec-9",
        detail: "INV-013",
      });
      for (let i = 0; i < 5; i++) h.log.recordSecurityEvent(EVENT);
      await h.log.flushed();
      const rows = await h.log.listSecurityEvents({ limit: 50 });
      expect(rows.map((r) => r.type)).toEqual(["replay_attempt", "authentication_failed"]);
      expect(rows[1]).toMatchObject({ path: "/audit/stats", ip: "10.0.0.1" });
      expect(rows[0]).toMatchObject({ executionId: "exec-9" });
      expect(new Set(rows.map((r) => r.id)).size).toBe(2);
      expect((await h.log.stats()).total_security_events).toBe("7");
      await h.log.close();
    });

    it("is healthy while open, unhealthy once closed", async () => {
      expect(h.log.healthy()).toBe(true);
      await h.log.close();
      expect(h.log.healthy()).toBe(false);
    });
  });
}
