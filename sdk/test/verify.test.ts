/**
 * Offline verification against pinned keys only: attestations (both shapes), override records and Execution
 * Integrity Proofs, made by an embedded authorizer, accepted as they are and refused once changed, signed by another
 * key, unsigned, or tied to another attestation.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  PAYLOAD_TYPES,
  canonicalJson,
  generateSigningKeyPair,
  loadSigningKeyPem,
  sha256Hex,
  signObject,
  type Attestation,
} from "@writ/runtime";
import {
  EmbeddedAuthorizer,
  MemoryReplayStore,
  WritKeyError,
  verifyAttestation,
  verifyExecutionProof,
  verifyOverrideRecord,
  type AttestationV1,
  type OverrideRecord,
} from "@writ/sdk";
import { TRANSFER, TRANSFER_SIGNALS, fixturePoliciesRoot, uid } from "./support.js";

const KEYS = generateSigningKeyPair();
const OTHER = generateSigningKeyPair();
/** SPKI DER of the Ed25519 identity point (small order): node's crypto would accept an all-zero signature for it. */
const SMALL_ORDER_PEM = `-----BEGIN PUBLIC KEY-----\n${Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), Buffer.from([1]), Buffer.alloc(31)]).toString("base64")}\n-----END PUBLIC KEY-----\n`;

let writ: EmbeddedAuthorizer;
let attestation: AttestationV1;
let other: AttestationV1;
let record: OverrideRecord;
let proof: string;

beforeAll(async () => {
  writ = new EmbeddedAuthorizer({
    policiesRoot: await fixturePoliciesRoot(),
    signingKeyPem: KEYS.privateKeyPem,
    store: new MemoryReplayStore(),
  });
  const executionId = uid("v");
  attestation = (await writ.evaluate({ executionId, ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.pending })).attestation;
  other = (await writ.evaluate({ executionId: uid("v"), ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.pending })).attestation;
  record = (await writ.override({ executionId, approved: true, approvedBy: "alice", approverRole: "treasury", reason: "ok" })).record;
  const executedAction = {
    actionType: "transfer.execute",
    actionId: "b",
    actionTimestamp: new Date().toISOString(),
    actionDetails: { amount: 20_000, currency: "EUR" },
  };
  proof = (await writ.confirmExecution({ attestation, executedAction })).proof;
});
afterAll(async () => {
  await writ.close();
});

describe("verifyAttestation", () => {
  it("accepts an attestation signed by a pinned key: one PEM, several, or a trust root document", () => {
    expect(verifyAttestation(attestation, KEYS.publicKeyPem)).toMatchObject({ valid: true, errors: [] });
    expect(verifyAttestation(attestation, [OTHER.publicKeyPem, KEYS.publicKeyPem]).valid).toBe(true);
    const document = { trustRootVersion: "writ-local-1", keys: [KEYS.publicKeyPem] };
    expect(verifyAttestation(attestation, document)).toMatchObject({
      valid: true,
      warnings: expect.not.arrayContaining([expect.stringContaining("trust root")]),
    });
  });

  it("refuses a changed attestation, and one whose signer is not pinned", () => {
    const changed = verifyAttestation({ ...attestation, policyVersion: "1.1.0" }, KEYS.publicKeyPem);
    expect(changed).toMatchObject({ valid: false, checks: { signature_verified: false } });
    const unpinned = verifyAttestation(attestation, OTHER.publicKeyPem);
    expect(unpinned).toMatchObject({ valid: false, undetermined: ["signature"] });
    expect(unpinned.errors[0]).toContain("is not in the pinned trust root");
  });

  it("accepts only the runtimes it is told to", () => {
    const elsewhere = verifyAttestation(attestation, KEYS.publicKeyPem, { acceptedRuntimeHashes: ["0".repeat(64)] });
    expect(elsewhere).toMatchObject({ valid: false, checks: { runtime_verified: false, signature_verified: true } });
  });

  it("answers invalid, without throwing, for what is not an attestation", () => {
    expect(verifyAttestation("attestation", KEYS.publicKeyPem)).toMatchObject({
      valid: false,
      errors: ["attestation is not a JSON object"],
    });
  });

  it("refuses unusable pinned keys with WritKeyError, small-order keys included", () => {
    expect(() => verifyAttestation(attestation, "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")).toThrow(
      expect.objectContaining({ name: "WritKeyError", code: "KEY_INVALID" }),
    );
    expect(() => verifyAttestation(attestation, SMALL_ORDER_PEM)).toThrow(WritKeyError);
    expect(() => verifyAttestation(attestation, SMALL_ORDER_PEM)).toThrow(expect.objectContaining({ code: "KEY_SMALL_ORDER" }));
  });
});

describe("verifyOverrideRecord", () => {
  it("accepts the signed record, and ties it to the decision it resolves", () => {
    expect(verifyOverrideRecord(record, KEYS.publicKeyPem, { attestation })).toEqual({
      valid: true,
      signerKeyId: loadSigningKeyPem(KEYS.privateKeyPem).keyId,
      errors: [],
    });
  });

  it("refuses a changed record, another signer, another decision", () => {
    expect(verifyOverrideRecord({ ...record, approver_role: "intern" }, KEYS.publicKeyPem).valid).toBe(false);
    expect(verifyOverrideRecord(record, OTHER.publicKeyPem)).toMatchObject({ valid: false, signerKeyId: null });
    const elsewhere = verifyOverrideRecord(record, KEYS.publicKeyPem, { attestation: other });
    expect(elsewhere.errors).toEqual([
      "the record resolves another attestation (`attestationHash` differs)",
      "the record names another `execution_fingerprint`",
    ]);
  });

  it("refuses a record that carries only a digest: nothing authenticates it", () => {
    const { signature: _signature, ...body } = record;
    const digestOnly = { ...body, digest: sha256Hex(canonicalJson(body)) };
    expect(verifyOverrideRecord(digestOnly, KEYS.publicKeyPem)).toMatchObject({
      valid: false,
      errors: [expect.stringContaining("carries a digest, not a signature")],
    });
    expect(verifyOverrideRecord([], KEYS.publicKeyPem).errors).toEqual(["the override record is not a JSON object"]);
  });
});

describe("verifyExecutionProof", () => {
  it("accepts the proof text of a confirmation and its parsed form, handing back the proof", () => {
    const checked = verifyExecutionProof(proof, KEYS.publicKeyPem, { attestation });
    expect(checked).toMatchObject({
      valid: true,
      errors: [],
      proof: { executionId: attestation.executionId, match: true, verified: true },
    });
    expect(verifyExecutionProof(JSON.parse(proof) as object, KEYS.publicKeyPem).valid).toBe(true);
  });

  it("refuses a changed proof, another signer, another attestation, and gives no proof then", () => {
    const changed = proof.replace('"match":true', '"match":false');
    expect(verifyExecutionProof(changed, KEYS.publicKeyPem)).toMatchObject({ valid: false, proof: null });
    expect(verifyExecutionProof(proof, OTHER.publicKeyPem)).toMatchObject({ valid: false, signerKeyId: null, proof: null });
    expect(verifyExecutionProof(proof, KEYS.publicKeyPem, { attestation: other as Attestation }).errors).toEqual([
      "the proof confirms another attestation (`authorizationId` differs)",
      "the proof names another `executionId`",
    ]);
  });

  it("parses the text strictly: duplicate members are refused", () => {
    const duplicated = proof.replace('{"authorizationId"', '{"match":false,"authorizationId"');
    expect(verifyExecutionProof(duplicated, KEYS.publicKeyPem)).toMatchObject({
      valid: false,
      errors: [expect.stringContaining("not strict JSON")],
    });
    expect(verifyExecutionProof("[]", KEYS.publicKeyPem).errors).toEqual(["the proof is not a JSON object"]);
  });

  it("refuses a signed proof whose integrityHash does not bind the executed action", () => {
    const { signature: _signature, ...body } = JSON.parse(proof) as Record<string, unknown>;
    const forged = { ...body, integrityHash: "0".repeat(64) };
    const signed = { ...forged, signature: signObject(PAYLOAD_TYPES.executionProof, forged, loadSigningKeyPem(KEYS.privateKeyPem)) };
    expect(verifyExecutionProof(signed, KEYS.publicKeyPem).errors).toEqual([
      "`integrityHash` does not bind the executed action to the authorization",
    ]);
  });
});
