/**
 * Execution integrity proofs (spec 2.9): the three checks, authorization (approval, or an approved override),
 * once per executionId, a bad attestation refused, and a proof that verifies in its own signing domain.
 */
import * as ed from "@noble/ed25519";
import canonicalize from "canonicalize";
import { describe, expect, it } from "vitest";
import {
  IntegrityError,
  MemoryReplayStore,
  PAYLOAD_TYPES,
  buildManifest,
  createAttestation,
  createRuntimeIdentity,
  createSigner,
  createTrustRoot,
  confirmExecution,
  executionFingerprint,
  verifyObject,
  type DecisionRecord,
  type ExecutedAction,
  type ReplayStore,
} from "../../src/index.js";
import { TEST_SEED_1, keyFromSeed } from "../support/signer.js";

const key = keyFromSeed(TEST_SEED_1);
const trustRoot = createTrustRoot("tr-1", [key.publicKey]);
const signer = createSigner(key, trustRoot);
const runtime = createRuntimeIdentity(signer);
const utf8 = new TextEncoder();
const bundle = buildManifest(
  { policyId: "payments.transfer", version: "1.2.0", governs: "transfer.execute", compiler: { name: "writ", version: "0.1.0" } },
  new Map([
    ["policy.writ", utf8.encode("s")],
    ["signals.schema.json", utf8.encode("{}")],
    ["policy.ir.json", utf8.encode("{}")],
  ]),
);
const ISSUED = "2026-11-22T10:00:00.000Z";
let counter = 0;

function attest(verdict: DecisionRecord["verdict"]) {
  const executionId = `exec-${++counter}`;
  return createAttestation(
    {
      executionId,
      bundle,
      binding: ["amount", "currency"],
      signals: { amount: 250, currency: "EUR", kyc: true },
      verdict,
      reason: "r",
      issuedAt: ISSUED,
    },
    signer,
    runtime,
  );
}

const action = (over: Partial<ExecutedAction> = {}): ExecutedAction => ({
  type: "transfer.execute",
  payload: { amount: 250, currency: "EUR", memo: "rent" },
  executedAt: "2026-11-22T10:01:00.000Z",
  ...over,
});

function deps(store: ReplayStore, nowIso = "2026-11-22T10:02:00.000Z") {
  return { verifier: { trustRoot }, signer, store, now: () => new Date(nowIso) };
}

describe("confirmExecution", () => {
  it("matches an approved action executed as authorized, and signs the proof in its own domain", async () => {
    const store = new MemoryReplayStore();
    const proof = await confirmExecution(attest("approve"), action(), 300, deps(store));
    expect(proof.match).toBe(true);
    expect(proof.matchDetails).toEqual({
      actionTypeMatch: true,
      payloadConsistent: true,
      withinTimeWindow: true,
      timeWindowSeconds: 300,
      executionAuthorized: true,
    });
    expect(proof.verified).toBe(true);
    expect(proof.confirmedAt).toBe("2026-11-22T10:02:00.000Z");
    expect(verifyObject(PAYLOAD_TYPES.executionProof, proof, proof.signature, [key.publicKey])).not.toBeNull();
    expect(verifyObject(PAYLOAD_TYPES.attestation, proof, proof.signature, [key.publicKey])).toBeNull();
    // An independent Ed25519 library, from docs/signing.md alone.
    const { signature, ...body } = proof;
    const utf8 = new TextEncoder();
    const jcs = utf8.encode(canonicalize(body)!);
    const type = "application/vnd.writ.execution-proof.v1+json";
    const msg = new Uint8Array([...utf8.encode(`DSSEv1 ${type.length} ${type} ${jcs.length} `), ...jcs]);
    expect(await ed.verifyAsync(new Uint8Array(Buffer.from(signature, "base64")), msg, key.publicKey.raw, { zip215: false })).toBe(true);
  });

  it.each([
    ["another action type", action({ type: "transfer.cancel" }), "actionTypeMatch"],
    ["a changed bound signal", action({ payload: { amount: 2500, currency: "EUR" } }), "payloadConsistent"],
    ["a missing bound signal", action({ payload: { amount: 250 } }), "payloadConsistent"],
    ["a bound signal of another type", action({ payload: { amount: "250", currency: "EUR" } }), "payloadConsistent"],
    ["an action stamped before its authorization", action({ executedAt: "2026-11-22T09:59:59.999Z" }), "withinTimeWindow"],
    ["an action stamped after the confirmation", action({ executedAt: "2026-11-22T10:02:00.001Z" }), "withinTimeWindow"],
    ["an unreadable timestamp", action({ executedAt: "yesterday" }), "withinTimeWindow"],
  ] as const)("does not match %s", async (_name, executed, failing) => {
    const proof = await confirmExecution(attest("approve"), executed, 300, deps(new MemoryReplayStore()));
    expect(proof.match).toBe(false);
    expect(proof.matchDetails[failing]).toBe(false);
  });

  it("applies the time window between execution and confirmation", async () => {
    const late = deps(new MemoryReplayStore(), "2026-11-22T10:06:00.001Z");
    expect((await confirmExecution(attest("approve"), action(), 300, late)).matchDetails.withinTimeWindow).toBe(false);
    const wide = deps(new MemoryReplayStore(), "2026-11-22T10:06:00.001Z");
    expect((await confirmExecution(attest("approve"), action(), 600, wide)).match).toBe(true);
  });

  it("does not match a rejection, nor an escalation before its override is approved", async () => {
    const store = new MemoryReplayStore();
    const rejected = await confirmExecution(attest("reject"), action(), 300, deps(store));
    expect(rejected.match).toBe(false);
    expect(rejected.matchDetails.executionAuthorized).toBe(false);

    const escalated = attest("escalate");
    const fp = executionFingerprint(escalated.executionId);
    const held = await store.reserve(fp);
    if (!held.ok) throw new Error("reserve failed");
    await store.markPendingOverride(fp, held.entry.token, { escalated: true });
    expect((await confirmExecution(escalated, action(), 300, deps(store))).match).toBe(false);

    const approvedLater = attest("escalate");
    const fp2 = executionFingerprint(approvedLater.executionId);
    const held2 = await store.reserve(fp2);
    if (!held2.ok) throw new Error("reserve failed");
    await store.markPendingOverride(fp2, held2.entry.token, {});
    await store.resolveOverride(fp2, held2.entry.token, true);
    expect((await confirmExecution(approvedLater, action(), 300, deps(store))).match).toBe(true);
  });

  it("confirms an executionId once (INTEGRITY_ALREADY_CONFIRMED), even when confirmations race", async () => {
    const store = new MemoryReplayStore();
    const att = attest("approve");
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => confirmExecution(att, action(), 300, deps(store))));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results.filter((r): r is PromiseRejectedResult => r.status === "rejected")) {
      expect(r.reason).toBeInstanceOf(IntegrityError);
      expect((r.reason as IntegrityError).code).toBe("INTEGRITY_ALREADY_CONFIRMED");
    }
  });

  it("refuses an attestation whose signature fails (INTEGRITY_INVALID_ATTESTATION) and consumes nothing", async () => {
    const store = new MemoryReplayStore();
    const att = attest("approve");
    const forged = { ...att, actionBinding: { amount: 999999, currency: "EUR" } };
    await expect(confirmExecution(forged, action(), 300, deps(store))).rejects.toMatchObject({ code: "INTEGRITY_INVALID_ATTESTATION" });
    // The genuine attestation can still be confirmed afterwards.
    expect((await confirmExecution(att, action(), 300, deps(store))).match).toBe(true);
  });
});
