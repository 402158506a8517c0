/**
 * The recommended workflow of spec 1.9, end to end on a real listening sidecar, as an integrating application runs
 * it: read the policy schema, evaluate, have a human approve the pending decision, execute externally, confirm the
 * execution, and check the Execution Integrity Proof offline. Then the ways a confirmation does not match (spec 2.9),
 * the once-only and tamper rules of confirm-execution (spec 3), the legacy single-step `/execute` with its variant 2
 * attestation (spec 1.10, 2.5), and the `/evaluate` dispatch (docs/sidecar.md).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  verifyAttestation,
  type AttestationV1,
  type AttestationV2,
  type Evaluated,
  type ExecutionProof,
  type PublicKey,
} from "@writ/runtime";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import {
  HEX64,
  ISO_INSTANT,
  PAYLOAD,
  SIGNATURE,
  TRANSFER,
  answer,
  evaluate,
  executedActionFor,
  independentlyVerifies,
  offlineVerifier,
  overrideOf,
  publicKeyOf,
  publicKeyPemOf,
  sha256OfJcs,
  startE2eSidecar,
  uid,
  type ConfirmReply,
  type E2eSidecar,
} from "../support/e2e.js";

let s: E2eSidecar;
let key: PublicKey;
let pem: string;
beforeAll(async () => {
  s = await startE2eSidecar();
  key = await publicKeyOf(s);
  pem = await publicKeyPemOf(s);
});
afterAll(async () => {
  await s.close();
});

const VALID = { valid: true, checks: { signature: "verified", runtime: "verified", schema: "verified" } };

interface PolicySchema {
  policyId: string;
  policyVersion: string;
  governs: { actionType: string; binding: string[] };
  signalsSchema: { required: string[]; properties: Record<string, unknown> };
}

function confirm(attestation: AttestationV1 | AttestationV2, change: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return s.call<ConfirmReply>("POST", "/confirm-execution", {
    attestation,
    executedAction: executedActionFor(attestation, change),
    ...extra,
  });
}

describe("spec 1.9: schema -> evaluate (pending) -> override approve -> execute -> confirm-execution -> proof verifies", () => {
  it("runs end to end, and every signed artefact verifies offline", async () => {
    // 1. Read the policy schema.
    const schema = await s.call<PolicySchema>("GET", `/policies/${TRANSFER.policyId}/versions/${TRANSFER.policyVersion}/schema`);
    expect(schema.status).toBe(200);
    // 2. Collect and verify the signals: every required one, nothing undeclared.
    const signals: Record<string, unknown> = { ...TRANSFER_SIGNALS.pending, reference: "INV-2026-042" };
    expect(Object.keys(signals)).toEqual(expect.arrayContaining(schema.body.signalsSchema.required));
    for (const name of Object.keys(signals)) expect(schema.body.signalsSchema.properties).toHaveProperty(name);

    // 3. Evaluate: a large transfer needs a human.
    const executionId = uid("workflow");
    const evaluated = await s.call<Evaluated<AttestationV1>>("POST", "/evaluate", { executionId, ...TRANSFER, verifiedSignals: signals });
    expect(evaluated.status).toBe(200);
    expect(evaluated.body).toMatchObject({ status: "pending_override", requires_override: true });
    const attestation = evaluated.body.attestation;
    expect(attestation.actionType).toBe(schema.body.governs.actionType);
    expect(Object.keys(attestation.actionBinding)).toEqual(schema.body.governs.binding);

    // 4. A human approves.
    const override = await s.call<{ status: string; resolution: { status: string; execution_fingerprint: string } }>(
      "POST",
      "/override",
      overrideOf(executionId, true),
    );
    expect(override.status).toBe(200);
    expect(override.body).toMatchObject({
      status: "approved",
      resolution: { status: "executed", execution_fingerprint: attestation.execution_fingerprint },
    });

    // 5. The external system executes the transfer, echoing the bound signals.
    const executedAction = {
      actionType: schema.body.governs.actionType,
      actionId: uid("core-banking-tx"),
      actionTimestamp: new Date().toISOString(),
      actionDetails: { amount: signals["amount"], currency: signals["currency"], beneficiary: "ACME GmbH" },
    };

    // 6. Confirm the execution.
    const confirmed = await s.call<ConfirmReply>("POST", "/confirm-execution", { attestation, executedAction });
    expect(answer(confirmed)).toEqual({
      status: 200,
      body: { matched: true, executionId, withinTimeWindow: true, proof: expect.any(String), match: true, verified: true },
    });

    // The proof, offline: signed in its own domain, naming the authorization and binding the executed action to it.
    const proof = JSON.parse(confirmed.body.proof) as ExecutionProof;
    expect(independentlyVerifies(PAYLOAD.executionProof, proof, pem)).toBe(true);
    const authorizationId = sha256OfJcs(attestation);
    expect(proof).toEqual({
      executionId,
      authorizationId,
      integrityHash: sha256OfJcs({ authorizationId, executed: proof.executed }),
      authorized: { action: "escalate", actionType: "transfer.execute", reason: "large transfer requires approval", ...TRANSFER },
      executed: {
        type: executedAction.actionType,
        payload: executedAction.actionDetails,
        executedAt: executedAction.actionTimestamp,
        actionId: executedAction.actionId,
      },
      match: true,
      matchDetails: {
        actionTypeMatch: true,
        payloadConsistent: true,
        withinTimeWindow: true,
        timeWindowSeconds: 300,
        executionAuthorized: true,
      },
      confirmedAt: expect.stringMatching(ISO_INSTANT),
      verified: true,
      signature: expect.stringMatching(SIGNATURE),
    });
    expect(proof.integrityHash).toMatch(HEX64);
    // The attestation stays verifiable on its own, statelessly.
    expect(verifyAttestation(attestation, offlineVerifier(key, attestation.provenance.trustRootVersion)).valid).toBe(true);
    expect(answer(await s.call("POST", "/verify", attestation))).toEqual({ status: 200, body: VALID });
  });
});

describe("confirm-execution: matched is false unless the executed action is the authorized one (spec 2.9)", () => {
  async function approved(): Promise<AttestationV1> {
    return (await evaluate(s, TRANSFER_SIGNALS.approved)).body.attestation;
  }

  it("a wrong actionType", async () => {
    const r = await confirm(await approved(), { actionType: "transfer.refund" });
    expect(r.body).toMatchObject({ matched: false, withinTimeWindow: true });
    expect((JSON.parse(r.body.proof) as ExecutionProof).matchDetails).toMatchObject({ actionTypeMatch: false, payloadConsistent: true });
  });

  it.each([
    ["a changed bound signal", { amount: 251, currency: "USD" }],
    ["a bound signal of another type", { amount: "250", currency: "USD" }],
    ["a bound signal missing", { amount: 250 }],
    ["no details at all", undefined],
  ])("%s", async (_name, actionDetails) => {
    const attestation = await approved();
    const { actionDetails: _dropped, ...action } = executedActionFor(attestation);
    const executedAction = actionDetails === undefined ? action : { ...action, actionDetails };
    const r = await s.call<ConfirmReply>("POST", "/confirm-execution", { attestation, executedAction });
    expect(r.body.matched).toBe(false);
    expect((JSON.parse(r.body.proof) as ExecutionProof).matchDetails).toMatchObject({
      actionTypeMatch: true,
      payloadConsistent: false,
      withinTimeWindow: true,
    });
  });

  it("details beyond the bound signals do not matter", async () => {
    const attestation = await approved();
    expect(
      (await confirm(attestation, { actionDetails: { currency: "USD", amount: 250, note: "anything", nested: { a: 1 } } })).body.matched,
    ).toBe(true);
  });

  it("a stale timestamp: executed longer ago than timeWindowSeconds", async () => {
    const attestation = await approved();
    await sleep(40);
    // Executed the instant it was authorized, confirmed 40 ms later with a 10 ms window.
    const r = await confirm(attestation, { actionTimestamp: attestation.issuedAt }, { timeWindowSeconds: 0.01 });
    expect(r.body).toMatchObject({ matched: false, withinTimeWindow: false });
    expect((JSON.parse(r.body.proof) as ExecutionProof).matchDetails).toMatchObject({
      actionTypeMatch: true,
      payloadConsistent: true,
      withinTimeWindow: false,
      timeWindowSeconds: 0.01,
    });
  });

  it("a timestamp in the future (after the confirmation)", async () => {
    const r = await confirm(await approved(), { actionTimestamp: new Date(Date.now() + 60_000).toISOString() });
    expect(r.body).toMatchObject({ matched: false, withinTimeWindow: false });
  });

  it("the same executed action inside a given window matches", async () => {
    const attestation = await approved();
    const r = await confirm(attestation, { actionTimestamp: attestation.issuedAt }, { timeWindowSeconds: 60 });
    expect(r.body).toMatchObject({ matched: true, withinTimeWindow: true });
  });
});

describe("confirm-execution once per executionId, and only for a genuine attestation (spec 3)", () => {
  it("confirming twice is INTEGRITY_ALREADY_CONFIRMED", async () => {
    const attestation = (await evaluate(s, TRANSFER_SIGNALS.approved)).body.attestation;
    expect((await confirm(attestation)).status).toBe(200);
    expect(answer(await confirm(attestation))).toEqual({
      status: 409,
      body: { error: "[INTEGRITY_ALREADY_CONFIRMED@confirm-execution] execution already confirmed" },
    });
  });

  it("a tampered attestation is INTEGRITY_INVALID_ATTESTATION", async () => {
    const attestation = (await evaluate(s, TRANSFER_SIGNALS.pending)).body.attestation;
    // Forged approval: the escalation rewritten as an approval.
    const forged = {
      ...attestation,
      execution_state: "completed",
      decision: { status: "decided", outcome: { action: "approve", requires_override: false, reason: "verified customer" } },
    };
    expect(
      answer(await s.call("POST", "/confirm-execution", { attestation: forged, executedAction: executedActionFor(attestation) })),
    ).toEqual({
      status: 422,
      body: { error: "[INTEGRITY_INVALID_ATTESTATION@confirm-execution] attestation signature verification failed" },
    });
    expect(answer(await s.call("POST", "/verify", forged))).toEqual({
      status: 200,
      body: { valid: false, checks: { signature: "failed", runtime: "verified", schema: "verified" } },
    });
  });
});

describe("POST /verify needs only the attestation and the pinned key (spec 1.6)", () => {
  it("an attestation of another sidecar, whose key is not pinned here, is not valid: its signature is unknown", async () => {
    const other = await startE2eSidecar();
    try {
      const foreign = (await evaluate(other, TRANSFER_SIGNALS.approved)).body.attestation;
      expect(answer(await other.call("POST", "/verify", foreign))).toEqual({ status: 200, body: VALID });
      expect(answer(await s.call("POST", "/verify", foreign))).toEqual({
        status: 200,
        body: { valid: false, checks: { signature: "unknown", runtime: "verified", schema: "verified" } },
      });
      // Nor can it be confirmed here.
      expect(
        (await s.call("POST", "/confirm-execution", { attestation: foreign, executedAction: executedActionFor(foreign) })).status,
      ).toBe(422);
    } finally {
      await other.close();
    }
  });
});

describe("legacy POST /execute (spec 1.10, 2.5): the variant 2 attestation", () => {
  const execute = (signals: Record<string, unknown>, executionId = uid("legacy")) =>
    s.call<Evaluated<AttestationV2> & { status: string }>("POST", "/execute", { executionId, ...TRANSFER, signals });

  it("approves with a flat, signed variant 2 attestation that verifies offline and confirms", async () => {
    const executionId = uid("legacy");
    const r = await execute(TRANSFER_SIGNALS.approved, executionId);
    const manifest = (await s.call<{ manifestHash: string; runtimeHash: string; version: string }>("GET", "/runtime/manifest")).body;
    expect(answer(r)).toEqual({
      status: 200,
      body: {
        status: "approved",
        requires_override: false,
        attestation: {
          executionId,
          execution_fingerprint: expect.stringMatching(HEX64),
          policyId: TRANSFER.policyId,
          policyVersion: TRANSFER.policyVersion,
          schemaVersion: "1.0.0",
          runtimeVersion: manifest.version,
          runtimeHash: manifest.runtimeHash,
          actionType: "transfer.execute",
          actionBinding: { amount: 250, currency: "USD" },
          issuedAt: expect.stringMatching(ISO_INSTANT),
          signalsHash: sha256OfJcs(TRANSFER_SIGNALS.approved),
          decision: { action: "approve", requires_override: false, reason: "verified customer" },
          execution_state: "completed",
          bundleHash: expect.stringMatching(HEX64),
          manifestHash: manifest.manifestHash,
          manifestSignature: expect.stringMatching(SIGNATURE),
          trustRootVersion: expect.any(String),
          signerKeyId: key.keyId,
          evaluatorHash: expect.stringMatching(HEX64),
          evaluatorSemanticHash: expect.stringMatching(HEX64),
          evaluatorArtifactHash: expect.stringMatching(HEX64),
          releaseManifestHash: expect.stringMatching(HEX64),
          signature: expect.stringMatching(SIGNATURE),
        },
      },
    });
    const attestation = r.body.attestation;
    expect(attestation).not.toHaveProperty("provenance");
    expect(verifyAttestation(attestation, offlineVerifier(key, attestation.trustRootVersion)).valid).toBe(true);
    // Both shapes are signed in the attestation domain.
    expect(independentlyVerifies(PAYLOAD.attestation, attestation, pem)).toBe(true);
    expect(answer(await s.call("POST", "/verify", attestation))).toEqual({ status: 200, body: VALID });
    expect((await confirm(attestation)).body.matched).toBe(true);
  });

  it("status is `approved` or else the attestation's execution_state (rejected reads `completed`)", async () => {
    const pending = await execute(TRANSFER_SIGNALS.pending);
    expect(pending.body).toMatchObject({
      status: "pending_override",
      requires_override: true,
      attestation: { execution_state: "pending_override", decision: { action: "escalate" } },
    });
    const rejected = await execute(TRANSFER_SIGNALS.rejected);
    expect(rejected.body).toMatchObject({
      status: "completed",
      requires_override: false,
      attestation: { execution_state: "completed", decision: { action: "reject" } },
    });
  });

  it("a pending legacy decision is resolved by /override, and then confirms", async () => {
    const r = await execute(TRANSFER_SIGNALS.pending);
    const attestation = r.body.attestation;
    expect((await confirm(attestation)).body.matched).toBe(false);
    const other = await execute(TRANSFER_SIGNALS.pending);
    expect((await s.call("POST", "/override", overrideOf(other.body.attestation.executionId, true))).status).toBe(200);
    expect((await confirm(other.body.attestation)).body.matched).toBe(true);
  });

  it("an executionId consumed by /execute cannot be evaluated again (one replay key per executionId)", async () => {
    const executionId = uid("legacy");
    expect((await execute(TRANSFER_SIGNALS.approved, executionId)).status).toBe(200);
    expect(answer(await evaluate(s, TRANSFER_SIGNALS.approved, executionId))).toEqual({
      status: 422,
      body: { error: "[INV-013@replay] execution already consumed: use a new executionId" },
    });
  });
});

describe("POST /evaluate dispatch (docs/sidecar.md)", () => {
  it("verifiedSignals signs, signals is the dry run, both is 400", async () => {
    expect((await evaluate(s, TRANSFER_SIGNALS.approved)).body).toHaveProperty("attestation.signature");
    expect((await s.call("POST", "/evaluate", { ...TRANSFER, signals: TRANSFER_SIGNALS.approved })).body).toEqual({
      wouldDecide: "approved",
      ruleMatched: "verified_customer",
      reason: "verified customer",
      signalsValidated: true,
    });
    const both = { executionId: uid("both"), ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.approved, signals: TRANSFER_SIGNALS.approved };
    expect(answer(await s.call("POST", "/evaluate", both))).toEqual({
      status: 400,
      body: {
        error: "Invalid request",
        details: [{ path: "body", message: "must have either `verifiedSignals` (evaluate) or `signals` (dry run), not both" }],
      },
    });
    // Refused before anything: the executionId is still free.
    expect((await evaluate(s, TRANSFER_SIGNALS.approved, both.executionId)).status).toBe(200);
  });
});
