/**
 * What bounds the audit trail: security events aggregated per source and interval, retention by age and
 * count, and filtered decision queries served by the filter index (reading what they answer, not the trail).
 */
import type { Database } from "lmdb";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AUDIT_DATABASES, LmdbAuditLog } from "../../../src/storage/lmdb/audit-log.js";
import { DEFAULT_AUDIT_RETENTION } from "../../../src/audit/retention.js";
import type { SecurityEventInput } from "../../../src/audit/types.js";
import { at, decision, tempEnv, type TempEnv } from "../../audit/support.js";

const T0 = Date.UTC(2025, 2, 10);
const DAY_MS = 86_400_000;
const EVENT: SecurityEventInput = {
  type: "authentication_failed",
  method: "GET",
  path: "/audit/stats",
  ip: "192.0.2.7",
  detail: "Bearer key does not match",
};

describe("LmdbAuditLog bounds", () => {
  let env: TempEnv;
  let clock: number;
  const logs: LmdbAuditLog[] = [];
  const open = (options: ConstructorParameters<typeof LmdbAuditLog>[1] = {}): LmdbAuditLog => {
    const log = new LmdbAuditLog(env.root, { now: () => new Date(clock), ...options });
    logs.push(log);
    return log;
  };

  beforeEach(async () => {
    env = await tempEnv();
    clock = T0;
  });
  afterEach(async () => {
    await Promise.all(logs.splice(0).map((log) => log.close()));
    await env.dispose();
  });

  describe("security events under a flood", () => {
    it("writes one row at once and one aggregate per source and interval, counting every event", async () => {
      const log = open({ securityEvents: { intervalMs: 60_000, maxSources: 100 } });
      for (let i = 0; i < 10_000; i++) log.recordSecurityEvent(EVENT);
      log.recordSecurityEvent({ ...EVENT, ip: "198.51.100.1" });
      expect((await log.listSecurityEvents({ limit: 10 })).map((e) => [e.ip, e.count])).toEqual([
        ["198.51.100.1", undefined],
        ["192.0.2.7", undefined],
      ]);
      clock += 60_000;
      // Written on close here; in service, by the once-a-second timer after the interval ends.
      await log.close();
      const reader = open();
      const rows = await reader.listSecurityEvents({ limit: 10 });
      expect(rows).toHaveLength(3);
      expect(rows[0]).toMatchObject({ ip: "192.0.2.7", type: "authentication_failed", count: 9_999 });
      expect((await reader.stats()).total_security_events).toBe("10001");
    });
  });

  describe("retention", () => {
    it("security events: removes those older than the age limit and the oldest beyond the count", async () => {
      const log = open({ retention: { ...DEFAULT_AUDIT_RETENTION, security: { maxAgeMs: 10 * DAY_MS, maxRecords: 5 } } });
      for (let day = 0; day < 20; day++) {
        clock = T0 + day * DAY_MS;
        log.recordSecurityEvent({ ...EVENT, detail: `day ${day}` });
      }
      await log.flushed();
      // 20 events a day apart: 10 days old or younger are days 10..19, of which the newest 5 are kept.
      expect(await log.prune(new Date(T0 + 19 * DAY_MS))).toBe(15);
      expect((await log.listSecurityEvents({ limit: 50 })).map((e) => e.detail)).toEqual([
        "day 19",
        "day 18",
        "day 17",
        "day 16",
        "day 15",
      ]);
      expect(await log.prune(new Date(T0 + 19 * DAY_MS))).toBe(0);
    });

    it("keeps decisions and verifications by default", async () => {
      const log = open();
      log.recordDecision(decision({ executionId: "old", recordedAt: at(1) }));
      log.recordVerification({ executionId: "old", valid: true, checks: {}, errors: [], recordedAt: at(1) });
      await log.flushed();
      expect(await log.prune(new Date(T0 + 10_000 * DAY_MS))).toBe(0);
      expect(await log.getDecision("old")).not.toBeNull();
    });

    it("decisions: a removed decision takes its override, confirmation and filter entries with it", async () => {
      const log = open({ retention: { ...DEFAULT_AUDIT_RETENTION, decisions: { maxAgeMs: null, maxRecords: 1 } } });
      log.recordDecision(decision({ executionId: "first", recordedAt: at(1), status: "pending_override" }));
      log.recordOverride({
        executionId: "first",
        approved: true,
        approvedBy: "a",
        approverRole: "r",
        reason: "x",
        overrideId: "o",
        record: {} as never,
        recordedAt: at(2),
      });
      log.recordDecision(decision({ executionId: "second", recordedAt: at(3), status: "pending_override" }));
      await log.flushed();
      expect(await log.prune()).toBe(1);
      expect(await log.getDecision("first")).toBeNull();
      expect((await log.listDecisions({ limit: 10, offset: 0, decision: "pending_override" })).map((r) => r.executionId)).toEqual([
        "second",
      ]);
      const decisions = env.root.openDB<unknown, string>(AUDIT_DATABASES.decisions, { encoding: "json" });
      expect(Array.from(decisions.getKeys())).toEqual([]);
      const filters = env.root.openDB<number, (string | number)[]>(AUDIT_DATABASES.decisionFilters, { encoding: "json" });
      expect(
        Array.from(filters.getKeys()).every((key) =>
          key.includes(decision({ executionId: "second", recordedAt: at(3) }).attestation.execution_fingerprint),
        ),
      ).toBe(true);
    });
  });

  describe("filtered decision queries", () => {
    it("read the filter index, never the whole trail: a query costs what it answers", async () => {
      // Spy on the databases the log opens: how many records a query reads, and whether it walks the records' keys (the
      // time index).
      const reads = { records: 0, timeWalks: 0 };
      const openDB = env.root.openDB.bind(env.root);
      vi.spyOn(env.root, "openDB").mockImplementation(((name: string, options: object) => {
        const db = openDB(name, options) as Database<unknown, (string | number)[]>;
        if (name === AUDIT_DATABASES.decisionRecords) {
          const get = db.get.bind(db);
          db.get = (key) => ((reads.records += 1), get(key));
          const getKeys = db.getKeys.bind(db);
          db.getKeys = (options) => ((reads.timeWalks += 1), getKeys(options));
        }
        return db;
      }) as typeof env.root.openDB);
      const log = open();
      for (let i = 0; i < 3_000; i++) {
        log.recordDecision(
          decision({
            executionId: `d-${i}`,
            recordedAt: at(i),
            policyId: i % 2 === 0 ? "payments" : "refunds",
            status: i % 3 === 0 ? "rejected" : "approved",
          }),
        );
      }
      await log.flushed();
      reads.timeWalks = 0;
      expect(await log.listDecisions({ limit: 50, offset: 0, policyId: "unknown.policy" })).toEqual([]);
      expect(reads).toEqual({ records: 0, timeWalks: 0 });
      const page = await log.listDecisions({ limit: 5, offset: 10, policyId: "refunds", decision: "rejected" });
      // refunds are the odd i, rejected the multiples of 3: i = 2997, 2991, …, newest first; the page skips 10.
      expect(page.map((r) => r.executionId)).toEqual([2937, 2931, 2925, 2919, 2913].map((i) => `d-${i}`));
      expect(reads).toEqual({ records: 5, timeWalks: 0 });
    });

    it("an older trail, written without the filter index, is indexed at open", async () => {
      const first = open();
      for (let i = 0; i < 30; i++)
        first.recordDecision(decision({ executionId: `d-${i}`, recordedAt: at(i), policyId: i % 2 === 0 ? "payments" : "refunds" }));
      await first.close();
      // As the previous version left it: no filter entries, no marker.
      await env.root.openDB<number, (string | number)[]>(AUDIT_DATABASES.decisionFilters, { encoding: "json" }).clearAsync();
      await env.root.openDB<number, string>(AUDIT_DATABASES.counters, { encoding: "json" }).remove("decision_filters_indexed");
      const notices: string[] = [];
      const reopened = open({ onNotice: (m) => notices.push(m) });
      const refunds = await reopened.listDecisions({ limit: 50, offset: 0, policyId: "refunds" });
      expect(refunds.map((r) => r.executionId)).toEqual(Array.from({ length: 15 }, (_, i) => `d-${29 - 2 * i}`));
      expect(notices).toEqual([expect.stringMatching(/^audit: indexed 30 decisions of an older trail/)]);
    });
  });
});
