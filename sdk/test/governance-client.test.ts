/**
 * Every method of the Surface A client against a real listening sidecar: each answer has exactly the members its type
 * declares, and what it signs verifies offline with the SDK's own verification against the pinned key.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyAttestation, verifyExecutionProof, verifyOverrideRecord, type EvaluateResponse } from "@writ/sdk";
import { TRANSFER, TRANSFER_SIGNALS, startSidecar, uid, type Running } from "./support.js";

let s: Running;
beforeAll(async () => {
  s = await startSidecar();
});
afterAll(async () => {
  await s.close();
});

const keys = (value: object) => Object.keys(value).sort();
const evaluate = (signals: Record<string, unknown>, executionId = uid("ev")): Promise<EvaluateResponse> =>
  s.a.evaluate({ executionId, ...TRANSFER, verifiedSignals: signals });

describe("runtime information", () => {
  it("health", async () => {
    const health = await s.a.health();
    expect(keys(health)).toEqual([
      "audit_db",
      "bundles",
      "capabilities",
      "event_loop_lag_ms",
      "instanceId",
      "ready",
      "runtimeHash",
      "runtimeVersion",
      "signing_mode",
      "status",
      "store",
      "supportedSchemaVersions",
      "verification",
    ]);
    expect(health).toMatchObject({
      status: "ok",
      verification: "ok",
      audit_db: true,
      signing_mode: "disk",
      ready: true,
      bundles: { ready: true, source: "directory" },
    });
  });

  it("runtimeManifest, with the signed manifest whose hash attestations name", async () => {
    const manifest = await s.a.runtimeManifest();
    expect(keys(manifest)).toEqual([
      "capabilities",
      "manifestHash",
      "runtimeHash",
      "signedManifest",
      "startedAt",
      "supportedSchemaVersions",
      "version",
    ]);
    const { attestation } = await evaluate(TRANSFER_SIGNALS.approved);
    expect(attestation.provenance.manifestHash).toBe(manifest.manifestHash);
  });

  it("runtimeCapabilities", async () => {
    const { capabilities } = await s.a.runtimeCapabilities();
    expect(capabilities).toEqual(expect.arrayContaining(["replay-protection", "ed25519-signing"]));
  });

  it("policySchema: the governed action, its binding and the signals schema", async () => {
    const schema = await s.a.policySchema(TRANSFER.policyId, TRANSFER.policyVersion);
    expect(keys(schema)).toEqual(["bundleHash", "governs", "policyId", "policyVersion", "schemaVersion", "signalsSchema"]);
    expect(schema.governs).toEqual({ actionType: "transfer.execute", binding: ["amount", "currency"] });
    expect(schema.signalsSchema).toMatchObject({ type: "object" });
  });
});

describe("decisions", () => {
  it("evaluate: a signed variant 1 attestation that verifies offline", async () => {
    const decided = await evaluate(TRANSFER_SIGNALS.approved);
    expect(keys(decided)).toEqual(["attestation", "requires_override", "status"]);
    expect(decided).toMatchObject({ status: "approved", requires_override: false });
    expect(decided.attestation.provenance.provenanceVersion).toBe("SERVICE_PROVENANCE_V1");
    expect(verifyAttestation(decided.attestation, s.publicKeyPem)).toMatchObject({ valid: true, errors: [] });
  });

  it("evaluate: the three response states", async () => {
    expect((await evaluate(TRANSFER_SIGNALS.pending)).status).toBe("pending_override");
    expect((await evaluate(TRANSFER_SIGNALS.rejected)).status).toBe("rejected");
  });

  it("dryRun: the decision, nothing signed", async () => {
    const dry = await s.a.dryRun({ ...TRANSFER, signals: TRANSFER_SIGNALS.pending });
    expect(dry).toEqual({
      wouldDecide: "pending_override",
      ruleMatched: "large_transfer",
      reason: "large transfer requires approval",
      signalsValidated: true,
    });
  });

  it("simulate: the decision and an unsigned preview", async () => {
    const simulation = await s.a.simulate({ ...TRANSFER, signals: TRANSFER_SIGNALS.rejected });
    expect(keys(simulation)).toEqual(["attestationPreview", "decision", "policyLoaded", "signalsValidated", "simulation", "wouldSign"]);
    expect(simulation.decision).toEqual({ action: "reject", reason: "risk too high", ruleMatched: "risk_too_high" });
    expect(simulation.attestationPreview).not.toHaveProperty("signature");
  });

  it("execute (legacy): the variant 2 attestation, flat provenance", async () => {
    // The legacy endpoint is deprecated by the spec, and still one of its endpoints.
    const executed = await s.a.execute({ executionId: uid("ex"), ...TRANSFER, signals: TRANSFER_SIGNALS.approved });
    expect(executed.status).toBe("approved");
    expect(executed.attestation).toHaveProperty("manifestSignature");
    expect(executed.attestation).not.toHaveProperty("provenance");
    expect(verifyAttestation(executed.attestation, s.publicKeyPem).valid).toBe(true);
  });

  it("verify: valid, and every check failed or unknown for a changed attestation", async () => {
    const { attestation } = await evaluate(TRANSFER_SIGNALS.approved);
    expect(await s.a.verify(attestation)).toEqual({
      valid: true,
      checks: { signature: "verified", runtime: "verified", schema: "verified" },
    });
    const changed = { ...attestation, signalsHash: "0".repeat(64) };
    expect(await s.a.verify(changed)).toEqual({ valid: false, checks: { signature: "failed", runtime: "verified", schema: "verified" } });
  });
});

describe("the workflow of spec 1.9: evaluate, override, execute, confirm", () => {
  it("an approved override, then a matching execution with a proof that verifies offline", async () => {
    const executionId = uid("wf");
    const { attestation, status } = await evaluate(TRANSFER_SIGNALS.pending, executionId);
    expect(status).toBe("pending_override");

    const resolved = await s.a.override({
      executionId,
      approved: true,
      approvedBy: "alice@example.com",
      approverRole: "treasury",
      reason: "known supplier",
    });
    if (resolved.status !== "approved") throw new Error("expected an approval");
    expect(keys(resolved)).toEqual(["overrideId", "record", "resolution", "status"]);
    expect(resolved.resolution).toMatchObject({ status: "executed", execution_fingerprint: attestation.execution_fingerprint });
    expect(verifyOverrideRecord(resolved.record, s.publicKeyPem, { attestation })).toMatchObject({ valid: true, errors: [] });

    const confirmed = await s.a.confirmExecution({
      attestation,
      executedAction: {
        actionType: "transfer.execute",
        actionId: "bank-7",
        actionTimestamp: new Date().toISOString(),
        actionDetails: { amount: 20_000, currency: "EUR" },
      },
    });
    expect(keys(confirmed)).toEqual(["executionId", "match", "matched", "proof", "verified", "withinTimeWindow"]);
    expect(confirmed).toMatchObject({ matched: true, match: true, verified: true, withinTimeWindow: true, executionId });
    const proof = verifyExecutionProof(confirmed.proof, s.publicKeyPem, { attestation });
    expect(proof).toMatchObject({ valid: true, errors: [] });
    expect(proof.proof?.matchDetails).toMatchObject({ actionTypeMatch: true, payloadConsistent: true, executionAuthorized: true });
  });

  it("a rejected override answers the executionId", async () => {
    const executionId = uid("wf");
    await evaluate(TRANSFER_SIGNALS.pending, executionId);
    const resolved = await s.a.override({
      executionId,
      approved: false,
      approvedBy: "bob@example.com",
      approverRole: "treasury",
      reason: "unknown payee",
    });
    expect(resolved).toMatchObject({ status: "rejected", executionId });
  });
});

describe("audit", () => {
  it("auditDecisions with every filter, and auditDecision with the override and confirmation beside it", async () => {
    const from = new Date(Date.now() - 1000);
    const executionId = uid("au");
    const { attestation } = await evaluate(TRANSFER_SIGNALS.pending, executionId);
    await s.a.override({ executionId, approved: true, approvedBy: "alice@example.com", approverRole: "treasury", reason: "ok" });
    await s.a.confirmExecution({
      attestation,
      executedAction: { actionType: "transfer.execute", actionId: "bank-8", actionTimestamp: new Date().toISOString() },
      timeWindowSeconds: 60,
    });

    const rows = await s.a.auditDecisions({
      policyId: TRANSFER.policyId,
      decision: "pending_override",
      from,
      to: new Date(Date.now() + 1000),
      limit: 500,
      offset: 0,
    });
    const row = rows.find((r) => r.executionId === executionId);
    expect(row).toMatchObject({ overrideResolution: "approved", confirmed: true, endpoint: "evaluate" });
    expect(rows.every((r) => r.decision === "pending_override")).toBe(true);

    const detail = await s.a.auditDecision(executionId);
    expect(detail.attestation).toEqual(attestation);
    expect(detail.override?.record.approved_by).toBe("alice@example.com");
    expect(detail.confirmation?.match).toBe(false); // payload did not echo the bound signals
  });

  it("auditStats: every value a decimal string", async () => {
    const stats = await s.a.auditStats();
    expect(keys(stats)).toEqual([
      "decisions_today",
      "invalid_verifications",
      "total_api_calls",
      "total_decisions",
      "total_security_events",
      "total_verifications",
      "valid_verifications",
    ]);
    for (const value of Object.values(stats)) expect(value).toMatch(/^\d+$/);
  });

  it("auditSecurityEvents: a refused key is recorded, never the key", async () => {
    const from = new Date();
    const intruder = s.client({ apiKey: "not-the-key-0123456789" });
    await expect(intruder.auditStats()).rejects.toMatchObject({ status: 401 });
    const events = await s.a.auditSecurityEvents({ from, limit: 10 });
    expect(events[0]).toMatchObject({ type: "authentication_failed", method: "GET", path: "/audit/stats" });
    expect(JSON.stringify(events)).not.toContain("not-the-key");
  });
});
