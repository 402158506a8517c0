/**
 * The library semantics end to end: evaluate with replay protection (fail closed, INV-013 once), the dry
 * run without side effects, overrides resolved once with their lineage checks, and confirm-execution.
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as ed from "@noble/ed25519";
import canonicalize from "canonicalize";
import { beforeEach, describe, expect, it } from "vitest";
import {
  AuthorizationError,
  Authorizer,
  MemoryReplayStore,
  type TransitionRecord,
  NODE_ED25519,
  OverrideError,
  PAYLOAD_TYPES,
  PolicyRegistry,
  confirmExecution,
  createSigner,
  createTrustRoot,
  executionFingerprint,
  resolveOverride,
  selfVerificationFailed,
  verifyAttestation,
  type Ed25519Engine,
  type ReplayStore,
} from "../../src/index.js";
import { writeTransferBundle } from "../support/bundle.js";
import { TEST_SEED_1, keyFromSeed } from "../support/signer.js";

const key = keyFromSeed(TEST_SEED_1);
const trustRoot = createTrustRoot("tr-1", [key.publicKey]);
const signer = createSigner(key, trustRoot);
let root: string;
let store: MemoryReplayStore;
let records: TransitionRecord[];
let authorizer: Authorizer;
let n = 0;

beforeEach(() => {
  root = writeTransferBundle();
  records = [];
  store = new MemoryReplayStore({ writeRecord: (record) => void records.push(record) });
  authorizer = new Authorizer({ registry: new PolicyRegistry(root), signer, store });
});

const request = (signals: Record<string, unknown>, executionId = `exec-${++n}`) => ({
  executionId,
  policyId: "payments.transfer",
  policyVersion: "1.2.0",
  signals,
});

async function refusal(p: Promise<unknown>): Promise<AuthorizationError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(AuthorizationError);
  return e as AuthorizationError;
}

describe("evaluate", () => {
  it.each([
    [{ amount: 500, currency: "EUR" }, "approved", false, "consumed"],
    [{ amount: 50000, currency: "EUR" }, "pending_override", true, "pending_override"],
    [{ amount: 500, currency: "EUR", country: "KP" }, "rejected", false, "consumed"],
  ] as const)("%j is %s, signed, and its fingerprint is %s in the store", async (signals, status, requires, state) => {
    const r = await authorizer.evaluate(request(signals));
    expect(r.status).toBe(status);
    expect(r.requires_override).toBe(requires);
    expect(verifyAttestation(r.attestation, { trustRoot }).valid).toBe(true);
    expect((await store.read(executionFingerprint(r.attestation.executionId)))?.state).toBe(state);
  });

  it("consumes an executionId once: INV-013 on the second use, whatever the signals", async () => {
    await authorizer.evaluate(request({ amount: 1, currency: "USD" }, "same"));
    expect((await refusal(authorizer.evaluate(request({ amount: 2, currency: "EUR" }, "same")))).code).toBe("INV-013");
  });

  it("hands the store the decision's record as data, with the consumption, and only the winner's", async () => {
    const provenance = { amount: { source: "ledger" } };
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () =>
        authorizer.evaluate({ ...request({ amount: 1, currency: "USD" }, "recorded"), signalProvenance: provenance }),
      ),
    );
    const won = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    expect(won).toHaveLength(1);
    expect(records).toEqual([
      {
        kind: "decision",
        body: {
          executionId: "recorded",
          endpoint: "evaluate",
          status: won[0]!.status,
          ruleMatched: expect.any(String),
          attestation: won[0]!.attestation,
          signalProvenance: provenance,
          recordedAt: won[0]!.attestation.issuedAt,
        },
        json: expect.any(String),
      },
    ]);
    // The record's text, made around the attestation's signed text, is its body (runtime `TransitionRecord`).
    expect(JSON.parse(records[0]!.json!)).toEqual(records[0]!.body);
  });

  it.each([
    [{ amount: 500, currency: "EUR" }, "approved"],
    [{ amount: 50000, currency: "EUR" }, "pending_override"],
  ] as const)(
    "%j: the answer's text, serialized once, is the answer, its attestation in its signed (JCS) form",
    async (signals, status) => {
      const { evaluated, json } = await authorizer.evaluateSerialized(request(signals));
      expect(evaluated.status).toBe(status);
      expect(JSON.parse(json)).toEqual(evaluated);
      expect(json).toBe(
        `{"status":"${evaluated.status}","requires_override":${evaluated.requires_override},"attestation":${canonicalize(evaluated.attestation)!}}`,
      );
    },
  );

  it("lets exactly one of 1,000 concurrent evaluations of one executionId through", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 1000 }, () => authorizer.evaluate(request({ amount: 1, currency: "USD" }, "race"))),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(new Set(results.flatMap((r) => (r.status === "rejected" ? [(r.reason as AuthorizationError).code] : [])))).toEqual(
      new Set(["INV-013"]),
    );
  });

  it("never returns an attestation whose self-verification fails, and keeps its executionId consumed (fail closed)", async () => {
    const failing: Ed25519Engine = {
      name: "failing self-verification",
      async sign(input, k) {
        const signed = await NODE_ED25519.sign(input, k);
        return { signature: signed.signature, verified: signed.verified.then(() => Promise.reject(selfVerificationFailed())) };
      },
      verify: NODE_ED25519.verify,
    };
    const broken = new Authorizer({ registry: new PolicyRegistry(root), signer: createSigner(key, trustRoot, failing), store });
    const e = await refusal(broken.evaluate(request({ amount: 1, currency: "USD" }, "unverified")));
    expect(e.code).toBe("EVALUATION_FAILED");
    expect(e.message).toMatch(/self-verification/);
    // The replay write ran beside the verification: the id is spent, so a retry cannot obtain a second decision.
    expect((await store.read(executionFingerprint("unverified")))?.state).toBe("consumed");
    expect(records.filter((r) => r.body.executionId === "unverified")).toHaveLength(1);
    expect((await refusal(authorizer.evaluate(request({ amount: 1, currency: "USD" }, "unverified")))).code).toBe("INV-013");
  });

  it("fails closed without a replay store, and refuses to sign without a key", async () => {
    const noStore = new Authorizer({ registry: new PolicyRegistry(root), signer, store: null });
    expect((await refusal(noStore.evaluate(request({ amount: 1, currency: "USD" })))).code).toBe("INV-REPLAY-001");
    const noKey = new Authorizer({ registry: new PolicyRegistry(root), signer: null, store });
    expect((await refusal(noKey.evaluate(request({ amount: 1, currency: "USD" })))).code).toBe("RUNTIME_NOT_CONFIGURED");
  });

  it("reports every signal failure at once and consumes nothing", async () => {
    const e = await refusal(authorizer.evaluate(request({ amount: "1", currency: "YEN", extra: 1 }, "retry-me")));
    expect(e.code).toBe("SIGNAL_VALIDATION_FAILED");
    expect(e.details.map((d) => d.code).sort()).toEqual(["VAL-003", "VAL-007", "VAL-010"]);
    expect((await authorizer.evaluate(request({ amount: 1, currency: "USD" }, "retry-me"))).status).toBe("approved");
  });

  it("answers SYS-006 when no rule decides and there is no catch-all, consuming nothing", async () => {
    expect((await refusal(authorizer.evaluate(request({ amount: 5000, currency: "USD" }, "undecided")))).code).toBe("SYS-006");
    expect(await store.read(executionFingerprint("undecided"))).toBeNull();
  });

  it("names a missing policy per endpoint kind, and refuses a tampered bundle", async () => {
    const missing = { ...request({ amount: 1, currency: "USD" }), policyVersion: "9.9.9" };
    expect((await refusal(authorizer.evaluate(missing))).code).toBe("POLICY_NOT_FOUND");
    expect((await refusal(authorizer.execute(missing))).code).toBe("POLICY_BUNDLE_MISSING");
    const ir = join(root, "payments.transfer/1.2.0/policy.ir.json");
    writeFileSync(ir, readFileSync(ir, "utf8").replace('"reject"', '"approve"'));
    const fresh = new Authorizer({ registry: new PolicyRegistry(root), signer, store });
    expect((await refusal(fresh.evaluate(request({ amount: 1, currency: "USD" })))).code).toBe("EVALUATION_FAILED");
  });

  it("keeps serving the good bundle when a reload finds it tampered", async () => {
    const registry = new PolicyRegistry(root);
    const good = await registry.get("payments.transfer", "1.2.0");
    const ir = join(root, "payments.transfer/1.2.0/policy.ir.json");
    writeFileSync(ir, readFileSync(ir, "utf8").replace('"reject"', '"approve"'));
    const reload = await registry.reload("payments.transfer", "1.2.0");
    expect(reload.replaced).toBe(false);
    expect(reload.error?.code).toBe("BUNDLE_TAMPERED");
    expect(await registry.get("payments.transfer", "1.2.0")).toBe(good);
  });

  it("the legacy execute signs the variant 2 shape", async () => {
    const r = await authorizer.execute(request({ amount: 1, currency: "USD" }));
    expect(r.attestation).toHaveProperty("manifestSignature");
    expect(r.attestation).toHaveProperty("evaluatorHash");
    expect(verifyAttestation(r.attestation, { trustRoot }).valid).toBe(true);
  });

  it("the dry run decides without attestation or replay write", async () => {
    expect(await authorizer.dryRun("payments.transfer", "1.2.0", { amount: 50000, currency: "EUR" })).toEqual({
      wouldDecide: "pending_override",
      ruleMatched: "large",
      reason: "large transfer needs a human",
      signalsValidated: true,
    });
    expect(await store.sweep(Number.MAX_SAFE_INTEGER)).toBe(0);
    expect((await refusal(authorizer.dryRun("payments.transfer", "1.2.0", { amount: -1, currency: "EUR" }))).code).toBe(
      "SIGNALS_VALIDATION_FAILED",
    );
  });
});

describe("simulate", () => {
  it("previews the attestation without signing, replay write or anything stored", async () => {
    const sim = await authorizer.simulate("payments.transfer", "1.2.0", { amount: 500, currency: "EUR", country: "FR" });
    expect(sim).toMatchObject({
      simulation: true,
      decision: { action: "approve", reason: "within limits", ruleMatched: "small" },
      signalsValidated: true,
      policyLoaded: true,
      wouldSign: true,
    });
    expect(sim.attestationPreview).not.toHaveProperty("signature");
    expect(sim.attestationPreview).toMatchObject({
      actionType: "transfer.execute",
      actionBinding: { amount: 500, currency: "EUR" },
      execution_state: "completed",
    });
    expect(await store.sweep(Number.MAX_SAFE_INTEGER)).toBe(0);
    const unsigned = new Authorizer({ registry: new PolicyRegistry(root), signer: null, store: null });
    expect((await unsigned.simulate("payments.transfer", "1.2.0", { amount: 1, currency: "USD" })).wouldSign).toBe(false);
  });
});

describe("overrides", () => {
  const human = { approvedBy: "alice@example.com", approverRole: "risk-officer", reason: "known customer" };

  it("resolves a pending entry written by an earlier release, which holds the attestation itself", async () => {
    const pending = await authorizer.evaluate(request({ amount: 50000, currency: "EUR" }));
    const old = await authorizer.evaluate(request({ amount: 50000, currency: "EUR" }));
    const executionId = "written-before";
    const fingerprint = executionFingerprint(executionId);
    const { attestation } = pending;
    const p = attestation.provenance;
    await store.consume(fingerprint, {
      context: {
        execution_fingerprint: fingerprint,
        executionId,
        provenance: { bundleHash: p.bundleHash, signerKeyId: p.signerKeyId, trustRootVersion: p.trustRootVersion },
        attestation: old.attestation,
      },
    });
    const outcome = await resolveOverride({ executionId, approved: false, ...human }, { store, signer });
    expect(outcome.record.attestationHash).toBe(createHash("sha256").update(canonicalize(old.attestation)!).digest("hex"));
  });

  it("an approved override resolves a pending decision once; the proof then matches", async () => {
    const pending = await authorizer.evaluate(request({ amount: 50000, currency: "EUR" }));
    const executionId = pending.attestation.executionId;
    const outcome = await resolveOverride({ executionId, approved: true, ...human }, { store, signer });
    expect(outcome).toMatchObject({
      status: "approved",
      resolution: { status: "executed", execution_fingerprint: executionFingerprint(executionId) },
    });
    await expect(resolveOverride({ executionId, approved: false, ...human }, { store, signer })).rejects.toMatchObject({
      code: "OVERRIDE_ALREADY_RESOLVED",
    });

    // The pending entry names the decision by the SHA-256 of its JCS form (computed by an independent JCS), as the
    // override record does; the attestation itself is the decision's audit record, not copied into the entry.
    const jcsHash = createHash("sha256").update(canonicalize(pending.attestation)!).digest("hex");
    const entry = await store.read(executionFingerprint(executionId));
    expect(entry?.context).toEqual({
      execution_fingerprint: executionFingerprint(executionId),
      executionId,
      provenance: expect.any(Object),
      attestationHash: jcsHash,
    });
    expect(outcome.record.attestationHash).toBe(jcsHash);
    expect(entry?.resolution).toEqual(outcome.record);

    const proof = await confirmExecution(
      pending.attestation,
      { type: "transfer.execute", payload: { amount: 50000, currency: "EUR" }, executedAt: new Date().toISOString() },
      300,
      { verifier: { trustRoot }, signer, store },
    );
    expect(proof.match).toBe(true);
  });

  it("a rejected override answers with the executionId, and the decision stays unauthorized", async () => {
    const pending = await authorizer.evaluate(request({ amount: 50000, currency: "EUR" }));
    const executionId = pending.attestation.executionId;
    expect(await resolveOverride({ executionId, approved: false, ...human }, { store, signer })).toMatchObject({
      status: "rejected",
      executionId,
    });
    const proof = await confirmExecution(
      pending.attestation,
      { type: "transfer.execute", payload: { amount: 50000, currency: "EUR" }, executedAt: new Date().toISOString() },
      300,
      { verifier: { trustRoot }, signer, store },
    );
    expect(proof.match).toBe(false);
  });

  it("of 100 racing overrides exactly one resolves", async () => {
    const pending = await authorizer.evaluate(request({ amount: 50000, currency: "EUR" }));
    const results = await Promise.allSettled(
      Array.from({ length: 100 }, (_, i) =>
        resolveOverride({ executionId: pending.attestation.executionId, approved: i % 2 === 0, ...human }, { store, signer }),
      ),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
  });

  it.each([
    ["no decision at all", async (): Promise<string> => "never-evaluated", "SYS-021"],
    [
      "an approved (not pending) decision",
      async (): Promise<string> => (await authorizer.evaluate(request({ amount: 1, currency: "USD" }))).attestation.executionId,
      "SYS-021",
    ],
  ] as const)("refuses %s with %s", async (_name, setup, code) => {
    const executionId = await setup();
    await expect(resolveOverride({ executionId, approved: true, ...human }, { store, signer })).rejects.toMatchObject({ code });
  });

  it.each([
    ["SYS-022", {}],
    ["SYS-023", { execution_fingerprint: "0".repeat(64), executionId: "x" }],
    ["SYS-025", { execution_fingerprint: executionFingerprint("lineage"), executionId: "lineage" }],
  ] as const)("checks lineage: %s", async (code, context) => {
    const fp = executionFingerprint("lineage");
    const held = await store.reserve(fp);
    if (!held.ok) throw new Error("reserve");
    await store.markPendingOverride(fp, held.entry.token, context);
    const e = await resolveOverride({ executionId: "lineage", approved: true, ...human }, { store, signer }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OverrideError);
    expect((e as OverrideError).code).toBe(code);
  });

  it("refuses a store without override transitions (SYS-024)", async () => {
    const limited = { ...store, read: store.read.bind(store), markPendingOverride: undefined } as unknown as ReplayStore;
    await expect(resolveOverride({ executionId: "x", approved: true, ...human }, { store: limited })).rejects.toMatchObject({
      code: "SYS-024",
    });
  });

  it("signs the override record so an independent Ed25519 library verifies it; without a signer it carries a digest", async () => {
    const pending = await authorizer.evaluate(request({ amount: 50000, currency: "EUR" }));
    const { record } = await resolveOverride({ executionId: pending.attestation.executionId, approved: true, ...human }, { store, signer });
    const { signature, ...body } = record;
    const utf8 = new TextEncoder();
    const jcs = utf8.encode(canonicalize(body)!);
    const msg = new Uint8Array([
      ...utf8.encode(`DSSEv1 ${PAYLOAD_TYPES.override.length} ${PAYLOAD_TYPES.override} ${jcs.length} `),
      ...jcs,
    ]);
    expect(await ed.verifyAsync(new Uint8Array(Buffer.from(signature!, "base64")), msg, key.publicKey.raw, { zip215: false })).toBe(true);
    expect(record).toMatchObject({
      approved_by: "alice@example.com",
      approver_role: "risk-officer",
      reason: "known customer",
      execution_fingerprint: executionFingerprint(pending.attestation.executionId),
    });

    const other = await authorizer.evaluate(request({ amount: 50000, currency: "EUR" }));
    const unsigned = await resolveOverride({ executionId: other.attestation.executionId, approved: true, ...human }, { store });
    expect(unsigned.record.signature).toBeUndefined();
    expect(unsigned.record.digest).toMatch(/^[0-9a-f]{64}$/);
  });
});
