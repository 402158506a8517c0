/**
 * Spec section 3, the transition table, row by row against a real listening sidecar: each `describe` is named after
 * the row it protects (From | Trigger | Condition). Signed outputs (attestations, override records, integrity proofs)
 * are verified offline twice: with the runtime's verifier pinning only the sidecar's public key, and independently
 * (node:crypto + canonicalize, from docs/signing.md).
 *
 * The table's last row (Surface B `POST /execute` forcing `RECEIVED`) is Surface B's: sidecar/test/surface-b/execute.test.ts.
 */
import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  PAYLOAD_TYPES,
  verifyAttestation,
  verifyObject,
  type AttestationV1,
  type ExecutionProof,
  type OverrideOutcome,
  type PublicKey,
} from "@writ/runtime";
import type { DecisionDetail } from "@writ/sidecar";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import {
  HEX64,
  ISO_INSTANT,
  PAYLOAD,
  SIGNATURE,
  TRANSFER,
  evaluate,
  executedActionFor,
  independentSignalsHash,
  independentlySign,
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
let runtime: { version: string; runtimeHash: string; manifestHash: string };
let bundleHash: string;

beforeAll(async () => {
  s = await startE2eSidecar();
  key = await publicKeyOf(s);
  pem = await publicKeyPemOf(s);
  runtime = (await s.call<typeof runtime>("GET", "/runtime/manifest")).body;
  bundleHash = (await s.call<{ bundleHash: string }>("GET", `/policies/${TRANSFER.policyId}/versions/${TRANSFER.policyVersion}/schema`))
    .body.bundleHash;
});
afterAll(async () => {
  await s.close();
});

const ALREADY_RESOLVED = { error: "Override already resolved" };
const NO_PENDING_OVERRIDE = { error: "Pending override not found" };
const ALREADY_CONFIRMED = { error: "[INTEGRITY_ALREADY_CONFIRMED@confirm-execution] execution already confirmed" };
const INVALID_ATTESTATION = { error: "[INTEGRITY_INVALID_ATTESTATION@confirm-execution] attestation signature verification failed" };

/** The variant 1 attestation (spec 2.2) the sidecar must return for these signals and outcome, member for member. */
function expectedAttestation(
  executionId: string,
  signals: Readonly<Record<string, unknown>>,
  outcome: { action: string; requires_override: boolean; reason: string },
  executionState: "completed" | "pending_override",
): Record<string, unknown> {
  return {
    executionId,
    execution_fingerprint: expect.stringMatching(HEX64),
    policyId: TRANSFER.policyId,
    policyVersion: TRANSFER.policyVersion,
    schemaVersion: "1.0.0",
    runtimeVersion: runtime.version,
    runtimeHash: runtime.runtimeHash,
    actionType: "transfer.execute",
    actionBinding: { amount: signals["amount"], currency: signals["currency"] },
    issuedAt: expect.stringMatching(ISO_INSTANT),
    signalsHash: independentSignalsHash(signals),
    execution_state: executionState,
    decision: { status: "decided", outcome },
    provenance: {
      provenanceVersion: "SERVICE_PROVENANCE_V1",
      bundleHash,
      manifestHash: runtime.manifestHash,
      trustRootVersion: expect.any(String),
      signerKeyId: key.keyId,
    },
    signature: expect.stringMatching(SIGNATURE),
  };
}

/** Offline: the runtime's verifier with only the public key pinned, and the independent Ed25519 check. */
function expectVerifiesOffline(attestation: AttestationV1): void {
  const verification = verifyAttestation(attestation, offlineVerifier(key, attestation.provenance.trustRootVersion));
  expect(verification.errors).toEqual([]);
  expect(verification.valid).toBe(true);
  expect(independentlyVerifies(PAYLOAD.attestation, attestation, pem)).toBe(true);
}

async function confirm(attestation: AttestationV1, change: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return s.call<ConfirmReply>("POST", "/confirm-execution", {
    attestation,
    executedAction: executedActionFor(attestation, change),
    ...extra,
  });
}

/** The proof string parsed, after checking its signature offline in the execution-proof domain (both ways). */
function proofOf(reply: ConfirmReply): ExecutionProof {
  const proof = JSON.parse(reply.proof) as ExecutionProof;
  const { signature, ...unsigned } = proof;
  expect(verifyObject(PAYLOAD_TYPES.executionProof, unsigned, signature, [key])).not.toBeNull();
  expect(independentlyVerifies(PAYLOAD.executionProof, proof, pem)).toBe(true);
  // A proof is not an attestation: the domains are separate.
  expect(independentlyVerifies(PAYLOAD.attestation, proof, pem)).toBe(false);
  return proof;
}

async function auditOf(executionId: string): Promise<DecisionDetail> {
  const detail = await s.call<DecisionDetail>("GET", `/audit/decisions/${encodeURIComponent(executionId)}`);
  expect(detail.status).toBe(200);
  return detail.body;
}

async function pendingDecision(): Promise<AttestationV1> {
  const r = await evaluate(s, TRANSFER_SIGNALS.pending);
  expect(r.body.status).toBe("pending_override");
  return r.body.attestation;
}

describe("(none) | POST /evaluate | Policy authorizes -> approved, execution_state completed", () => {
  it("returns a signed attestation with requires_override false that verifies offline and at /verify", async () => {
    const id = uid("approve");
    const r = await evaluate(s, TRANSFER_SIGNALS.approved, id);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      status: "approved",
      requires_override: false,
      attestation: expectedAttestation(
        id,
        TRANSFER_SIGNALS.approved,
        { action: "approve", requires_override: false, reason: "verified customer" },
        "completed",
      ),
    });
    expectVerifiesOffline(r.body.attestation);
    expect((await s.call("POST", "/verify", r.body.attestation)).body).toEqual({
      valid: true,
      checks: { signature: "verified", runtime: "verified", schema: "verified" },
    });

    // The offline checks are not vacuous: one changed member and neither accepts the attestation.
    const changed = { ...r.body.attestation, actionBinding: { amount: 25_000, currency: "USD" } };
    expect(verifyAttestation(changed, offlineVerifier(key, changed.provenance.trustRootVersion)).valid).toBe(false);
    expect(independentlyVerifies(PAYLOAD.attestation, changed, pem)).toBe(false);
  });
});

describe("(none) | POST /evaluate | Policy allows escalation only -> pending_override", () => {
  it("returns an attestation with requires_override true, and the action is not authorized", async () => {
    const id = uid("escalate");
    const r = await evaluate(s, TRANSFER_SIGNALS.pending, id);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      status: "pending_override",
      requires_override: true,
      attestation: expectedAttestation(
        id,
        TRANSFER_SIGNALS.pending,
        { action: "escalate", requires_override: true, reason: "large transfer requires approval" },
        "pending_override",
      ),
    });
    expectVerifiesOffline(r.body.attestation);

    // Not authorized (spec 1.4): executed exactly as described, it still does not match until a human approves.
    const confirmed = await confirm(r.body.attestation);
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ matched: false, withinTimeWindow: true });
    expect(proofOf(confirmed.body).matchDetails).toEqual({
      actionTypeMatch: true,
      payloadConsistent: true,
      withinTimeWindow: true,
      timeWindowSeconds: 300,
      executionAuthorized: false,
    });
  });
});

describe("(none) | POST /evaluate | Policy rejects -> rejected", () => {
  it("returns an attestation with requires_override false, and a rejection never confirms as matched", async () => {
    const id = uid("reject");
    const r = await evaluate(s, TRANSFER_SIGNALS.rejected, id);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      status: "rejected",
      requires_override: false,
      attestation: expectedAttestation(
        id,
        TRANSFER_SIGNALS.rejected,
        { action: "reject", requires_override: false, reason: "risk too high" },
        "completed",
      ),
    });
    expectVerifiesOffline(r.body.attestation);
    const confirmed = await confirm(r.body.attestation);
    expect(confirmed.body.matched).toBe(false);
  });
});

describe("pending_override | POST /override with approved true | pending and not yet resolved -> resolved approved (resolution executed)", () => {
  it("answers overrideId, the resolution fingerprint and a signature over the override record", async () => {
    const attestation = await pendingDecision();
    const r = await s.call<Extract<OverrideOutcome, { status: "approved" }>>(
      "POST",
      "/override",
      overrideOf(attestation.executionId, true),
    );
    expect(r.status).toBe(200);
    const record = {
      overrideId: r.body.overrideId,
      executionId: attestation.executionId,
      execution_fingerprint: attestation.execution_fingerprint,
      approved: true,
      approved_by: "alice@example.com",
      approver_role: "payments-supervisor",
      reason: "checked with the customer",
      decidedAt: expect.stringMatching(ISO_INSTANT),
      // The record names the decision it resolves: the original signed attestation, unchanged.
      attestationHash: sha256OfJcs(attestation),
      signature: expect.stringMatching(SIGNATURE),
    };
    expect(r.body).toEqual({
      status: "approved",
      overrideId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      resolution: { status: "executed", execution_fingerprint: attestation.execution_fingerprint, signature: r.body.record.signature },
      record,
    });
    // The override evidence is signed in its own domain (docs/signing.md).
    const { signature, ...unsigned } = r.body.record;
    expect(verifyObject(PAYLOAD_TYPES.override, unsigned, signature ?? "", [key])).not.toBeNull();
    expect(independentlyVerifies(PAYLOAD.override, r.body.record, pem)).toBe(true);
    expect(independentlyVerifies(PAYLOAD.attestation, r.body.record, pem)).toBe(false);

    expect((await auditOf(attestation.executionId)).overrideResolution).toBe("approved");
  });
});

describe("pending_override | POST /override with approved false | pending and not yet resolved -> resolved rejected", () => {
  it("answers status rejected with the executionId, and the action stays unauthorized", async () => {
    const attestation = await pendingDecision();
    const r = await s.call<Extract<OverrideOutcome, { status: "rejected" }>>(
      "POST",
      "/override",
      overrideOf(attestation.executionId, false),
    );
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      status: "rejected",
      executionId: attestation.executionId,
      record: expect.objectContaining({
        executionId: attestation.executionId,
        approved: false,
        approved_by: "alice@example.com",
        signature: expect.stringMatching(SIGNATURE),
      }),
    });
    expect(independentlyVerifies(PAYLOAD.override, r.body.record, pem)).toBe(true);
    expect((await auditOf(attestation.executionId)).overrideResolution).toBe("rejected");
    expect((await confirm(attestation)).body.matched).toBe(false);
  });
});

describe("pending_override | POST /override | Already resolved -> unchanged, 409", () => {
  it.each([true, false])("after a resolution with approved %s, both answers are 409 and the first resolution stays", async (first) => {
    const attestation = await pendingDecision();
    const resolved = await s.call<{ record: { overrideId: string } }>("POST", "/override", overrideOf(attestation.executionId, first));
    expect(resolved.status).toBe(200);
    for (const again of [first, !first]) {
      const r = await s.call("POST", "/override", overrideOf(attestation.executionId, again));
      expect(r.status).toBe(409);
      expect(r.body).toEqual(ALREADY_RESOLVED);
    }
    const audit = await auditOf(attestation.executionId);
    expect(audit.overrideResolution).toBe(first ? "approved" : "rejected");
    expect(audit.override?.overrideId).toBe(resolved.body.record.overrideId);
  });
});

describe("(none) | POST /override | No pending override for the executionId -> unchanged, 404", () => {
  it("answers 404 for an unknown executionId", async () => {
    const r = await s.call("POST", "/override", overrideOf(uid("never-evaluated"), true));
    expect(r.status).toBe(404);
    expect(r.body).toEqual(NO_PENDING_OVERRIDE);
  });

  it.each(["approved", "rejected"] as const)(
    "answers 404 for a decision that was %s (never pending), and records no override",
    async (outcome) => {
      const id = uid(outcome);
      expect((await evaluate(s, TRANSFER_SIGNALS[outcome], id)).body.status).toBe(outcome);
      const r = await s.call("POST", "/override", overrideOf(id, true));
      expect(r.status).toBe(404);
      expect(r.body).toEqual(NO_PENDING_OVERRIDE);
      const audit = await auditOf(id);
      expect(audit.override).toBeNull();
      expect(audit.overrideResolution).toBeNull();
    },
  );
});

describe("attestation | POST /confirm-execution | Signature valid, executionId not yet confirmed -> proof issued, match reflects the three checks", () => {
  const cases = [
    { name: "executed as authorized", change: {}, details: { actionTypeMatch: true, payloadConsistent: true, withinTimeWindow: true } },
    {
      name: "another action type",
      change: { actionType: "transfer.reverse" },
      details: { actionTypeMatch: false, payloadConsistent: true, withinTimeWindow: true },
    },
    {
      name: "a bound signal changed (amount)",
      change: { actionDetails: { amount: 9_999, currency: "USD" } },
      details: { actionTypeMatch: true, payloadConsistent: false, withinTimeWindow: true },
    },
    {
      name: "executed before it was authorized",
      change: { actionTimestamp: "2020-01-01T00:00:00Z" },
      details: { actionTypeMatch: true, payloadConsistent: true, withinTimeWindow: false },
    },
  ] as const;

  it.each(cases)("$name", async ({ change, details }) => {
    const attestation = (await evaluate(s, TRANSFER_SIGNALS.approved)).body.attestation;
    const r = await confirm(attestation, change);
    expect(r.status).toBe(200);
    const matched = details.actionTypeMatch && details.payloadConsistent && details.withinTimeWindow;
    expect(r.body).toEqual({
      matched,
      executionId: attestation.executionId,
      withinTimeWindow: details.withinTimeWindow,
      proof: expect.any(String),
      match: matched,
      verified: true,
    });
    const proof = proofOf(r.body);
    expect(proof).toMatchObject({
      executionId: attestation.executionId,
      // The proof names the authorization it confirms: the whole signed attestation.
      authorizationId: sha256OfJcs(attestation),
      authorized: { action: "approve", actionType: "transfer.execute", reason: "verified customer", ...TRANSFER },
      match: matched,
      matchDetails: { ...details, timeWindowSeconds: 300, executionAuthorized: true },
      verified: true,
      confirmedAt: expect.stringMatching(ISO_INSTANT),
    });
  });
});

describe("attestation | POST /confirm-execution | Already confirmed for this executionId -> unchanged, INTEGRITY_ALREADY_CONFIRMED", () => {
  it("refuses a second confirmation, even of another executed action, and keeps the first proof", async () => {
    const attestation = (await evaluate(s, TRANSFER_SIGNALS.approved)).body.attestation;
    const first = await confirm(attestation);
    expect(first.status).toBe(200);
    for (const change of [{}, { actionType: "transfer.reverse" }]) {
      const again = await confirm(attestation, change);
      expect(again.status).toBe(409);
      expect(again.body).toEqual(ALREADY_CONFIRMED);
    }
    const audit = await auditOf(attestation.executionId);
    expect(audit.confirmed).toBe(true);
    expect(audit.confirmation?.proof).toEqual(JSON.parse(first.body.proof));
  });
});

describe("attestation | POST /confirm-execution | Attestation signature fails -> unchanged, INTEGRITY_INVALID_ATTESTATION", () => {
  it.each([
    ["a changed member (amount)", (a: AttestationV1) => ({ ...a, actionBinding: { ...a.actionBinding, amount: 1 } })],
    [
      "a changed outcome",
      (a: AttestationV1) => ({ ...a, decision: { status: "decided", outcome: { ...a.decision.outcome, reason: "forged" } } }),
    ],
    ["another attestation's signature", (a: AttestationV1, other: AttestationV1) => ({ ...a, signature: other.signature })],
    [
      "a signature by a key the sidecar does not trust",
      (a: AttestationV1) => ({ ...a, signature: independentlySign(PAYLOAD.attestation, a, generateKeyPairSync("ed25519").privateKey) }),
    ],
    ["no signature", (a: AttestationV1) => ({ ...a, signature: "" })],
  ])("refuses %s, and the genuine attestation can still be confirmed afterwards", async (_name, tamper) => {
    const attestation = (await evaluate(s, TRANSFER_SIGNALS.approved)).body.attestation;
    const other = (await evaluate(s, TRANSFER_SIGNALS.approved)).body.attestation;
    const forged = tamper(attestation, other) as AttestationV1;
    const r = await s.call("POST", "/confirm-execution", { attestation: forged, executedAction: executedActionFor(attestation) });
    expect(r.status).toBe(422);
    expect(r.body).toEqual(INVALID_ATTESTATION);
    // Unchanged: the refusal consumed nothing.
    expect((await auditOf(attestation.executionId)).confirmed).toBe(false);
    const genuine = await confirm(attestation);
    expect(genuine.status).toBe(200);
    expect(genuine.body.matched).toBe(true);
  });
});
