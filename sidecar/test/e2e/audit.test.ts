/**
 * The audit trail end to end (spec 1.7, 1.8, 2.11, 4.1; docs/audit.md), on a real listening sidecar with LMDB:
 * signed decisions are listed with their filters and paging, one decision reads back with its attestation, an
 * override is stored beside the decision it resolves (never replacing it), the stats are decimal strings that count,
 * bad query values are 400s, dry runs leave nothing behind (no audit record, no replay entry), and audit off answers
 * empty.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AttestationV1, AttestationV2, Evaluated, OverrideOutcome } from "@writ/runtime";
import type { AuditStats, DecisionDetail, DecisionRow, SecurityEventRow } from "@writ/sidecar";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import {
  TRANSFER,
  answer,
  evaluate,
  executedActionFor,
  overrideOf,
  startE2eSidecar,
  uid,
  type ConfirmReply,
  type E2eSidecar,
} from "../support/e2e.js";

const PAYMENTS = { policyId: "payments.transfer", policyVersion: "1.2.0" } as const;
const PAYMENTS_APPROVED = {
  amount: 100,
  currency: "USD",
  destination_account: "DE89370400440532013000",
  kyc_verified: true,
  risk_score: 10,
  daily_total: 0,
  account_age_days: 400,
  destination_country: "DE",
};

/** The row GET /audit/decisions lists for a decision (docs/audit.md, "Record shapes"). */
function rowOf(
  attestation: AttestationV1 | AttestationV2,
  status: DecisionRow["decision"],
  ruleMatched: string,
  endpoint: DecisionRow["endpoint"],
): DecisionRow {
  const outcome = "provenance" in attestation ? attestation.decision.outcome : attestation.decision;
  return {
    executionId: attestation.executionId,
    execution_fingerprint: attestation.execution_fingerprint,
    policyId: attestation.policyId,
    policyVersion: attestation.policyVersion,
    decision: status,
    action: outcome.action,
    reason: outcome.reason,
    ruleMatched,
    execution_state: attestation.execution_state,
    signalsHash: attestation.signalsHash,
    signerKeyId: "provenance" in attestation ? attestation.provenance.signerKeyId : attestation.signerKeyId,
    endpoint,
    overrideResolution: null,
    confirmed: false,
    recordedAt: attestation.issuedAt,
  };
}

describe("GET /audit/decisions: filters and paging", () => {
  let q: E2eSidecar;
  /** Newest first, as listed. */
  let rows: DecisionRow[];

  beforeAll(async () => {
    q = await startE2eSidecar();
    const made: DecisionRow[] = [];
    const ev = async (policy: { policyId: string; policyVersion: string }, signals: Record<string, unknown>, rule: string) => {
      const r = await q.call<Evaluated<AttestationV1>>("POST", "/evaluate", { executionId: uid("q"), ...policy, verifiedSignals: signals });
      made.push(rowOf(r.body.attestation, r.body.status, rule, "evaluate"));
    };
    await ev(TRANSFER, TRANSFER_SIGNALS.approved, "verified_customer");
    await ev(TRANSFER, TRANSFER_SIGNALS.pending, "large_transfer");
    await ev(TRANSFER, TRANSFER_SIGNALS.rejected, "risk_too_high");
    await ev({ ...TRANSFER, policyVersion: "1.1.0" }, { ...TRANSFER_SIGNALS.approved, amount: 6_000 }, "large_transfer");
    await ev(PAYMENTS, PAYMENTS_APPROVED, "within_limits");
    const executed = await q.call<Evaluated<AttestationV2>>("POST", "/execute", {
      executionId: uid("q"),
      ...TRANSFER,
      signals: TRANSFER_SIGNALS.approved,
    });
    made.push(rowOf(executed.body.attestation, "approved", "verified_customer", "execute"));
    // Failures and dry runs are not decisions.
    await q.call("POST", "/evaluate", { executionId: uid("q"), ...TRANSFER, verifiedSignals: { amount: -1 } });
    await q.call("POST", "/evaluate", { ...TRANSFER, signals: TRANSFER_SIGNALS.approved });
    // The documented order: newest first; decisions of one millisecond by fingerprint (their index key).
    rows = made.sort((a, b) => b.recordedAt.localeCompare(a.recordedAt) || (a.execution_fingerprint < b.execution_fingerprint ? 1 : -1));
  });
  afterAll(async () => {
    await q.close();
  });

  const list = async (query: string) => {
    const r = await q.call<DecisionRow[]>("GET", `/audit/decisions${query}`);
    expect(r.status).toBe(200);
    return r.body;
  };

  it("lists every signed decision of /evaluate and /execute, newest first, with the documented row", async () => {
    expect(await list("")).toEqual(rows);
  });

  it.each([
    ["policyId", "?policyId=conformance.transfer", (r: DecisionRow) => r.policyId === "conformance.transfer"],
    ["policyId (other policy)", "?policyId=payments.transfer", (r: DecisionRow) => r.policyId === "payments.transfer"],
    ["decision", "?decision=pending_override", (r: DecisionRow) => r.decision === "pending_override"],
    [
      "decision and policyId",
      "?decision=approved&policyId=conformance.transfer",
      (r: DecisionRow) => r.decision === "approved" && r.policyId === "conformance.transfer",
    ],
    ["a policy with no decisions", "?policyId=deploy.production", () => false],
  ])("filters by %s", async (_name, query, keep) => {
    const expected = rows.filter(keep);
    expect(await list(query)).toEqual(expected);
  });

  it("filters by from and to, both inclusive to the millisecond", async () => {
    const oldest = rows.at(-1)!;
    const newest = rows[0]!;
    const middle = rows[2]!;
    const between = (from: string, to: string) => rows.filter((r) => r.recordedAt >= from && r.recordedAt <= to);
    expect(await list(`?from=${middle.recordedAt}`)).toEqual(between(middle.recordedAt, newest.recordedAt));
    expect(await list(`?to=${middle.recordedAt}`)).toEqual(between(oldest.recordedAt, middle.recordedAt));
    expect(await list(`?from=${oldest.recordedAt}&to=${oldest.recordedAt}`)).toEqual(between(oldest.recordedAt, oldest.recordedAt));
    const afterAll = new Date(Date.parse(newest.recordedAt) + 1).toISOString();
    expect(await list(`?from=${afterAll}`)).toEqual([]);
    // The same instant with an offset (RFC 3339).
    const shifted = new Date(Date.parse(middle.recordedAt) + 3_600_000).toISOString().replace("Z", "+01:00");
    expect(await list(`?from=${encodeURIComponent(shifted)}`)).toEqual(between(middle.recordedAt, newest.recordedAt));
  });

  it("pages with limit and offset", async () => {
    const pages = [await list("?limit=4"), await list("?limit=4&offset=4"), await list("?limit=4&offset=8")];
    expect(pages.map((p) => p.length)).toEqual([4, 2, 0]);
    expect(pages.flat()).toEqual(rows);
    expect(await list("?limit=1&offset=1&decision=approved")).toEqual(rows.filter((r) => r.decision === "approved").slice(1, 2));
  });

  it.each([
    ["limit=0", "querystring/limit must be an integer between 1 and 500"],
    ["limit=501", "querystring/limit must be an integer between 1 and 500"],
    ["limit=-1", "querystring/limit must be an integer between 1 and 500"],
    ["limit=1.5", "querystring/limit must be an integer between 1 and 500"],
    ["limit=1e2", "querystring/limit must be an integer between 1 and 500"],
    ["limit=%205", "querystring/limit must be an integer between 1 and 500"],
    ["limit=", "querystring/limit must be an integer between 1 and 500"],
    ["offset=-1", "querystring/offset must be an integer between 0 and 1000000"],
    ["offset=1000001", "querystring/offset must be an integer between 0 and 1000000"],
    ["limit=1&limit=2", "querystring/limit must be given once"],
    ["policyId=Not%20A%20Policy", 'querystring/policyId must match pattern "^[a-z0-9]+(?:[._-][a-z0-9]+)*$"'],
    ["decision=maybe", "querystring/decision must be equal to one of the allowed values: approved, pending_override, rejected"],
    ["decision=completed", "querystring/decision must be equal to one of the allowed values: approved, pending_override, rejected"],
    ["from=yesterday", 'querystring/from must match format "date-time" (RFC 3339, e.g. 2025-01-31T00:00:00Z)'],
    ["to=2025-01-31", 'querystring/to must match format "date-time" (RFC 3339, e.g. 2025-01-31T00:00:00Z)'],
    ["from=2025-01-31T00:00:00", 'querystring/from must match format "date-time" (RFC 3339, e.g. 2025-01-31T00:00:00Z)'],
    ["from=2025-02-01T00:00:00Z&to=2025-01-31T00:00:00Z", "querystring/from must not be later than querystring/to"],
    ["status=approved", "querystring/status is not a known parameter; known: limit, offset, policyId, decision, from, to"],
  ])("GET /audit/decisions?%s is 400", async (query, message) => {
    expect(answer(await q.call("GET", `/audit/decisions?${query}`))).toEqual({
      status: 400,
      body: { error: "Invalid request", details: [{ path: "querystring", message }] },
    });
  });

  it.each([
    ["offset=1", "querystring/offset is not a known parameter; known: limit, from, to"],
    ["limit=0", "querystring/limit must be an integer between 1 and 500"],
    ["from=now", 'querystring/from must match format "date-time" (RFC 3339, e.g. 2025-01-31T00:00:00Z)'],
  ])("GET /audit/security?%s is 400", async (query, message) => {
    expect(answer(await q.call("GET", `/audit/security?${query}`))).toEqual({
      status: 400,
      body: { error: "Invalid request", details: [{ path: "querystring", message }] },
    });
  });
});

describe("one decision, its override and its confirmation", () => {
  let s: E2eSidecar;
  beforeAll(async () => {
    s = await startE2eSidecar();
  });
  afterAll(async () => {
    await s.close();
  });

  it("GET /audit/decisions/:executionId has the attestation exactly as signed, and the signal provenance (audited, not hashed)", async () => {
    const id = uid("detail");
    const signalProvenance = { amount: { source: "core-banking", verifiedAt: "2026-01-01T00:00:00Z" } };
    const r = await s.call<Evaluated<AttestationV1>>("POST", "/evaluate", {
      executionId: id,
      ...TRANSFER,
      verifiedSignals: TRANSFER_SIGNALS.approved,
      signalProvenance,
    });
    const detail = await s.call<DecisionDetail>("GET", `/audit/decisions/${id}`);
    expect(answer(detail)).toEqual({
      status: 200,
      body: {
        ...rowOf(r.body.attestation, "approved", "verified_customer", "evaluate"),
        attestation: r.body.attestation,
        signalProvenance,
        override: null,
        confirmation: null,
      },
    });
    // Provenance annotations do not change the signed decision (spec 2.2).
    const bare = await evaluate(s, TRANSFER_SIGNALS.approved);
    expect(bare.body.attestation.signalsHash).toBe(r.body.attestation.signalsHash);
  });

  it("after an override both the original decision and the override are present (spec 1.8), then the confirmation", async () => {
    const pending = await evaluate(s, TRANSFER_SIGNALS.pending);
    const id = pending.body.attestation.executionId;
    const override = await s.call<Extract<OverrideOutcome, { status: "approved" }>>("POST", "/override", overrideOf(id, true));
    expect(override.status).toBe(200);
    const afterOverride = (await s.call<DecisionDetail>("GET", `/audit/decisions/${id}`)).body;
    expect(afterOverride).toEqual({
      // The decision as it was: pending_override, its attestation unchanged.
      ...rowOf(pending.body.attestation, "pending_override", "large_transfer", "evaluate"),
      overrideResolution: "approved",
      attestation: pending.body.attestation,
      signalProvenance: null,
      override: {
        executionId: id,
        approved: true,
        approvedBy: "alice@example.com",
        approverRole: "payments-supervisor",
        reason: "checked with the customer",
        overrideId: override.body.overrideId,
        record: override.body.record,
        recordedAt: override.body.record.decidedAt,
      },
      confirmation: null,
    });
    // The listing shows it once, as the decision with its resolution.
    const listed = (await s.call<DecisionRow[]>("GET", "/audit/decisions?decision=pending_override")).body.filter(
      (r) => r.executionId === id,
    );
    expect(listed).toEqual([
      { ...rowOf(pending.body.attestation, "pending_override", "large_transfer", "evaluate"), overrideResolution: "approved" },
    ]);

    const confirmed = await s.call<ConfirmReply>("POST", "/confirm-execution", {
      attestation: pending.body.attestation,
      executedAction: executedActionFor(pending.body.attestation),
    });
    expect(confirmed.body.matched).toBe(true);
    const afterConfirm = (await s.call<DecisionDetail>("GET", `/audit/decisions/${id}`)).body;
    expect(afterConfirm).toEqual({
      ...afterOverride,
      confirmed: true,
      confirmation: { executionId: id, match: true, proof: JSON.parse(confirmed.body.proof) as unknown, recordedAt: expect.any(String) },
    });
  });

  it("an executionId of up to 100 characters reads back", async () => {
    const id = `long-${"x".repeat(95)}`;
    expect((await evaluate(s, TRANSFER_SIGNALS.approved, id)).status).toBe(200);
    expect((await s.call<DecisionDetail>("GET", `/audit/decisions/${id}`)).body.executionId).toBe(id);
  });

  // /evaluate accepts an executionId of up to 1024 characters; the route parameter must take as many.
  it("an executionId of 1024 characters (the longest /evaluate accepts) reads back", async () => {
    const id = `long-${"x".repeat(1019)}`;
    expect((await evaluate(s, TRANSFER_SIGNALS.approved, id)).status).toBe(200);
    const detail = await s.call<DecisionDetail>("GET", `/audit/decisions/${id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.executionId).toBe(id);
  });

  it("replay attempts and failed verifications are security events", async () => {
    const approved = await evaluate(s, TRANSFER_SIGNALS.approved);
    const id = approved.body.attestation.executionId;
    expect((await evaluate(s, TRANSFER_SIGNALS.approved, id)).status).toBe(422);
    expect((await s.call<{ valid: boolean }>("POST", "/verify", { ...approved.body.attestation, policyVersion: "1.1.0" })).body.valid).toBe(
      false,
    );
    const events = (await s.call<SecurityEventRow[]>("GET", "/audit/security?limit=2")).body;
    expect(events).toEqual([
      expect.objectContaining({ type: "invalid_verification", method: "POST", path: "/verify", executionId: id }),
      expect.objectContaining({
        type: "replay_attempt",
        method: "POST",
        path: "/evaluate",
        executionId: id,
        detail: "executionId already consumed",
      }),
    ]);
  });
});

describe("a forged attestation at /confirm-execution", () => {
  it("is a security event, as at /verify, and confirms nothing", async () => {
    const x = await startE2eSidecar();
    try {
      const attestation = (await evaluate(x, TRANSFER_SIGNALS.approved)).body.attestation;
      const forged = { ...attestation, policyVersion: "1.1.0" };
      const refused = await x.call("POST", "/confirm-execution", { attestation: forged, executedAction: executedActionFor(attestation) });
      expect(answer(refused)).toEqual({
        status: 422,
        body: { error: "[INTEGRITY_INVALID_ATTESTATION@confirm-execution] attestation signature verification failed" },
      });
      const events = (await x.call<SecurityEventRow[]>("GET", "/audit/security")).body;
      expect(events).toEqual([
        expect.objectContaining({
          type: "invalid_verification",
          method: "POST",
          path: "/confirm-execution",
          executionId: attestation.executionId,
        }),
      ]);
      // The genuine attestation is still confirmable.
      expect((await x.call("POST", "/confirm-execution", { attestation, executedAction: executedActionFor(attestation) })).status).toBe(
        200,
      );
    } finally {
      await x.close();
    }
  });
});

describe("GET /audit/stats", () => {
  it("every value is a decimal string, and each counts what it names", async () => {
    const x = await startE2eSidecar();
    try {
      const stats = async () => {
        const r = await x.call<AuditStats>("GET", "/audit/stats");
        expect(r.status).toBe(200);
        for (const value of Object.values(r.body)) expect(value).toMatch(/^(0|[1-9][0-9]*)$/);
        return r.body;
      };
      const before = await stats();
      expect(before).toEqual({
        total_decisions: "0",
        decisions_today: "0",
        total_verifications: "0",
        valid_verifications: "0",
        invalid_verifications: "0",
        total_security_events: "0",
        total_api_calls: expect.any(String),
      });

      const a = (await evaluate(x, TRANSFER_SIGNALS.approved)).body.attestation;
      await evaluate(x, TRANSFER_SIGNALS.pending);
      await x.call("POST", "/execute", { executionId: uid("stats"), ...TRANSFER, signals: TRANSFER_SIGNALS.rejected });
      await x.call("POST", "/verify", a);
      await x.call("POST", "/verify", a);
      await x.call("POST", "/verify", { ...a, signature: a.signature.replace(/^./, (c) => (c === "A" ? "B" : "A")) });
      await x.send("GET", "/audit/stats");
      const after = await stats();
      expect(after).toEqual({
        total_decisions: "3",
        decisions_today: "3",
        total_verifications: "3",
        valid_verifications: "2",
        invalid_verifications: "1",
        // The invalid verification and the unauthenticated request.
        total_security_events: "2",
        total_api_calls: expect.any(String),
      });
      // At least the seven requests above and the first stats call.
      expect(Number(after.total_api_calls) - Number(before.total_api_calls)).toBeGreaterThanOrEqual(8);
    } finally {
      await x.close();
    }
  });
});

describe("dry runs leave nothing behind (spec 1.11, 4.1)", () => {
  it("the dry run and /simulate write no audit record and no replay entry", async () => {
    const x = await startE2eSidecar();
    try {
      const dry = await x.call("POST", "/evaluate", { ...TRANSFER, signals: TRANSFER_SIGNALS.pending });
      expect(answer(dry)).toEqual({
        status: 200,
        body: {
          wouldDecide: "pending_override",
          ruleMatched: "large_transfer",
          reason: "large transfer requires approval",
          signalsValidated: true,
        },
      });
      const sim = await x.call<{ attestationPreview: { executionId: string } }>("POST", "/simulate", {
        ...TRANSFER,
        signals: TRANSFER_SIGNALS.pending,
      });
      // Spec 2.7, and no attestation: the preview is unsigned.
      expect(answer(sim)).toEqual({
        status: 200,
        body: {
          simulation: true,
          decision: { action: "escalate", reason: "large transfer requires approval", ruleMatched: "large_transfer" },
          signalsValidated: true,
          policyLoaded: true,
          wouldSign: true,
          attestationPreview: expect.objectContaining({
            ...TRANSFER,
            execution_state: "pending_override",
            decision: expect.objectContaining({ status: "decided" }),
          }),
        },
      });
      expect(sim.body).not.toHaveProperty("attestationPreview.signature");

      expect(await x.call("GET", "/audit/decisions")).toMatchObject({ status: 200, body: [] });
      expect((await x.call<AuditStats>("GET", "/audit/stats")).body.total_decisions).toBe("0");
      // The preview's executionId was never consumed: a real evaluation with it succeeds, and it is the first decision.
      const previewId = sim.body.attestationPreview.executionId;
      expect((await x.call("GET", `/audit/decisions/${previewId}`)).status).toBe(404);
      const real = await evaluate(x, TRANSFER_SIGNALS.pending, previewId);
      expect(real.status).toBe(200);
      expect(real.body.status).toBe("pending_override");
      // …and no pending override was left by the dry runs before it: this one is resolvable exactly once.
      expect((await x.call("POST", "/override", overrideOf(previewId, true))).status).toBe(200);
      expect((await x.call<DecisionRow[]>("GET", "/audit/decisions")).body.map((r) => r.executionId)).toEqual([previewId]);
    } finally {
      await x.close();
    }
  });
});

describe("audit off (SERVICE_AUDIT=off)", () => {
  it("records nothing: lists are empty, a decision is 404, every stat is 0, and execution goes on", async () => {
    const off = await startE2eSidecar({ SERVICE_AUDIT: "off" });
    try {
      const r = await evaluate(off, TRANSFER_SIGNALS.approved);
      expect(r.status).toBe(200);
      expect(answer(await off.call("GET", "/audit/decisions"))).toEqual({ status: 200, body: [] });
      expect(answer(await off.call("GET", "/audit/security"))).toEqual({ status: 200, body: [] });
      expect(answer(await off.call("GET", `/audit/decisions/${r.body.attestation.executionId}`))).toEqual({
        status: 404,
        body: { error: "decision not found" },
      });
      expect((await off.call<AuditStats>("GET", "/audit/stats")).body).toEqual({
        total_decisions: "0",
        decisions_today: "0",
        total_verifications: "0",
        valid_verifications: "0",
        invalid_verifications: "0",
        total_security_events: "0",
        total_api_calls: "0",
      });
    } finally {
      await off.close();
    }
  });
});
