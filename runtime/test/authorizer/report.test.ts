/**
 * The DecisionReport a caller may pass (runtime/src/report.ts): the phases of a decision, an override and a
 * confirmation are written in with monotonic instants, also when the call fails; the deciding bundle's ids and rule
 * once a signed decision is made, never the request's.
 */
import { beforeEach, describe, expect, it } from "vitest";
import {
  Authorizer,
  MemoryReplayStore,
  PolicyRegistry,
  confirmExecution,
  createSigner,
  createTrustRoot,
  resolveOverride,
  type DecisionReport,
  type PhaseTiming,
} from "../../src/index.js";
import { writeTransferBundle } from "../support/bundle.js";
import { TEST_SEED_1, keyFromSeed } from "../support/signer.js";

const key = keyFromSeed(TEST_SEED_1);
const trustRoot = createTrustRoot("tr-1", [key.publicKey]);
const signer = createSigner(key, trustRoot);
let store: MemoryReplayStore;
let authorizer: Authorizer;
let n = 0;

beforeEach(() => {
  store = new MemoryReplayStore();
  authorizer = new Authorizer({ registry: new PolicyRegistry(writeTransferBundle()), signer, store });
});

const request = (signals: Record<string, unknown>, executionId = `report-${++n}`) => ({
  executionId,
  policyId: "payments.transfer",
  policyVersion: "1.2.0",
  signals,
});
const fresh = (): DecisionReport => ({ phases: [] });
const names = (report: DecisionReport) => report.phases.map((p) => p.phase);

/** Every phase ends after it starts, within the call. */
function expectTimed(phases: readonly PhaseTiming[], before: number, after: number): void {
  for (const phase of phases) {
    expect(phase.start).toBeGreaterThanOrEqual(before);
    expect(phase.end).toBeGreaterThanOrEqual(phase.start);
    expect(phase.end).toBeLessThanOrEqual(after);
  }
}

describe("evaluate with a report", () => {
  it("times bundle, validate, evaluate and sign in turn, then verify and write, and names the deciding rule", async () => {
    const report = fresh();
    const before = performance.now();
    await authorizer.evaluate(request({ amount: 50000, currency: "EUR" }), report);
    expectTimed(report.phases, before, performance.now());
    expect(names(report).slice(0, 4)).toEqual(["bundle", "validate", "evaluate", "sign"]);
    expect(names(report).slice(4).sort()).toEqual(["verify", "write"]);
    for (let i = 1; i < 4; i++) expect(report.phases[i]!.start).toBeGreaterThanOrEqual(report.phases[i - 1]!.end);
    expect(report.decided).toEqual({ policyId: "payments.transfer", policyVersion: "1.2.0", verdict: "escalate", ruleId: "large" });
  });

  it("the legacy execute reports the same phases", async () => {
    const report = fresh();
    await authorizer.execute(request({ amount: 5, currency: "USD" }), report);
    expect(names(report).sort()).toEqual(["bundle", "evaluate", "sign", "validate", "verify", "write"]);
    expect(report.decided).toMatchObject({ verdict: "approve", ruleId: "small" });
  });

  it("keeps what was timed when the call fails: a signal failure stops after validate, with no decision", async () => {
    const report = fresh();
    await expect(authorizer.evaluate(request({ amount: "many", currency: "EUR" }), report)).rejects.toMatchObject({
      code: "SIGNAL_VALIDATION_FAILED",
    });
    expect(names(report)).toEqual(["bundle", "validate"]);
    expect(report.decided).toBeUndefined();
  });

  it("a missing policy is one bundle phase and no decision: the ids asked for are never reported as decided", async () => {
    const report = fresh();
    await expect(
      authorizer.evaluate({ ...request({ amount: 1, currency: "EUR" }), policyId: "no.such.policy" }, report),
    ).rejects.toMatchObject({ code: "POLICY_NOT_FOUND" });
    expect(names(report)).toEqual(["bundle"]);
    expect(report.decided).toBeUndefined();
  });

  it("a replay is decided and written, then refused (INV-013)", async () => {
    await authorizer.evaluate(request({ amount: 5, currency: "USD" }, "report-replayed"));
    const report = fresh();
    await expect(authorizer.evaluate(request({ amount: 5, currency: "USD" }, "report-replayed"), report)).rejects.toMatchObject({
      code: "INV-013",
    });
    expect(names(report)).toContain("write");
    expect(report.decided).toMatchObject({ verdict: "approve" });
  });

  it("a dry run and a simulation time what they do, and make no signed decision", async () => {
    const dry = fresh();
    await authorizer.dryRun("payments.transfer", "1.2.0", { amount: 5, currency: "USD" }, { report: dry });
    expect(names(dry)).toEqual(["bundle", "validate", "evaluate"]);
    expect(dry.decided).toBeUndefined();
    const simulated = fresh();
    await authorizer.simulate("payments.transfer", "1.2.0", { amount: 5, currency: "USD" }, { report: simulated });
    expect(names(simulated)).toEqual(["bundle", "validate", "evaluate"]);
  });
});

describe("an override and a confirmation with a report", () => {
  const human = { approvedBy: "alice@example.com", approverRole: "risk-officer", reason: "known customer" };

  it("time their own phases", async () => {
    const pending = await authorizer.evaluate(request({ amount: 50000, currency: "EUR" }));
    const executionId = pending.attestation.executionId;
    const overridden = fresh();
    let before = performance.now();
    await resolveOverride({ executionId, approved: true, ...human }, { store, signer, report: overridden });
    expectTimed(overridden.phases, before, performance.now());
    expect(names(overridden)).toEqual(["validate", "sign", "write"]);

    const confirmed = fresh();
    before = performance.now();
    const executed = { type: "transfer.execute", payload: { amount: 50000, currency: "EUR" }, executedAt: new Date().toISOString() };
    await confirmExecution(pending.attestation, executed, 300, { verifier: { trustRoot }, signer, store, report: confirmed });
    expectTimed(confirmed.phases, before, performance.now());
    expect(names(confirmed)).toEqual(["verify", "evaluate", "sign", "write"]);
  });

  it("a confirmation of a forged attestation stops after verify", async () => {
    const done = await authorizer.evaluate(request({ amount: 5, currency: "USD" }));
    const report = fresh();
    const forged = { ...done.attestation, policyVersion: "9.9.9" };
    const executed = { type: "transfer.execute", payload: { amount: 5, currency: "USD" }, executedAt: new Date().toISOString() };
    await expect(confirmExecution(forged, executed, 300, { verifier: { trustRoot }, signer, store, report })).rejects.toMatchObject({
      code: "INTEGRITY_INVALID_ATTESTATION",
    });
    expect(names(report)).toEqual(["verify"]);
  });
});
