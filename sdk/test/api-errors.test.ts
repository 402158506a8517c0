/**
 * The error class against real listening sidecars, for every error status spec 7 lists (400, 401, 404, 409, 413,
 * 422, 429, 500, 503) and Surface B's (400 for a non-UUID id, 404): `status`, `message` (the body's `error`),
 * `name`, `code` and `context` exactly when the message starts with `[CODE@context]`, `details` when the body has
 * them. Retries are off here (retry-test.test.ts covers them), so each error is the first answer.
 *
 * Statuses that need another configuration get their own sidecar: no replay store (`SERVICE_REPLAY_STORE=none`:
 * 503 on `/override`, 422 INV-REPLAY-001), a tampered bundle (500 on `/evaluate`).
 */
import { appendFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WritApiError, WritError, type AttestationV1, type GovernanceClient } from "@writ/sdk";
import {
  TRANSFER,
  TRANSFER_SIGNALS,
  UNDECIDED,
  businessTransaction,
  copyOfFixturePolicies,
  startSidecar,
  uid,
  type Running,
} from "./support.js";

let s: Running;
let noStore: Running;
let broken: Running;
let tampered: string;
let a: GovernanceClient;

beforeAll(async () => {
  tampered = await copyOfFixturePolicies();
  await appendFile(join(tampered, TRANSFER.policyId, TRANSFER.policyVersion, "policy.ir.json"), " ");
  [s, noStore, broken] = await Promise.all([
    startSidecar({}, { surfaceB: true }),
    startSidecar({ SERVICE_REPLAY_STORE: "none" }),
    startSidecar({ SERVICE_POLICIES_ROOT: tampered }),
  ]);
  a = s.client({ retry: { retries: 0 } });
});
afterAll(async () => {
  await Promise.all([s, noStore, broken].map((x) => x.close()));
  await rm(tampered, { recursive: true, force: true });
});

/** The error `work` rejects with, checked to be the SDK's. */
async function failure(work: Promise<unknown>): Promise<WritApiError> {
  const error = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WritApiError);
  expect(error).toBeInstanceOf(WritError);
  return error as WritApiError;
}

/** The fields the spec names, plus whether `code`, `context` and `details` are present at all. */
function fields(e: WritApiError) {
  return {
    status: e.status,
    message: e.message,
    name: e.name,
    code: e.code,
    context: e.context,
    details: e.details,
    has: ["code", "context", "details"].filter((k) => k in e),
  };
}

const plain = (status: number, message: string) => ({
  status,
  message,
  name: "WritApiError",
  code: undefined,
  context: undefined,
  details: undefined,
  has: [],
});
const evaluate = (client: GovernanceClient, signals: Record<string, unknown>, executionId = uid("ev")) =>
  client.evaluate({ executionId, ...TRANSFER, verifiedSignals: signals });

describe("Surface A", () => {
  it("400: a missing member, in the spec's words", async () => {
    const e = await failure(a.evaluate({ executionId: uid("ev"), ...TRANSFER } as never));
    expect(fields(e)).toEqual(plain(400, "body must have required property 'verifiedSignals'"));
  });

  it("400: a malformed member, with details", async () => {
    const e = await failure(a.evaluate({ executionId: 7, ...TRANSFER, verifiedSignals: {} } as never));
    expect(fields(e)).toEqual({
      ...plain(400, "Invalid request"),
      details: [{ path: "body/executionId", message: "must be string" }],
      has: ["details"],
    });
  });

  it("401: a wrong key", async () => {
    const intruder = s.client({ apiKey: "wrong-key-0123456789abcdef", retry: { retries: 0 } });
    expect(fields(await failure(intruder.runtimeCapabilities()))).toEqual(plain(401, "Unauthorized"));
  });

  it("404: no such policy version, no pending override, no audited decision", async () => {
    expect(
      fields(
        await failure(a.evaluate({ executionId: uid("ev"), policyId: TRANSFER.policyId, policyVersion: "9.9.9", verifiedSignals: {} })),
      ),
    ).toEqual(plain(404, "Policy not found"));
    expect(
      fields(await failure(a.override({ executionId: uid("none"), approved: true, approvedBy: "a", approverRole: "r", reason: "x" }))),
    ).toEqual(plain(404, "Pending override not found"));
    expect(fields(await failure(a.auditDecision(uid("none"))))).toEqual(plain(404, "decision not found"));
  });

  it("409: an override resolved twice; an execution confirmed twice, with its code", async () => {
    const executionId = uid("twice");
    const { attestation } = await evaluate(a, TRANSFER_SIGNALS.pending, executionId);
    const override = { executionId, approved: true, approvedBy: "alice", approverRole: "treasury", reason: "ok" };
    await a.override(override);
    expect(fields(await failure(a.override(override)))).toEqual(plain(409, "Override already resolved"));

    const confirm = {
      attestation,
      executedAction: { actionType: "transfer.execute", actionId: "bank-1", actionTimestamp: new Date().toISOString() },
    };
    await a.confirmExecution(confirm);
    expect(fields(await failure(a.confirmExecution(confirm)))).toEqual({
      ...plain(409, "[INTEGRITY_ALREADY_CONFIRMED@confirm-execution] execution already confirmed"),
      code: "INTEGRITY_ALREADY_CONFIRMED",
      context: "confirm-execution",
      has: ["code", "context"],
    });
  });

  it("413: a body over 64 KB", async () => {
    const e = await failure(evaluate(a, { ...TRANSFER_SIGNALS.approved, padding: "x".repeat(70_000) }));
    expect(fields(e)).toEqual(plain(413, "Request body too large"));
  });

  it("422: a replay names INV-013", async () => {
    const executionId = uid("replay");
    await evaluate(a, TRANSFER_SIGNALS.approved, executionId);
    expect(fields(await failure(evaluate(a, TRANSFER_SIGNALS.approved, executionId)))).toEqual({
      ...plain(422, "[INV-013@replay] execution already consumed: use a new executionId"),
      code: "INV-013",
      context: "replay",
      has: ["code", "context"],
    });
  });

  it("422: signal validation, every failure in details", async () => {
    const e = await failure(evaluate(a, { amount: "250", currency: "CHF", kyc_verified: true, risk_score: 10 }));
    expect(fields(e)).toMatchObject({ status: 422, message: "Signal validation failed", has: ["details"] });
    expect(e.details?.map((d) => ("code" in d ? d.code : d.path))).toEqual(["VAL-007", "VAL-010"]);
    const dry = await failure(a.dryRun({ ...TRANSFER, signals: { amount: 1 } }));
    expect(fields(dry)).toMatchObject({ status: 422, message: "Signals validation failed", has: ["details"] });
  });

  it("422: an undecided policy names SYS-006; a changed attestation names INTEGRITY_INVALID_ATTESTATION", async () => {
    const undecided = await failure(a.evaluate({ executionId: uid("und"), ...UNDECIDED, verifiedSignals: { flag: false } }));
    expect(fields(undecided)).toMatchObject({ status: 422, code: "SYS-006", context: "evaluate", has: ["code", "context"] });
    const { attestation } = await evaluate(a, TRANSFER_SIGNALS.approved);
    const changed: AttestationV1 = { ...attestation, policyVersion: "1.1.0" };
    const invalid = await failure(
      a.confirmExecution({
        attestation: changed,
        executedAction: { actionType: "transfer.execute", actionId: "x", actionTimestamp: new Date().toISOString() },
      }),
    );
    expect(fields(invalid)).toMatchObject({ status: 422, code: "INTEGRITY_INVALID_ATTESTATION", context: "confirm-execution" });
  });

  it("422: no replay store names INV-REPLAY-001; 503: the override has no store", async () => {
    const client = noStore.client({ retry: { retries: 0 } });
    expect(fields(await failure(evaluate(client, TRANSFER_SIGNALS.approved)))).toMatchObject({
      status: 422,
      code: "INV-REPLAY-001",
      context: "replay",
    });
    const e = await failure(client.override({ executionId: uid("x"), approved: true, approvedBy: "a", approverRole: "r", reason: "x" }));
    expect(fields(e)).toEqual(plain(503, "Governed execution runtime not configured"));
  });

  it("429: the 101st legacy execute in a minute, with the window in the body", async () => {
    const executions = Array.from({ length: 100 }, () =>
      a.execute({ executionId: uid("rl"), ...TRANSFER, signals: TRANSFER_SIGNALS.approved }),
    );
    await Promise.all(executions);
    const e = await failure(a.execute({ executionId: uid("rl"), ...TRANSFER, signals: TRANSFER_SIGNALS.approved }));
    expect(fields(e)).toEqual(plain(429, "Rate limit exceeded"));
    expect(e.body).toMatchObject({ error: "Rate limit exceeded", limit: 100, remaining: 0, reset: expect.any(Number) });
  });

  it("500: an unexpected runtime error (a tampered bundle), without detail", async () => {
    const client = broken.client({ retry: { retries: 0 } });
    expect(fields(await failure(evaluate(client, TRANSFER_SIGNALS.approved)))).toEqual(plain(500, "Evaluation failed"));
  });
});

describe("Surface B", () => {
  it("400: a businessTransactionId that is not a UUID, before any execution", async () => {
    const e = await failure(s.b!.execute({ ...businessTransaction(), businessTransactionId: "not-a-uuid" }));
    expect(fields(e)).toEqual(plain(400, "businessTransactionId must be a valid UUID."));
  });

  it("404: no such transaction, trust record, verification or receipt", async () => {
    const b = s.b!;
    expect(fields(await failure(b.transaction("missing")))).toEqual(plain(404, "transaction not found"));
    expect(fields(await failure(b.trustRecord("missing")))).toEqual(plain(404, "trust record not found"));
    expect(fields(await failure(b.latestVerification("missing")))).toEqual(plain(404, "verification not found"));
    expect(fields(await failure(b.latestReceipt("missing")))).toEqual(plain(404, "receipt not found"));
  });

  it("422: a replayed businessTransactionId names INV-013", async () => {
    const transaction = businessTransaction();
    await s.b!.execute(transaction);
    expect(fields(await failure(s.b!.execute(transaction)))).toMatchObject({ status: 422, code: "INV-013", context: "replay" });
  });
});
