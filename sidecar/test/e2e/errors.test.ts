/**
 * Spec section 4.1's error-status table, endpoint by endpoint, each status with the exact body of the error table
 * (spec 7; runtime/src/errors/codes.ts). Statuses that need another configuration get their own sidecar:
 * - no signing key (no data dir, development memory store): 503 on `/execute` and `/verify`;
 * - no replay store (`SERVICE_REPLAY_STORE=none`): 503 on `/override`, 422 INV-REPLAY-001 on `/execute`;
 * - a tampered policy bundle in the policies root: the 500 of `/evaluate` (an unexpected runtime error: the
 *   runtime refuses to evaluate a bundle whose files do not match their manifest);
 * - a fresh sidecar for the 429, so no other test spends its `/execute` budget.
 */
import { appendFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import {
  TRANSFER,
  UNDECIDED,
  answer,
  copyOfFixturePolicies,
  evaluate,
  overrideOf,
  paddedBody,
  startE2eSidecar,
  uid,
  type E2eSidecar,
} from "../support/e2e.js";

let s: E2eSidecar;
let noSigner: E2eSidecar;
let noStore: E2eSidecar;
let broken: E2eSidecar;
let tampered: string;

beforeAll(async () => {
  tampered = await copyOfFixturePolicies();
  await appendFile(join(tampered, TRANSFER.policyId, TRANSFER.policyVersion, "policy.ir.json"), " ");
  [s, noSigner, noStore, broken] = await Promise.all([
    startE2eSidecar(),
    // No data dir: no generated signing key, no trust root, no audit; the memory store keeps replay protection on.
    startE2eSidecar({ SERVICE_DATA_DIR: undefined, SERVICE_REPLAY_STORE: "memory" }),
    startE2eSidecar({ SERVICE_REPLAY_STORE: "none" }),
    startE2eSidecar({}, { policiesRoot: tampered }),
  ]);
});
afterAll(async () => {
  await Promise.all([s, noSigner, noStore, broken].map((x) => x.close()));
  await rm(tampered, { recursive: true, force: true });
});

const UNAUTHORIZED = { error: "Unauthorized" };
const POLICY_NOT_FOUND = { error: "Policy not found" };
const INV_013 = { error: "[INV-013@replay] execution already consumed: use a new executionId" };
const SYS_006 = { error: "[SYS-006@evaluate] policy evaluation undecided: no rule matched and the policy has no catch-all" };
const NOT_CONFIGURED = { error: "Governed execution runtime not configured" };
const missing = (name: string) => ({ error: `body must have required property '${name}'` });
const invalid = (path: string, message: string) => ({ error: "Invalid request", details: [{ path, message }] });

/** Signals that break the schema three ways at once: every failure is reported (docs/errors.md). */
const BAD_SIGNALS = { amount: "250", currency: "CHF", kyc_verified: true, risk_score: 10, nickname: "x" };
const BAD_SIGNALS_DETAILS = [
  { code: "VAL-003", signal: "nickname", message: "signal `nickname` is not declared by the policy" },
  { code: "VAL-007", signal: "amount", message: "signal `amount` must be a finite number" },
  { code: "VAL-010", signal: "currency", message: "signal `currency` must be one of `USD`, `EUR`, `GBP`" },
];

const evaluateBody = (signals: Record<string, unknown> = TRANSFER_SIGNALS.approved, executionId = uid("ev")) => ({
  executionId,
  ...TRANSFER,
  verifiedSignals: signals,
});
const executeBody = (signals: Record<string, unknown> = TRANSFER_SIGNALS.approved, executionId = uid("ex")) => ({
  executionId,
  ...TRANSFER,
  signals,
});
const dryBody = (signals: Record<string, unknown> = TRANSFER_SIGNALS.approved) => ({ ...TRANSFER, signals });

/** The request without the API key. */
async function anonymous(path: string, body: unknown) {
  return s.send("POST", path, { headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

describe("POST /evaluate variant 1 (verifiedSignals): 400 401 404 422 500", () => {
  it("400: a missing required field names it", async () => {
    const { executionId: _omitted, ...body } = evaluateBody();
    expect(answer(await s.call("POST", "/evaluate", body))).toEqual({ status: 400, body: missing("executionId") });
  });

  it("400: a member of the wrong type is `Invalid request`", async () => {
    expect(answer(await s.call("POST", "/evaluate", { ...evaluateBody(), executionId: 42 }))).toEqual({
      status: 400,
      body: invalid("body/executionId", "must be string"),
    });
  });

  it("401: without the key", async () => {
    expect(answer(await anonymous("/evaluate", evaluateBody()))).toEqual({ status: 401, body: UNAUTHORIZED });
  });

  it.each([
    ["an unknown version", { policyId: TRANSFER.policyId, policyVersion: "9.9.9" }],
    ["an unknown policy", { policyId: "nobody.knows", policyVersion: "1.0.0" }],
    ["a version that is not semver", { policyId: TRANSFER.policyId, policyVersion: "latest" }],
  ])("404: %s is `Policy not found`", async (_name, policy) => {
    expect(answer(await s.call("POST", "/evaluate", { ...evaluateBody(), ...policy }))).toEqual({ status: 404, body: POLICY_NOT_FOUND });
  });

  it("422: signals that fail the schema are `Signal validation failed` with every failure in details", async () => {
    expect(answer(await s.call("POST", "/evaluate", evaluateBody(BAD_SIGNALS)))).toEqual({
      status: 422,
      body: { error: "Signal validation failed", details: BAD_SIGNALS_DETAILS },
    });
  });

  it("422: a reused executionId is INV-013, and retrying with it blocks again whatever the signals", async () => {
    const id = uid("replay");
    expect((await s.call("POST", "/evaluate", evaluateBody(TRANSFER_SIGNALS.approved, id))).status).toBe(200);
    for (const signals of [TRANSFER_SIGNALS.approved, TRANSFER_SIGNALS.rejected]) {
      expect(answer(await s.call("POST", "/evaluate", evaluateBody(signals, id)))).toEqual({ status: 422, body: INV_013 });
    }
  });

  it("422: a policy without a catch-all that decides nothing is SYS-006", async () => {
    const r = await s.call("POST", "/evaluate", { executionId: uid("undecided"), ...UNDECIDED, verifiedSignals: { flag: false } });
    expect(answer(r)).toEqual({ status: 422, body: SYS_006 });
  });

  it("500: an unexpected runtime error (a tampered bundle) is `Evaluation failed`, without detail", async () => {
    const r = await broken.call("POST", "/evaluate", evaluateBody());
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ error: "Evaluation failed" });
  });
});

describe("POST /evaluate variant 2 (dry run, signals): 400 401 422", () => {
  it("400: a missing required field names it", async () => {
    const { policyVersion: _omitted, ...body } = dryBody();
    expect(answer(await s.call("POST", "/evaluate", body))).toEqual({ status: 400, body: missing("policyVersion") });
  });

  it("400: both verifiedSignals and signals", async () => {
    const r = await s.call("POST", "/evaluate", { ...evaluateBody(), signals: TRANSFER_SIGNALS.approved });
    expect(answer(r)).toEqual({
      status: 400,
      body: invalid("body", "must have either `verifiedSignals` (evaluate) or `signals` (dry run), not both"),
    });
  });

  it("401: without the key", async () => {
    expect(answer(await anonymous("/evaluate", dryBody()))).toEqual({ status: 401, body: UNAUTHORIZED });
  });

  it("422: signals that fail the schema are `Signals validation failed`", async () => {
    expect(answer(await s.call("POST", "/evaluate", dryBody(BAD_SIGNALS)))).toEqual({
      status: 422,
      body: { error: "Signals validation failed", details: BAD_SIGNALS_DETAILS },
    });
  });

  it("422: a missing policy bundle is `Policy not found` (the dry run has no 404)", async () => {
    expect(answer(await s.call("POST", "/evaluate", { ...dryBody(), policyVersion: "9.9.9" }))).toEqual({
      status: 422,
      body: POLICY_NOT_FOUND,
    });
  });

  it("422: undecided is SYS-006", async () => {
    expect(answer(await s.call("POST", "/evaluate", { ...UNDECIDED, signals: { flag: false } }))).toEqual({ status: 422, body: SYS_006 });
  });
});

describe("POST /execute (legacy): 400 401 413 422 429 503", () => {
  it("400: a missing required field names it", async () => {
    const { signals: _omitted, ...body } = executeBody();
    expect(answer(await s.call("POST", "/execute", body))).toEqual({ status: 400, body: missing("signals") });
  });

  it("401: without the key", async () => {
    expect(answer(await anonymous("/execute", executeBody()))).toEqual({ status: 401, body: UNAUTHORIZED });
  });

  it("413: a body over 65,536 bytes", async () => {
    expect(answer(await s.call("POST", "/execute", paddedBody(executeBody(), 65_537)))).toEqual({
      status: 413,
      body: { error: "Request body too large" },
    });
  });

  it("422: signals that fail the schema are `Signals validation failed`", async () => {
    expect(answer(await s.call("POST", "/execute", executeBody(BAD_SIGNALS)))).toEqual({
      status: 422,
      body: { error: "Signals validation failed", details: BAD_SIGNALS_DETAILS },
    });
  });

  it("422: a reused executionId is INV-013, also when it was consumed by /evaluate", async () => {
    const id = uid("replay");
    expect((await evaluate(s, TRANSFER_SIGNALS.approved, id)).status).toBe(200);
    expect(answer(await s.call("POST", "/execute", executeBody(TRANSFER_SIGNALS.approved, id)))).toEqual({ status: 422, body: INV_013 });
  });

  it("422: SYS-006, and a missing bundle is `Policy not found`", async () => {
    expect(answer(await s.call("POST", "/execute", { executionId: uid("u"), ...UNDECIDED, signals: { flag: false } }))).toEqual({
      status: 422,
      body: SYS_006,
    });
    expect(answer(await s.call("POST", "/execute", { ...executeBody(), policyVersion: "9.9.9" }))).toEqual({
      status: 422,
      body: POLICY_NOT_FOUND,
    });
  });

  it("422: without a replay store, execution fails closed with INV-REPLAY-001", async () => {
    const r = await noStore.call("POST", "/execute", executeBody());
    expect(answer(r)).toEqual({ status: 422, body: { error: "[INV-REPLAY-001@replay] no replay store configured" } });
  });

  it("429: the 101st request in a minute", async () => {
    const limited = await startE2eSidecar();
    try {
      // Any request spends the budget once authenticated; bodies that fail validation are the cheapest.
      const spent = await Promise.all(Array.from({ length: 100 }, () => limited.call("POST", "/execute", {})));
      expect(spent.map((r) => r.status)).toEqual(Array<number>(100).fill(400));
      const r = await limited.call("POST", "/execute", executeBody());
      expect(r.status).toBe(429);
      expect(r.body).toEqual({ error: "Rate limit exceeded", limit: 100, remaining: 0, reset: expect.any(Number) });
    } finally {
      await limited.close();
    }
  });

  it("503: without a signing key", async () => {
    expect(answer(await noSigner.call("POST", "/execute", executeBody()))).toEqual({ status: 503, body: NOT_CONFIGURED });
  });
});

describe("POST /verify: 400 401 503", () => {
  it("400: a body that is not an attestation object", async () => {
    expect(answer(await s.call("POST", "/verify", []))).toEqual({ status: 400, body: invalid("body", "must be object") });
  });

  it("401: without the key", async () => {
    const attestation = (await evaluate(s, TRANSFER_SIGNALS.approved)).body.attestation;
    expect(answer(await anonymous("/verify", attestation))).toEqual({ status: 401, body: UNAUTHORIZED });
  });

  it("503: without a key to verify against", async () => {
    const attestation = (await evaluate(s, TRANSFER_SIGNALS.approved)).body.attestation;
    expect(answer(await noSigner.call("POST", "/verify", attestation))).toEqual({ status: 503, body: NOT_CONFIGURED });
  });
});

describe("POST /simulate: 400 401 422", () => {
  it("400: a missing required field names it", async () => {
    const { signals: _omitted, ...body } = dryBody();
    expect(answer(await s.call("POST", "/simulate", body))).toEqual({ status: 400, body: missing("signals") });
  });

  it("401: without the key", async () => {
    expect(answer(await anonymous("/simulate", dryBody()))).toEqual({ status: 401, body: UNAUTHORIZED });
  });

  it("422: `Signals validation failed`, `Policy not found` and SYS-006", async () => {
    expect(answer(await s.call("POST", "/simulate", dryBody(BAD_SIGNALS)))).toEqual({
      status: 422,
      body: { error: "Signals validation failed", details: BAD_SIGNALS_DETAILS },
    });
    expect(answer(await s.call("POST", "/simulate", { ...dryBody(), policyId: "nobody.knows" }))).toEqual({
      status: 422,
      body: POLICY_NOT_FOUND,
    });
    expect(answer(await s.call("POST", "/simulate", { ...UNDECIDED, signals: { flag: false } }))).toEqual({ status: 422, body: SYS_006 });
  });
});

describe("POST /override: 400 401 404 409 503", () => {
  it("400: a missing required field names it; a wrong type is `Invalid request`", async () => {
    const { approverRole: _omitted, ...body } = overrideOf(uid("o"), true);
    expect(answer(await s.call("POST", "/override", body))).toEqual({ status: 400, body: missing("approverRole") });
    expect(answer(await s.call("POST", "/override", { ...overrideOf(uid("o"), true), approved: "yes" }))).toEqual({
      status: 400,
      body: invalid("body/approved", "must be boolean"),
    });
  });

  it("401: without the key", async () => {
    expect(answer(await anonymous("/override", overrideOf(uid("o"), true)))).toEqual({ status: 401, body: UNAUTHORIZED });
  });

  it("404: no pending override for the executionId", async () => {
    expect(answer(await s.call("POST", "/override", overrideOf(uid("o"), true)))).toEqual({
      status: 404,
      body: { error: "Pending override not found" },
    });
  });

  it("409: already resolved", async () => {
    const pending = await evaluate(s, TRANSFER_SIGNALS.pending);
    expect((await s.call("POST", "/override", overrideOf(pending.body.attestation.executionId, true))).status).toBe(200);
    expect(answer(await s.call("POST", "/override", overrideOf(pending.body.attestation.executionId, true)))).toEqual({
      status: 409,
      body: { error: "Override already resolved" },
    });
  });

  it("503: without a replay store (nothing can be pending)", async () => {
    expect(answer(await noStore.call("POST", "/override", overrideOf(uid("o"), true)))).toEqual({ status: 503, body: NOT_CONFIGURED });
  });
});

describe("without a replay store, the dry runs still answer", () => {
  it("/simulate says it would not sign (nothing could consume the executionId)", async () => {
    const r = await noStore.call<{ wouldSign: boolean }>("POST", "/simulate", dryBody());
    expect(r.status).toBe(200);
    expect(r.body.wouldSign).toBe(false);
    expect((await noStore.call("POST", "/evaluate", dryBody())).status).toBe(200);
  });
});

describe("beyond the spec's per-endpoint list", () => {
  it("GET /audit/decisions/:executionId: 404 when no decision is recorded (spec 7: no decision for the executionId in audit)", async () => {
    expect(answer(await s.call("GET", `/audit/decisions/${uid("none")}`))).toEqual({ status: 404, body: { error: "decision not found" } });
  });

  it("POST /confirm-execution: 503 without a signer (nothing can sign the proof)", async () => {
    const attestation = (await evaluate(s, TRANSFER_SIGNALS.approved)).body.attestation;
    const executedAction = { actionType: attestation.actionType, actionId: "a-1", actionTimestamp: new Date().toISOString() };
    expect(answer(await noSigner.call("POST", "/confirm-execution", { attestation, executedAction }))).toEqual({
      status: 503,
      body: NOT_CONFIGURED,
    });
  });

  it("POST /evaluate variant 1 without a signing key answers 503 (the table's 503 condition; the spec's /evaluate list omits 503)", async () => {
    expect(answer(await noSigner.call("POST", "/evaluate", evaluateBody()))).toEqual({ status: 503, body: NOT_CONFIGURED });
  });
});
