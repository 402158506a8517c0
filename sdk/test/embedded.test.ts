/**
 * The embedded authorizer: the workflow of spec 1.9 in-process, answering and refusing exactly as the Surface A
 * client does against a real sidecar (the same scenarios run on both), with a memory or an LMDB replay store.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSigningKeyPair } from "@writ/runtime";
import {
  EmbeddedAuthorizer,
  MemoryReplayStore,
  WritApiError,
  WritKeyError,
  openLmdbReplayStore,
  verifyAttestation,
  verifyExecutionProof,
  type AuthorizationWorkflow,
} from "@writ/sdk";
import { TRANSFER, TRANSFER_SIGNALS, UNDECIDED, fixturePoliciesRoot, startSidecar, uid, type Running } from "./support.js";

const KEYS = generateSigningKeyPair();
let policiesRoot: string;
let s: Running;
let embedded: EmbeddedAuthorizer;

beforeAll(async () => {
  policiesRoot = await fixturePoliciesRoot();
  s = await startSidecar();
  embedded = new EmbeddedAuthorizer({ policiesRoot, signingKeyPem: KEYS.privateKeyPem, store: new MemoryReplayStore() });
});
afterAll(async () => {
  await s.close();
  await embedded.close();
});

/** What a refusal looks like to an application: the class and the fields of spec 7. */
async function refusal(work: Promise<unknown>) {
  const e = await work.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(WritApiError);
  const { status, message, name, code, context, details } = e as WritApiError;
  return { status, message, name, code, context, details };
}

const now = () => new Date().toISOString();
const pending = (w: AuthorizationWorkflow, executionId: string) =>
  w.evaluate({ executionId, ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.pending });
const approve = { approved: true, approvedBy: "alice@example.com", approverRole: "treasury", reason: "known supplier" } as const;

describe.each([
  ["the sidecar client", () => s.a as AuthorizationWorkflow],
  ["the embedded authorizer", () => embedded as AuthorizationWorkflow],
])("%s", (_name, workflow) => {
  it("runs the workflow: schema, evaluate, override, confirm; verify", async () => {
    const w = workflow();
    const schema = await w.policySchema(TRANSFER.policyId, TRANSFER.policyVersion);
    const executionId = uid("wf");
    const { attestation, status } = await pending(w, executionId);
    expect(status).toBe("pending_override");
    expect(await w.verify(attestation)).toEqual({
      valid: true,
      checks: { signature: "verified", runtime: "verified", schema: "verified" },
    });
    expect(await w.override({ executionId, ...approve })).toMatchObject({ status: "approved", resolution: { status: "executed" } });
    const confirmed = await w.confirmExecution({
      attestation,
      executedAction: {
        actionType: schema.governs.actionType,
        actionId: "bank-1",
        actionTimestamp: now(),
        actionDetails: { amount: 20_000, currency: "EUR" },
      },
    });
    expect(confirmed).toMatchObject({ matched: true, match: true, withinTimeWindow: true, verified: true, executionId });
  });

  it("answers the dry run and the simulation alike", async () => {
    const w = workflow();
    expect(await w.dryRun({ ...TRANSFER, signals: TRANSFER_SIGNALS.rejected })).toEqual({
      wouldDecide: "rejected",
      ruleMatched: "risk_too_high",
      reason: "risk too high",
      signalsValidated: true,
    });
    expect(await w.simulate({ ...TRANSFER, signals: TRANSFER_SIGNALS.approved })).toMatchObject({
      simulation: true,
      wouldSign: true,
      decision: { action: "approve" },
    });
  });

  it("refuses a replay, bad signals, an unknown policy and an undecided one with the sidecar's errors", async () => {
    const w = workflow();
    const executionId = uid("replay");
    await w.evaluate({ executionId, ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.approved });
    expect(await refusal(w.evaluate({ executionId, ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.approved }))).toEqual({
      status: 422,
      message: "[INV-013@replay] execution already consumed: use a new executionId",
      name: "WritApiError",
      code: "INV-013",
      context: "replay",
      details: undefined,
    });
    expect(
      await refusal(
        w.evaluate({ executionId: uid("bad"), ...TRANSFER, verifiedSignals: { ...TRANSFER_SIGNALS.approved, risk_score: 101 } }),
      ),
    ).toMatchObject({
      status: 422,
      message: "Signal validation failed",
      details: [{ code: "VAL-011", signal: "risk_score" }],
    });
    expect(
      await refusal(w.evaluate({ executionId: uid("nopolicy"), ...TRANSFER, policyVersion: "9.9.9", verifiedSignals: {} })),
    ).toMatchObject({ status: 404, message: "Policy not found" });
    expect(await refusal(w.dryRun({ ...TRANSFER, policyVersion: "9.9.9", signals: {} }))).toMatchObject({
      status: 422,
      message: "Policy not found",
    });
    expect(await refusal(w.evaluate({ executionId: uid("und"), ...UNDECIDED, verifiedSignals: { flag: false } }))).toMatchObject({
      status: 422,
      code: "SYS-006",
    });
    expect(await refusal(w.policySchema(TRANSFER.policyId, "9.9.9"))).toMatchObject({ status: 404, message: "Policy not found" });
  });

  it("refuses overrides that find nothing pending or are made twice", async () => {
    const w = workflow();
    expect(await refusal(w.override({ executionId: uid("none"), ...approve }))).toMatchObject({
      status: 404,
      message: "Pending override not found",
      code: undefined,
    });
    const executionId = uid("twice");
    await pending(w, executionId);
    await w.override({ executionId, ...approve });
    expect(await refusal(w.override({ executionId, ...approve }))).toMatchObject({ status: 409, message: "Override already resolved" });
  });

  it("refuses a second confirmation, a changed attestation and a malformed executed action", async () => {
    const w = workflow();
    const { attestation } = await w.evaluate({ executionId: uid("conf"), ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.approved });
    const executedAction = { actionType: "transfer.execute", actionId: "bank-2", actionTimestamp: now() };
    await w.confirmExecution({ attestation, executedAction });
    expect(await refusal(w.confirmExecution({ attestation, executedAction }))).toMatchObject({
      status: 409,
      code: "INTEGRITY_ALREADY_CONFIRMED",
      context: "confirm-execution",
    });
    expect(await refusal(w.confirmExecution({ attestation: { ...attestation, reason: "x" } as never, executedAction }))).toMatchObject({
      status: 422,
      code: "INTEGRITY_INVALID_ATTESTATION",
    });
    expect(
      await refusal(w.confirmExecution({ attestation, executedAction: { ...executedAction, actionTimestamp: "yesterday" } })),
    ).toMatchObject({
      status: 400,
      message: "Invalid request",
      details: [{ path: "body/executedAction/actionTimestamp" }],
    });
    expect(await refusal(w.confirmExecution({ attestation, executedAction, timeWindowSeconds: 0 }))).toEqual({
      status: 400,
      message: "Invalid request",
      name: "WritApiError",
      code: undefined,
      context: undefined,
      details: [{ path: "body/timeWindowSeconds", message: "must be > 0" }],
    });
  });
});

describe("embedded only", () => {
  it("signs with its own key: attestations and proofs verify offline against its public key", async () => {
    const executionId = uid("own");
    const { attestation } = await embedded.evaluate({ executionId, ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.approved });
    expect(verifyAttestation(attestation, KEYS.publicKeyPem)).toMatchObject({ valid: true, errors: [] });
    expect(verifyAttestation(attestation, s.publicKeyPem).valid).toBe(false);
    const { proof } = await embedded.confirmExecution({
      attestation,
      executedAction: {
        actionType: "transfer.execute",
        actionId: "b",
        actionTimestamp: now(),
        actionDetails: { amount: 250, currency: "USD" },
      },
    });
    expect(verifyExecutionProof(proof, KEYS.publicKeyPem, { attestation })).toMatchObject({ valid: true, proof: { match: true } });
  });

  it("keeps replay protection across a restart with the LMDB store", async () => {
    const dir = await mkdtemp(join(tmpdir(), "writ-sdk-lmdb-"));
    try {
      const open = async () =>
        new EmbeddedAuthorizer({ policiesRoot, signingKeyPem: KEYS.privateKeyPem, store: await openLmdbReplayStore(dir) });
      const first = await open();
      const consumed = uid("durable");
      const waiting = uid("durable-pending");
      await first.evaluate({ executionId: consumed, ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.approved });
      await pending(first, waiting);
      await first.close();

      const second = await open();
      expect(
        await refusal(second.evaluate({ executionId: consumed, ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.approved })),
      ).toMatchObject({ status: 422, code: "INV-013" });
      expect(await second.override({ executionId: waiting, ...approve })).toMatchObject({ status: "approved" });
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("fails closed with 503 when the replay store is full or closed", async () => {
    const full = new EmbeddedAuthorizer({ policiesRoot, signingKeyPem: KEYS.privateKeyPem, store: new MemoryReplayStore({ capacity: 1 }) });
    await full.evaluate({ executionId: uid("cap"), ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.approved });
    expect(
      await refusal(full.evaluate({ executionId: uid("cap"), ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.approved })),
    ).toMatchObject({ status: 503, message: "replay store unavailable" });
    await full.close();
    expect(
      await refusal(full.evaluate({ executionId: uid("closed"), ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.approved })),
    ).toMatchObject({ status: 503 });
  });

  it("refuses unsigned bundles when bundle keys are pinned (500, as the sidecar)", async () => {
    const strict = new EmbeddedAuthorizer({
      policiesRoot,
      signingKeyPem: KEYS.privateKeyPem,
      store: new MemoryReplayStore(),
      bundleKeys: [KEYS.publicKeyPem],
    });
    expect(
      await refusal(strict.evaluate({ executionId: uid("unsigned"), ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.approved })),
    ).toMatchObject({ status: 500, message: "Evaluation failed" });
    await strict.close();
  });

  it("accepts attestations of every key of its trust root", async () => {
    const other = generateSigningKeyPair();
    const trustRoot = { trustRootVersion: "2026-1", keys: [KEYS.publicKeyPem, other.publicKeyPem] };
    const old = new EmbeddedAuthorizer({ policiesRoot, signingKeyPem: other.privateKeyPem, store: new MemoryReplayStore(), trustRoot });
    const rotated = new EmbeddedAuthorizer({ policiesRoot, signingKeyPem: KEYS.privateKeyPem, store: new MemoryReplayStore(), trustRoot });
    const { attestation } = await old.evaluate({ executionId: uid("rot"), ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.approved });
    expect((await rotated.verify(attestation)).valid).toBe(true);
    expect((await embedded.verify(attestation)).checks.signature).toBe("unknown");
    await Promise.all([old.close(), rotated.close()]);
  });

  it("refuses unusable keys with WritKeyError", () => {
    const make = (signingKeyPem: string, trustRoot?: { trustRootVersion: string; keys: string[] }) =>
      new EmbeddedAuthorizer({ policiesRoot, signingKeyPem, store: new MemoryReplayStore(), ...(trustRoot ? { trustRoot } : {}) });
    expect(() => make("not a key")).toThrow(WritKeyError);
    expect(() => make("not a key")).toThrow(expect.objectContaining({ code: "KEY_INVALID", name: "WritKeyError" }));
    // The trust root must vouch for the signing key.
    expect(() => make(KEYS.privateKeyPem, { trustRootVersion: "x", keys: [generateSigningKeyPair().publicKeyPem] })).toThrow(WritKeyError);
  });
});
