import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { executionFingerprint } from "@writ/runtime";
import { LmdbAuditLog } from "../../../src/storage/lmdb/audit-log.js";
import type { DecisionQuery, DecisionStatus, SecurityQuery } from "../../../src/audit/types.js";
import { at, decision, tempEnv } from "../../audit/support.js";

const T0 = Date.UTC(2025, 2, 10);
const STATUSES: readonly DecisionStatus[] = ["approved", "pending_override", "rejected"];
const POLICIES = ["payments", "refunds", "payouts"];

// Few distinct milliseconds, so that ties and inclusive bounds are exercised. Decisions of one millisecond are ordered
// by fingerprint (their index key), security events by arrival.
const recordArb = fc.record({
  policyId: fc.constantFrom(...POLICIES),
  status: fc.constantFrom(...STATUSES),
  ms: fc.integer({ min: 0, max: 20 }),
});
const boundArb = fc.option(
  fc.integer({ min: -2, max: 22 }).map((ms) => T0 + ms),
  { nil: undefined },
);
const decisionQueryArb = fc.record(
  {
    limit: fc.integer({ min: 1, max: 12 }),
    offset: fc.integer({ min: 0, max: 45 }),
    policyId: fc.constantFrom(...POLICIES, "absent"),
    decision: fc.constantFrom(...STATUSES),
    from: boundArb,
    to: boundArb,
  },
  { requiredKeys: ["limit", "offset"] },
);
const securityQueryArb = fc.record({ limit: fc.integer({ min: 1, max: 12 }), from: boundArb, to: boundArb }, { requiredKeys: ["limit"] });

function inRange(ms: number, from: number | undefined, to: number | undefined): boolean {
  return (from === undefined || ms >= from) && (to === undefined || ms <= to);
}

describe("LmdbAuditLog listing (property)", () => {
  it("a page of decisions is the slice of the filtered, newest-first full list", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(recordArb, { maxLength: 40 }),
        fc.array(decisionQueryArb, { minLength: 1, maxLength: 8 }),
        async (records, queries) => {
          const env = await tempEnv();
          const log = new LmdbAuditLog(env.root);
          try {
            records.forEach((r, i) =>
              log.recordDecision(decision({ executionId: `e${i}`, policyId: r.policyId, status: r.status, recordedAt: at(r.ms) })),
            );
            const newestFirst = records
              .map((r, i) => ({ ...r, ms: T0 + r.ms, executionId: `e${i}`, fingerprint: executionFingerprint(`e${i}`) }))
              .sort((a, b) => b.ms - a.ms || (a.fingerprint < b.fingerprint ? 1 : a.fingerprint > b.fingerprint ? -1 : 0));
            for (const raw of queries) {
              const query = raw as DecisionQuery;
              const expected = newestFirst
                .filter(
                  (r) =>
                    (query.policyId === undefined || r.policyId === query.policyId) &&
                    (query.decision === undefined || r.status === query.decision),
                )
                .filter((r) => inRange(r.ms, query.from, query.to))
                .slice(query.offset, query.offset + query.limit)
                .map((r) => r.executionId);
              expect((await log.listDecisions(query)).map((r) => r.executionId)).toEqual(expected);
            }
            expect(log.healthy()).toBe(true);
          } finally {
            await log.close();
            await env.dispose();
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it("security events are the newest `limit` of the time range", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 30 }),
        fc.array(securityQueryArb, { minLength: 1, maxLength: 6 }),
        async (times, queries) => {
          const env = await tempEnv();
          let clock = T0;
          const log = new LmdbAuditLog(env.root, { now: () => new Date(clock) });
          try {
            times.forEach((ms, i) => {
              clock = T0 + ms;
              // A source per event: each is written as it happens (events of one source in an interval are aggregated).
              log.recordSecurityEvent({ type: "rate_limited", method: "POST", path: "/execute", ip: `10.0.${i}.1`, detail: `event ${i}` });
            });
            const newestFirst = times.map((ms, i) => ({ ms: T0 + ms, i })).sort((a, b) => b.ms - a.ms || b.i - a.i);
            for (const raw of queries) {
              const query = raw as SecurityQuery;
              const expected = newestFirst
                .filter((e) => inRange(e.ms, query.from, query.to))
                .slice(0, query.limit)
                .map((e) => `${e.ms}-${e.i}`);
              expect((await log.listSecurityEvents(query)).map((e) => e.id)).toEqual(expected);
            }
          } finally {
            await log.close();
            await env.dispose();
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
