/**
 * `POST /execute` on a real listener (spec 1.12, 2.13, 3, 4.2): the UUID check before anything runs, `status` and
 * `createdAt` forced, the synchronous pipeline (execution with its attestation, verification, receipt), the signed
 * record checked by an independent implementation of docs/signing.md, and the evaluation's refusals answered
 * with the error table's bodies and nothing stored.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTrustRoot, loadPublicKeyPem, verifyAttestation, type AttestationV1 } from "@writ/runtime";
import { ISO_INSTANT, SIGNATURE, independentSignalsHash, independentlyVerifies, sha256OfJcs } from "../support/e2e.js";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import type { TrustRecord } from "@writ/sidecar";
import { businessTransaction, publicKeyPem, startSurfaceB, without, type ErrorReply, type Json, type SurfaceB } from "./support.js";

let b: SurfaceB;
let pem: string;
beforeAll(async () => {
  b = await startSurfaceB();
  pem = await publicKeyPem(b.dataDir);
});
afterAll(async () => {
  await b.close();
});

const TRUST_RECORD = "application/vnd.writ.trust-record.v1+json";
const RECEIPT = "application/vnd.writ.receipt.v1+json";
const INVALID_UUID = { status: 400, body: { error: "businessTransactionId must be a valid UUID." } };

const execute = <T = TrustRecord>(body: unknown) => b.call<T>("POST", "/execute", body);
const answer = (r: { status: number; body: unknown }) => ({ status: r.status, body: r.body });

describe("the Execution Trust Record", () => {
  it("is the transaction with its execution, seal, verification and receipt, answered 200", async () => {
    const sent = businessTransaction();
    const r = await execute(sent);
    expect(r.status).toBe(200);
    const record = r.body;
    expect(
      without(
        record,
        "status",
        "createdAt",
        "execution",
        "signerKeyId",
        "trustRootVersion",
        "trustRecordHash",
        "signature",
        "verification",
        "receipt",
      ),
    ).toEqual(without(sent, "status", "createdAt"));
    expect(record).toMatchObject({
      status: "RECEIVED",
      createdAt: expect.stringMatching(ISO_INSTANT),
      signature: expect.stringMatching(SIGNATURE),
    });
    expect(record.execution).toMatchObject({ status: "approved", requires_override: false });
    expect(record.verification).toEqual({
      verificationId: expect.any(String),
      businessTransactionId: sent.businessTransactionId,
      status: "VERIFIED",
      message: "record signature, trustRecordHash and execution attestation verified",
      verifiedAt: expect.stringMatching(ISO_INSTANT),
      trustRecordHash: record.trustRecordHash,
    });
    expect(record.receipt).toEqual({
      receiptId: expect.any(String),
      businessTransactionId: sent.businessTransactionId,
      trustRecordHash: record.trustRecordHash,
      policy: { name: "conformance.transfer", version: "1.0.0" },
      executionStatus: "approved",
      issuedAt: expect.stringMatching(ISO_INSTANT),
      signerKeyId: record.signerKeyId,
      trustRootVersion: record.trustRootVersion,
      signature: expect.stringMatching(SIGNATURE),
    });
  });

  it("is sealed per docs/signing.md and its trustRecordHash is SHA-256 of JCS(record without signature and hash)", async () => {
    const record = (await execute(businessTransaction())).body;
    const sealed = without(record, "verification", "receipt");
    expect(independentlyVerifies(TRUST_RECORD, sealed, pem)).toBe(true);
    expect(record.trustRecordHash).toBe(sha256OfJcs(without(sealed, "signature", "trustRecordHash")));
    // The signature covers the hash member too, and no other domain accepts it.
    expect(independentlyVerifies(TRUST_RECORD, { ...sealed, trustRecordHash: "0".repeat(64) }, pem)).toBe(false);
    expect(independentlyVerifies("application/vnd.writ.attestation.v1+json", sealed, pem)).toBe(false);
    expect(independentlyVerifies(RECEIPT, record.receipt, pem)).toBe(true);
  });

  it("carries the runtime's attestation for the businessTransactionId, verifiable offline", async () => {
    const sent = businessTransaction();
    const attestation: AttestationV1 = (await execute(sent)).body.execution.attestation;
    expect(attestation).toMatchObject({
      executionId: sent.businessTransactionId,
      policyId: "conformance.transfer",
      policyVersion: "1.0.0",
      signalsHash: independentSignalsHash(TRANSFER_SIGNALS.approved),
    });
    const key = loadPublicKeyPem(pem);
    expect(verifyAttestation(attestation, { trustRoot: createTrustRoot(attestation.provenance.trustRootVersion, [key]) }).valid).toBe(true);
    expect(independentlyVerifies("application/vnd.writ.attestation.v1+json", attestation, pem)).toBe(true);
  });

  it.each([
    ["pending", "pending_override", true],
    ["rejected", "rejected", false],
  ] as const)("records a %s decision as such, verified and with a receipt", async (signals, status, requiresOverride) => {
    const r = await execute(businessTransaction({ signals: TRANSFER_SIGNALS[signals] }));
    expect(r.status).toBe(200);
    expect(r.body.execution).toMatchObject({ status, requires_override: requiresOverride });
    expect(r.body.verification.status).toBe("VERIFIED");
    expect(r.body.receipt.executionStatus).toBe(status);
  });

  it("forces status RECEIVED and createdAt to now, whatever the client sent", async () => {
    const before = Date.now();
    const r = await execute(businessTransaction({ status: "SUBMITTED", createdAt: "1999-01-01T00:00:00Z" }));
    expect(r.body.status).toBe("RECEIVED");
    expect(Date.parse(r.body.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    for (const status of [42, null, { a: 1 }, "APPROVED"]) {
      expect((await execute(businessTransaction({ status, createdAt: status }))).body.status).toBe("RECEIVED");
    }
  });

  it("accepts an uppercase UUID (the pattern is case-insensitive) and keeps it as sent", async () => {
    const id = randomUUID().toUpperCase();
    const r = await execute(businessTransaction({ businessTransactionId: id }));
    expect(r.status).toBe(200);
    expect(r.body.businessTransactionId).toBe(id);
    expect((await b.call("GET", `/trust-records/${id}`)).status).toBe(200);
  });

  it("is stored: GET /trust-records/:id answers the same record", async () => {
    const record = (await execute(businessTransaction())).body;
    expect((await b.call("GET", `/trust-records/${record.businessTransactionId}`)).body).toEqual(record);
  });
});

describe("the UUID check comes first (400, the spec's exact message)", () => {
  const base = "123e4567-e89b-42d3-a456-426614174000";
  it.each([
    ["wrong length (short)", base.slice(0, -1)],
    ["wrong length (long)", `${base}0`],
    ["non-hex digit", base.replace("e4567", "g4567")],
    ["version digit 0", "123e4567-e89b-02d3-a456-426614174000"],
    ["version digit 6", "123e4567-e89b-62d3-a456-426614174000"],
    ["variant digit c", "123e4567-e89b-42d3-c456-426614174000"],
    ["variant digit 7", "123e4567-e89b-42d3-7456-426614174000"],
    ["missing dashes", base.replaceAll("-", "")],
    ["dashes misplaced", "123e456-7e89b-42d3-a456-426614174000"],
    ["braces", `{${base}}`],
    ["urn prefix", `urn:uuid:${base}`],
    ["surrounding blanks", ` ${base} `],
    ["empty", ""],
    ["a number", 12345],
    ["null", null],
  ])("%s", async (_name, id) => {
    expect(answer(await execute(businessTransaction({ businessTransactionId: id })))).toEqual(INVALID_UUID);
  });

  it("an absent businessTransactionId", async () => {
    const { businessTransactionId: _id, ...rest } = businessTransaction();
    expect(answer(await execute(rest))).toEqual(INVALID_UUID);
  });

  it("before any other check: a body with nothing else right still gets the UUID message", async () => {
    expect(answer(await execute({ businessTransactionId: "nope", policy: 7, extra: true }))).toEqual(INVALID_UUID);
    expect(answer(await execute([]))).toEqual(INVALID_UUID);
    expect(answer(await execute({}))).toEqual(INVALID_UUID);
  });

  it("every valid version (1 to 5) and variant (8, 9, a, b) passes the check", async () => {
    for (const [version, variant] of [
      ["1", "8"],
      ["2", "9"],
      ["3", "a"],
      ["4", "b"],
      ["5", "B"],
    ]) {
      const id = `${randomUUID().slice(0, 14)}${version}${randomUUID().slice(15, 19)}${variant}${randomUUID().slice(20)}`;
      expect((await execute(businessTransaction({ businessTransactionId: id }))).status, id).toBe(200);
    }
  });

  it("nothing is stored for a refused id", async () => {
    expect(answer(await execute(businessTransaction({ businessTransactionId: "not-a-uuid" })))).toEqual(INVALID_UUID);
    expect((await b.call("GET", "/trust-records/not-a-uuid")).status).toBe(404);
  });
});

describe("the rest of the body (400 in Surface A's style)", () => {
  it.each(["metadata", "authority", "authorization", "intent", "policy", "signals"])("missing %s", async (name) => {
    const body = without(businessTransaction(), name);
    expect(answer(await execute(body))).toEqual({ status: 400, body: { error: `body must have required property '${name}'` } });
  });

  it.each([
    ["metadata", "correlationId"],
    ["authority", "authorityType"],
    ["authorization", "purpose"],
    ["intent", "resource"],
    ["policy", "version"],
  ])("missing %s.%s", async (section, member) => {
    const body = businessTransaction();
    body[section] = without(body[section] as Json, member);
    expect(answer(await execute(body))).toEqual({
      status: 400,
      body: { error: `body/${section} must have required property '${member}'` },
    });
  });

  it.each([
    ["an unknown member", { extra: 1 }, "body"],
    ["an unknown section member", { policy: { name: "conformance.transfer", version: "1.0.0", tenant: "x" } }, "body/policy"],
    ["a section that is not an object", { authority: "alice" }, "body/authority"],
    ["signals that are not an object", { signals: [1, 2] }, "body/signals"],
    [
      "a timestamp that is not ISO 8601",
      { authorization: { authorizationId: "a", authorityId: "b", purpose: "c", authorizedAt: "yesterday" } },
      "body/authorization/authorizedAt",
    ],
    ["an empty policy name", { policy: { name: "", version: "1.0.0" } }, "body/policy/name"],
  ])("%s is 400 Invalid request with its path", async (_name, change, path) => {
    const r = await execute<ErrorReply>(businessTransaction(change));
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: "Invalid request", details: [expect.objectContaining({ path })] });
  });

  it("a body that is not strict JSON is 400", async () => {
    const id = randomUUID();
    const r = await execute<ErrorReply>(`{"businessTransactionId":"${id}","businessTransactionId":"${id}"}`);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("Invalid request");
  });
});

describe("refusals of the evaluation: the error table's answer, nothing stored", () => {
  async function refusedAndNotStored(body: Json, expected: { status: number; error: string }): Promise<void> {
    const r = await execute<ErrorReply>(body);
    expect({ status: r.status, error: r.body.error }).toEqual(expected);
    const id = String(body["businessTransactionId"]);
    expect((await b.call("GET", `/trust-records/${id}`)).status).toBe(404);
    expect((await b.call("GET", `/transactions/${id}`)).status).toBe(404);
  }

  it("signals failing the policy schema: 422 with every failure in details; the id stays usable", async () => {
    const body = businessTransaction({ signals: { amount: -1, currency: "XXX", kyc_verified: true, risk_score: 10 } });
    const r = await execute<ErrorReply>(body);
    expect(r.status).toBe(422);
    expect(r.body).toEqual({
      error: "Signal validation failed",
      details: expect.arrayContaining([expect.objectContaining({ code: "VAL-011" }), expect.objectContaining({ code: "VAL-010" })]),
    });
    await refusedAndNotStored(body, { status: 422, error: "Signal validation failed" });
    expect((await execute({ ...body, signals: TRANSFER_SIGNALS.approved })).status).toBe(200);
  });

  it("a policy version that does not exist: 404 Policy not found", async () => {
    await refusedAndNotStored(businessTransaction({ policy: { name: "conformance.transfer", version: "9.9.9" } }), {
      status: 404,
      error: "Policy not found",
    });
    await refusedAndNotStored(businessTransaction({ policy: { name: "../../etc", version: "1.0.0" } }), {
      status: 404,
      error: "Policy not found",
    });
  });

  it("an undecided evaluation: 422 SYS-006", async () => {
    const body = businessTransaction({ policy: { name: "conformance.undecided", version: "1.0.0" }, signals: { flag: false } });
    await refusedAndNotStored(body, {
      status: 422,
      error: "[SYS-006@evaluate] policy evaluation undecided: no rule matched and the policy has no catch-all",
    });
  });

  it("a businessTransactionId executed before: 422 INV-013, the first record unchanged", async () => {
    const body = businessTransaction();
    const first = (await execute(body)).body;
    const again = await execute({ ...body, signals: TRANSFER_SIGNALS.rejected });
    expect(answer(again)).toEqual({ status: 422, body: { error: "[INV-013@replay] execution already consumed: use a new executionId" } });
    const stored = (await b.call<TrustRecord>("GET", `/trust-records/${first.businessTransactionId}`)).body;
    expect(without(stored, "verification", "receipt")).toEqual(without(first, "verification", "receipt"));
  });

  it("an id already used by Surface A's /evaluate: 422 INV-013 (one replay store for both surfaces)", async () => {
    const id = randomUUID();
    const a = await b.running.call("POST", "/evaluate", {
      executionId: id,
      policyId: "conformance.transfer",
      policyVersion: "1.0.0",
      verifiedSignals: TRANSFER_SIGNALS.approved,
    });
    expect(a.status).toBe(200);
    await refusedAndNotStored(businessTransaction({ businessTransactionId: id }), {
      status: 422,
      error: "[INV-013@replay] execution already consumed: use a new executionId",
    });
  });

  it("concurrent executions of one id: exactly one record, the others INV-013", async () => {
    const body = businessTransaction();
    const replies = await Promise.all(Array.from({ length: 8 }, () => execute(body)));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    expect(replies.filter((r) => r.status === 422)).toHaveLength(7);
  });
});
