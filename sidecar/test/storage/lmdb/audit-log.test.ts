import { executionFingerprint } from "@writ/runtime";
import { DEFAULT_RECOVERY_HOLD_MS, LmdbReplayStore } from "@writ/runtime/lmdb";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { openDecisionRecords } from "../../../src/storage/lmdb/decision-records.js";
import { AUDIT_DATABASES, LmdbAuditLog } from "../../../src/storage/lmdb/audit-log.js";
import type { ConfirmationAudit, OverrideAudit, SecurityEventInput } from "../../../src/audit/types.js";
import { at, decision, tempEnv, type TempEnv } from "../../audit/support.js";

const T0 = Date.UTC(2025, 2, 10);
const QUERY = { limit: 50, offset: 0 } as const;

/** The log stores an override record and a proof as given, without reading them: stand-ins of a few members do. */
const standIn = <T>(value: object): T => value as T;

function override(executionId: string, approved: boolean): OverrideAudit {
  return {
    executionId,
    approved,
    approvedBy: "alice",
    approverRole: "risk-officer",
    reason: "checked by phone",
    overrideId: approved ? `ovr-${executionId}` : null,
    record: standIn({ executionId, approved }),
    recordedAt: at(5_000),
  };
}

function confirmation(executionId: string, match = true): ConfirmationAudit {
  return { executionId, match, proof: standIn({ executionId, match, signature: "cHJvb2Y=" }), recordedAt: at(6_000) };
}

const EVENT: SecurityEventInput = {
  type: "authentication_failed",
  method: "GET",
  path: "/audit/stats",
  ip: "127.0.0.1",
  detail: "bearer token missing",
};

describe("LmdbAuditLog", () => {
  let env: TempEnv;
  let log: LmdbAuditLog;
  let clock: number;
  const onError = vi.fn();

  beforeEach(async () => {
    env = await tempEnv();
    clock = T0;
    onError.mockClear();
    log = new LmdbAuditLog(env.root, { now: () => new Date(clock), onError });
  });

  afterEach(async () => {
    await log.close();
    await env.dispose();
  });

  describe("decisions", () => {
    it("reads a recorded decision back as a row and as a detail", async () => {
      const entry = decision({
        executionId: "exec-1",
        recordedAt: at(1),
        status: "pending_override",
        signalProvenance: { amount: { source: "ledger" } },
      });
      log.recordDecision(entry);
      await log.flushed();

      const row = {
        executionId: "exec-1",
        execution_fingerprint: entry.attestation.execution_fingerprint,
        policyId: "payments",
        policyVersion: "1.2.0",
        decision: "pending_override",
        action: "escalate",
        reason: "reason of exec-1",
        ruleMatched: "rule-pending_override",
        execution_state: "pending_override",
        signalsHash: "b".repeat(64),
        signerKeyId: "key-1",
        endpoint: "evaluate",
        overrideResolution: null,
        confirmed: false,
        recordedAt: at(1),
      };
      expect(await log.listDecisions(QUERY)).toEqual([row]);
      expect(await log.getDecision("exec-1")).toEqual({
        ...row,
        attestation: entry.attestation,
        signalProvenance: { amount: { source: "ledger" } },
        override: null,
        confirmation: null,
      });
      expect(log.healthy()).toBe(true);
    });

    it("reads the legacy attestation shape (flat provenance, outcome as the decision)", async () => {
      log.recordDecision(decision({ executionId: "legacy", recordedAt: at(1), status: "rejected", legacy: true }));
      expect(await log.getDecision("legacy")).toMatchObject({
        endpoint: "execute",
        action: "reject",
        decision: "rejected",
        signerKeyId: "legacy-key",
        signalProvenance: null,
      });
    });

    it("stores only the declared fields of a record", async () => {
      log.recordDecision({ ...decision({ executionId: "extra", recordedAt: at(1) }), apiKey: "secret" } as never);
      await log.flushed();
      const raw = openDecisionRecords<Record<string, unknown>, [number, string]>(env.root);
      const stored = raw.get([Date.parse(at(1)), executionFingerprint("extra")]);
      expect(Object.keys(stored ?? {}).sort()).toEqual(["attestation", "endpoint", "executionId", "recordedAt", "ruleMatched", "status"]);
    });

    it("answers null for an unknown executionId, and for one that cannot have a fingerprint", async () => {
      expect(await log.getDecision("missing")).toBeNull();
      expect(await log.getDecision("lone \uD800 surrogate")).toBeNull();
      expect(log.healthy()).toBe(true);
    });

    it("keys records by fingerprint, so an executionId longer than an LMDB key is fine", async () => {
      const id = "x".repeat(10_000);
      log.recordDecision(decision({ executionId: id, recordedAt: at(1) }));
      log.recordOverride(override(id, true));
      expect(await log.getDecision(id)).toMatchObject({ executionId: id, overrideResolution: "approved" });
      expect(log.healthy()).toBe(true);
    });

    it("lists newest first, decisions of one millisecond by fingerprint (their index key)", async () => {
      log.recordDecision(decision({ executionId: "b", recordedAt: at(2) }));
      log.recordDecision(decision({ executionId: "old", recordedAt: at(1) }));
      log.recordDecision(decision({ executionId: "c", recordedAt: at(2) }));
      log.recordDecision(decision({ executionId: "new", recordedAt: at(3) }));
      const sameMs = ["b", "c"].sort((x, y) => (executionFingerprint(y) < executionFingerprint(x) ? -1 : 1));
      expect((await log.listDecisions(QUERY)).map((r) => r.executionId)).toEqual(["new", ...sameMs, "old"]);
    });

    it("keeps one decision per executionId: the replay store's consume, which one caller wins, records it", async () => {
      const store = log.recording(new LmdbReplayStore(env.root));
      const consume = (status: "approved" | "rejected", ms: number) =>
        store.consume(executionFingerprint("dup"), {
          now: T0 + ms,
          record: { kind: "decision", body: decision({ executionId: "dup", recordedAt: at(ms), status }) },
        });
      const [first, second] = await Promise.all([consume("approved", 1), consume("rejected", 2)]);
      expect([first.ok, second.ok]).toEqual([true, false]);
      expect(await log.listDecisions(QUERY)).toMatchObject([{ executionId: "dup", decision: "approved" }]);
      expect((await log.stats()).total_decisions).toBe("1");
    });

    it("finds a decision at the instant `decisionInstant` names, without walking the trail", async () => {
      const instants = new Map<string, number>();
      const located = new LmdbAuditLog(env.root, { decisionInstant: async (fp) => instants.get(fp) });
      located.recordDecision(decision({ executionId: "here", recordedAt: at(7) }));
      await located.flushed();
      expect(await located.getDecision("here")).toBeNull(); // no instant known: not looked for anywhere else
      instants.set(executionFingerprint("here"), T0 + 8);
      expect(await located.getDecision("here")).toBeNull(); // a wrong instant finds nothing
      instants.set(executionFingerprint("here"), T0 + 7);
      expect(await located.getDecision("here")).toMatchObject({ executionId: "here" });
      await located.close();
    });

    it("filters by policyId, decision and an inclusive time range", async () => {
      log.recordDecision(decision({ executionId: "p-1", policyId: "payments", status: "approved", recordedAt: at(1_000) }));
      log.recordDecision(decision({ executionId: "r-1", policyId: "refunds", status: "rejected", recordedAt: at(2_000) }));
      log.recordDecision(decision({ executionId: "p-2", policyId: "payments", status: "rejected", recordedAt: at(3_000) }));
      log.recordDecision(decision({ executionId: "p-3", policyId: "payments", status: "pending_override", recordedAt: at(4_000) }));
      const ids = async (q: object): Promise<string[]> => (await log.listDecisions({ ...QUERY, ...q })).map((r) => r.executionId);

      expect(await ids({ policyId: "payments" })).toEqual(["p-3", "p-2", "p-1"]);
      expect(await ids({ decision: "rejected" })).toEqual(["p-2", "r-1"]);
      expect(await ids({ policyId: "payments", decision: "rejected" })).toEqual(["p-2"]);
      expect(await ids({ from: T0 + 2_000, to: T0 + 3_000 })).toEqual(["p-2", "r-1"]);
      expect(await ids({ from: T0 + 2_001, to: T0 + 2_999 })).toEqual([]);
      expect(await ids({ from: T0 + 3_000 })).toEqual(["p-3", "p-2"]);
      expect(await ids({ to: T0 + 1_000 })).toEqual(["p-1"]);
      expect(await ids({ from: T0 + 3_000, to: T0 + 2_000 })).toEqual([]);
      expect(await ids({ policyId: "absent" })).toEqual([]);
    });

    it("pages with offset and limit", async () => {
      for (let i = 0; i < 10; i += 1)
        log.recordDecision(decision({ executionId: `e${i}`, recordedAt: at(i), status: i % 2 === 0 ? "approved" : "rejected" }));
      const ids = async (q: object): Promise<string[]> => (await log.listDecisions({ ...QUERY, ...q })).map((r) => r.executionId);
      expect(await ids({ limit: 3 })).toEqual(["e9", "e8", "e7"]);
      expect(await ids({ limit: 3, offset: 3 })).toEqual(["e6", "e5", "e4"]);
      expect(await ids({ limit: 3, offset: 9 })).toEqual(["e0"]);
      expect(await ids({ limit: 3, offset: 10 })).toEqual([]);
      expect(await ids({ decision: "approved", limit: 2, offset: 1 })).toEqual(["e6", "e4"]);
    });

    it("walks only as far as the page needs", async () => {
      const yielded = { count: 0 };
      // Count the keys of the time index (the records' own keys) the log reads, by wrapping the records database's getKeys.
      const openDB = env.root.openDB.bind(env.root);
      const spied = Object.assign(Object.create(env.root) as typeof env.root, {
        openDB: (name: string, options: object) => {
          const db = openDB(name, options);
          if (name !== AUDIT_DATABASES.decisionRecords) return db;
          const getKeys = db.getKeys.bind(db);
          return Object.assign(Object.create(db) as typeof db, {
            getKeys: (o: object) => getKeys(o).map((key) => ((yielded.count += 1), key)),
          });
        },
      });
      const spiedLog = new LmdbAuditLog(spied);
      for (let i = 0; i < 200; i += 1)
        spiedLog.recordDecision(decision({ executionId: `e${i}`, recordedAt: at(i), status: i % 2 === 0 ? "approved" : "rejected" }));

      expect(await spiedLog.listDecisions({ limit: 5, offset: 10 })).toHaveLength(5);
      expect(yielded.count).toBe(5);
      yielded.count = 0;
      expect(await spiedLog.listDecisions({ limit: 5, offset: 10, decision: "approved" })).toHaveLength(5);
      expect(yielded.count).toBeLessThanOrEqual(31);
      await spiedLog.close();
    });
  });

  describe("overrides and confirmations", () => {
    it("keeps them beside the decision, which stays as recorded", async () => {
      const entry = decision({ executionId: "esc", recordedAt: at(1), status: "pending_override" });
      log.recordDecision(entry);
      log.recordOverride(override("esc", true));
      log.recordConfirmation(confirmation("esc"));

      const detail = await log.getDecision("esc");
      expect(detail).toMatchObject({
        decision: "pending_override",
        action: "escalate",
        overrideResolution: "approved",
        confirmed: true,
        attestation: entry.attestation,
      });
      expect(detail?.override).toEqual(override("esc", true));
      expect(detail?.confirmation).toEqual(confirmation("esc"));
      expect(await log.listDecisions(QUERY)).toMatchObject([
        { executionId: "esc", decision: "pending_override", overrideResolution: "approved", confirmed: true },
      ]);
    });

    // Once each: the replay store's transition that resolves the override (or consumes the confirmation key), which
    // one caller wins, records it (contract tests of `alongside`, runtime/test/replay).
    it("reports a rejected override and a failed match beside the decision", async () => {
      log.recordDecision(decision({ executionId: "esc", recordedAt: at(1), status: "pending_override" }));
      log.recordOverride(override("esc", false));
      log.recordConfirmation(confirmation("esc", false));
      expect(await log.getDecision("esc")).toMatchObject({
        overrideResolution: "rejected",
        override: { approved: false },
        confirmation: { match: false },
      });
    });

    it("stores them when the decision is absent, and shows them once it exists", async () => {
      log.recordOverride(override("late", true));
      log.recordConfirmation(confirmation("late"));
      expect(await log.getDecision("late")).toBeNull();
      expect(await log.listDecisions(QUERY)).toEqual([]);
      expect((await log.stats()).total_decisions).toBe("0");

      log.recordDecision(decision({ executionId: "late", recordedAt: at(1), status: "pending_override" }));
      expect(await log.getDecision("late")).toMatchObject({ overrideResolution: "approved", confirmed: true });
    });
  });

  describe("security events", () => {
    it("gives each event a time-ordered id and its time, and lists newest first", async () => {
      log.recordSecurityEvent(EVENT);
      clock += 10;
      log.recordSecurityEvent({
        ...EVENT,
        type: "replay_attempt",
        method: "POST",
        path: "/evaluate",
        executionId: "exec-9",
        detail: "INV-013",
      });
      log.recordSecurityEvent({ ...EVENT, type: "rate_limited" });

      expect(await log.listSecurityEvents({ limit: 10 })).toEqual([
        { ...EVENT, type: "rate_limited", id: `${T0 + 10}-2`, at: at(10) },
        {
          ...EVENT,
          type: "replay_attempt",
          method: "POST",
          path: "/evaluate",
          executionId: "exec-9",
          detail: "INV-013",
          id: `${T0 + 10}-1`,
          at: at(10),
        },
        { ...EVENT, id: `${T0}-0`, at: at(0) },
      ]);
    });

    it("filters by an inclusive time range and limits", async () => {
      for (let i = 0; i < 5; i += 1) {
        clock = T0 + i * 1_000;
        log.recordSecurityEvent({ ...EVENT, ip: `10.0.0.${i}`, detail: `event ${i}` });
      }
      const details = async (q: object): Promise<string[]> => (await log.listSecurityEvents({ limit: 10, ...q })).map((e) => e.detail);
      expect(await details({ from: T0 + 1_000, to: T0 + 3_000 })).toEqual(["event 3", "event 2", "event 1"]);
      expect(await details({ limit: 2 })).toEqual(["event 4", "event 3"]);
      expect(await details({ to: T0 })).toEqual(["event 0"]);
    });

    it("stores the declared fields only, clipped, with the query string cut off", async () => {
      log.recordSecurityEvent({
        ...EVENT,
        path: "/audit/decisions?api_key=secret",
        detail: "d".repeat(10_000),
        body: "{secret}",
      } as SecurityEventInput);
      const [row] = await log.listSecurityEvents({ limit: 1 });
      expect(row?.path).toBe("/audit/decisions");
      expect(row?.detail).toHaveLength(512);
      expect(JSON.stringify(row)).not.toContain("secret");
    });
  });

  describe("stats", () => {
    it("counts every record type, as decimal strings", async () => {
      log.recordDecision(decision({ executionId: "a", recordedAt: at(1) }));
      log.recordDecision(decision({ executionId: "b", recordedAt: at(2) }));
      log.recordVerification({ executionId: "a", valid: true, checks: { signature: "verified" }, errors: [], recordedAt: at(3) });
      log.recordVerification({
        executionId: null,
        valid: false,
        checks: { signature: "failed" },
        errors: ["bad signature"],
        recordedAt: at(4),
      });
      log.recordVerification({
        executionId: "b",
        valid: false,
        checks: { signature: "failed" },
        errors: ["bad signature"],
        recordedAt: at(4),
      });
      log.recordSecurityEvent(EVENT);
      log.countApiCall();
      log.countApiCall();

      expect(await log.stats(new Date(T0 + 60_000))).toEqual({
        total_decisions: "2",
        decisions_today: "2",
        total_verifications: "3",
        valid_verifications: "1",
        invalid_verifications: "2",
        total_security_events: "1",
        total_api_calls: "2",
      });
    });

    it("counts today's decisions by the UTC day of `now`, across midnight", async () => {
      const midnight = T0 + 86_400_000;
      log.recordDecision(decision({ executionId: "before", recordedAt: new Date(midnight - 1).toISOString() }));
      log.recordDecision(decision({ executionId: "at", recordedAt: new Date(midnight).toISOString() }));
      // 01:30 at +02:00 is 23:30 UTC of the day before midnight.
      log.recordDecision(decision({ executionId: "offset", recordedAt: "2025-03-11T01:30:00+02:00" }));
      log.recordDecision(decision({ executionId: "next", recordedAt: new Date(midnight + 86_400_000).toISOString() }));

      const today = async (now: number): Promise<string> => (await log.stats(new Date(now))).decisions_today;
      expect(await today(midnight - 1)).toBe("2");
      expect(await today(T0)).toBe("2");
      expect(await today(midnight)).toBe("1");
      expect(await today(midnight + 86_400_000 - 1)).toBe("1");
      expect(await today(midnight + 86_400_000)).toBe("1");
      expect(await today(midnight + 2 * 86_400_000)).toBe("0");
      clock = midnight + 5;
      expect((await log.stats()).decisions_today).toBe("1");
    });

    it("adds API calls to the database every interval, and counts each call once meanwhile", async () => {
      const counted = new LmdbAuditLog(env.root, { apiCallFlushMs: 10 });
      const counters = env.root.openDB<number, string>(AUDIT_DATABASES.counters, { encoding: "json" });
      for (let i = 0; i < 3; i += 1) counted.countApiCall();
      expect((await counted.stats()).total_api_calls).toBe("3");
      await vi.waitFor(() => expect(counters.get("api_calls")).toBe(3));
      counted.countApiCall();
      expect((await counted.stats()).total_api_calls).toBe("4");
      await vi.waitFor(() => expect(counters.get("api_calls")).toBe(4));
      expect((await counted.stats()).total_api_calls).toBe("4");
      await counted.close();
    });
  });

  describe("durability", () => {
    it("reads everything back after a reopen of the environment", async () => {
      log.recordDecision(decision({ executionId: "a", recordedAt: at(1), status: "pending_override" }));
      log.recordOverride(override("a", true));
      log.recordConfirmation(confirmation("a"));
      log.recordVerification({ executionId: "a", valid: true, checks: {}, errors: [], recordedAt: at(3) });
      log.recordSecurityEvent(EVENT);
      log.countApiCall();
      await log.flushed();
      const decisions = await log.listDecisions(QUERY);
      const detail = await log.getDecision("a");
      const events = await log.listSecurityEvents({ limit: 10 });
      const stats = await log.stats();
      await log.close();

      env = await env.reopen();
      log = new LmdbAuditLog(env.root, { now: () => new Date(clock) });
      expect(await log.listDecisions(QUERY)).toEqual(decisions);
      expect(await log.getDecision("a")).toEqual(detail);
      expect(await log.listSecurityEvents({ limit: 10 })).toEqual(events);
      expect(await log.stats()).toEqual(stats);
      expect(stats).toMatchObject({ total_decisions: "1", total_verifications: "1", total_security_events: "1", total_api_calls: "1" });
    });

    it("continues the ordinals after a reopen", async () => {
      log.recordSecurityEvent(EVENT);
      await log.close();
      env = await env.reopen();
      log = new LmdbAuditLog(env.root, { now: () => new Date(clock) });
      log.recordSecurityEvent(EVENT);
      expect((await log.listSecurityEvents({ limit: 10 })).map((e) => e.id)).toEqual([`${T0}-1`, `${T0}-0`]);
    });
  });

  describe("health", () => {
    it("turns unhealthy when a write fails, without an unhandled rejection", async () => {
      await env.close();
      log.recordDecision(decision({ executionId: "a", recordedAt: at(1) }));
      log.recordSecurityEvent(EVENT);
      await log.flushed();
      expect(log.healthy()).toBe(false);
      expect(onError).toHaveBeenCalled();
    });

    it("turns healthy again by itself once its writes succeed (DEFAULT_RECOVERY_HOLD_MS later)", async () => {
      vi.useFakeTimers({ toFake: ["Date"] });
      try {
        log.recordDecision(decision({ executionId: "bad", recordedAt: at(1), signalProvenance: { amount: 10n } }));
        await log.flushed();
        expect(log.healthy()).toBe(false);
        vi.setSystemTime(Date.now() + DEFAULT_RECOVERY_HOLD_MS);
        log.recordDecision(decision({ executionId: "good", recordedAt: at(1) }));
        await log.flushed();
        expect(log.healthy()).toBe(true);
      } finally {
        vi.useRealTimers();
      }
    });

    it("turns unhealthy when a read fails, and the read throws", async () => {
      await env.close();
      await expect(log.listDecisions(QUERY)).rejects.toThrow();
      expect(log.healthy()).toBe(false);
      await expect(log.stats()).rejects.toThrow();
      await expect(log.getDecision("a")).rejects.toThrow();
      await expect(log.listSecurityEvents({ limit: 1 })).rejects.toThrow();
    });

    it("turns unhealthy on a record that cannot be stored, and writes none of it", async () => {
      log.recordDecision(decision({ executionId: "bad", recordedAt: at(1), signalProvenance: { amount: 10n } }));
      await log.flushed();
      expect(log.healthy()).toBe(false);
      expect(onError).toHaveBeenCalledOnce();
      expect(await log.stats()).toMatchObject({ total_decisions: "0", decisions_today: "0" });

      log.recordDecision(decision({ executionId: "good", recordedAt: at(1) }));
      expect((await log.listDecisions(QUERY)).map((r) => r.executionId)).toEqual(["good"]);
      expect(await log.getDecision("bad")).toBeNull();
    });

    it("drops records and refuses reads once closed, leaving the environment open", async () => {
      log.recordDecision(decision({ executionId: "a", recordedAt: at(1) }));
      await Promise.all([log.close(), log.close()]);
      expect(log.healthy()).toBe(false);
      log.recordDecision(decision({ executionId: "b", recordedAt: at(2) }));
      await expect(log.listDecisions(QUERY)).rejects.toThrow("audit log is closed");
      await expect(log.stats()).rejects.toThrow("audit log is closed");

      const reader = new LmdbAuditLog(env.root);
      expect((await reader.listDecisions(QUERY)).map((r) => r.executionId)).toEqual(["a"]);
      expect(reader.healthy()).toBe(true);
      await reader.close();
      expect(onError).not.toHaveBeenCalled();
    });
  });
});
