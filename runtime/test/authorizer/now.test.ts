/**
 * The decision instant (issue 41 item 2): the clock is read once a decision, before the policy is evaluated; `now` reads
 * that instant and the attestation's `issuedAt` is its text. An override or a confirmation re-evaluates nothing: a
 * window checked when the decision was made may be approved after it closes (docs/language.md "The decision instant").
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
  verifyAttestation,
  type PolicyIr,
} from "../../src/index.js";
import { TRANSFER_IR, TRANSFER_SCHEMA, writeTransferBundle } from "../support/bundle.js";
import { TEST_SEED_1, keyFromSeed } from "../support/signer.js";

const key = keyFromSeed(TEST_SEED_1);
const trustRoot = createTrustRoot("tr-1", [key.publicKey]);
const signer = createSigner(key, trustRoot);

/** `rule in_window when now < cutoff escalate ...`, `otherwise reject ...`: a human may approve before the cutoff. */
const WINDOW_IR: PolicyIr = {
  ...TRANSFER_IR,
  irVersion: 2,
  signals: { ...TRANSFER_IR.signals, cutoff: { type: "timestamp", optional: false } },
  rules: [
    {
      id: "in_window",
      verdict: "escalate",
      reason: "a human approves transfers before the cutoff",
      when: { op: "cmp", cmp: "lt", kind: "timestamp", left: { op: "now" }, right: { op: "signal", name: "cutoff" } },
    },
  ],
  otherwise: { verdict: "reject", reason: "past the cutoff" },
};
const WINDOW_SCHEMA = {
  ...TRANSFER_SCHEMA,
  properties: { ...TRANSFER_SCHEMA.properties, cutoff: { type: "string", format: "date-time" } },
  required: [...TRANSFER_SCHEMA.required, "cutoff"],
};

const CUTOFF = "2026-06-01T17:00:00Z";
const SIGNALS = { amount: 50000, currency: "EUR", cutoff: CUTOFF };

let clock: Date;
let reads: number;
let store: MemoryReplayStore;
let authorizer: Authorizer;
let n = 0;

beforeEach(() => {
  clock = new Date("2026-06-01T16:00:00.123Z");
  reads = 0;
  store = new MemoryReplayStore();
  const now = () => {
    reads++;
    return clock;
  };
  authorizer = new Authorizer({
    registry: new PolicyRegistry(writeTransferBundle({ ir: WINDOW_IR, schema: WINDOW_SCHEMA })),
    signer,
    store,
    now,
  });
});

const request = () => ({ executionId: `now-${++n}`, policyId: "payments.transfer", policyVersion: "1.2.0", signals: SIGNALS });

describe("the decision instant", () => {
  it("a signed decision reads the clock once: `now` decided, and `issuedAt` is the same instant's text, milliseconds included", async () => {
    const before = await authorizer.evaluate(request());
    expect(reads).toBe(1);
    expect(before.status).toBe("pending_override");
    expect(before.attestation.issuedAt).toBe("2026-06-01T16:00:00.123Z");
    expect(verifyAttestation(before.attestation, { trustRoot }).valid).toBe(true);
    clock = new Date("2026-06-01T17:00:00.000Z");
    const at = await authorizer.evaluate(request());
    expect([at.status, at.attestation.issuedAt]).toEqual(["rejected", "2026-06-01T17:00:00.000Z"]);
    // The legacy variant too.
    const legacy = await authorizer.execute(request());
    expect([legacy.status, legacy.attestation.issuedAt]).toEqual(["rejected", "2026-06-01T17:00:00.000Z"]);
  });

  it("the dry run and the simulation say the instant their `now` read; the preview's issuedAt is that text", async () => {
    const dry = await authorizer.dryRun("payments.transfer", "1.2.0", SIGNALS, { explain: true });
    expect(dry).toMatchObject({ wouldDecide: "pending_override", now: "2026-06-01T16:00:00.123Z" });
    expect(dry.explanation!.rules[0]!.condition.operands![0]).toEqual({ expr: "now", value: "2026-06-01T16:00:00.123Z" });
    const sim = await authorizer.simulate("payments.transfer", "1.2.0", SIGNALS);
    expect(sim.now).toBe("2026-06-01T16:00:00.123Z");
    expect(sim.attestationPreview.issuedAt).toBe(sim.now);
    expect(reads).toBe(2);
  });

  it("a policy that does not read `now` answers the spec's dry run, with no `now`", async () => {
    const plain = new Authorizer({ registry: new PolicyRegistry(writeTransferBundle()), signer, store, now: () => clock });
    const dry = await plain.dryRun("payments.transfer", "1.2.0", { amount: 5, currency: "EUR" });
    expect(dry).toEqual({ wouldDecide: "approved", ruleMatched: "small", reason: "within limits", signalsValidated: true });
  });

  it("an override after the window closes approves the decision made inside it: nothing is evaluated again", async () => {
    const pending = await authorizer.evaluate(request());
    clock = new Date("2026-06-01T21:00:00Z");
    const human = { approvedBy: "alice@example.com", approverRole: "risk-officer", reason: "called the customer" };
    const executionId = pending.attestation.executionId;
    const outcome = await resolveOverride({ executionId, approved: true, ...human }, { store, signer, now: () => clock });
    expect(outcome).toMatchObject({ status: "approved", resolution: { status: "executed" } });
    // Decided now, the same request is past the cutoff.
    expect((await authorizer.dryRun("payments.transfer", "1.2.0", SIGNALS)).wouldDecide).toBe("rejected");
    // And the execution confirms against the attestation of 16:00, four hours later.
    const executedAt = "2026-06-01T21:00:30Z";
    const proof = await confirmExecution(
      pending.attestation,
      { type: "transfer.execute", payload: { amount: 50000, currency: "EUR" }, executedAt },
      300,
      { verifier: { trustRoot }, signer, store, now: () => new Date("2026-06-01T21:01:00Z") },
    );
    expect(proof.match).toBe(true);
  });

  it("a clock outside the years 0000 to 9999 is refused, never evaluated", async () => {
    clock = new Date(Date.UTC(10000, 0, 1));
    await expect(authorizer.evaluate(request())).rejects.toThrow(TypeError);
  });
});
