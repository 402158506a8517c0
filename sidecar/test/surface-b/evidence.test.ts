/**
 * The evidence routes on a real listener (spec 2.13, 4.2): `POST /verify` (fresh, kept in the history),
 * `GET /verification/:id` (latest, none run), `POST /receipt` (a new signed receipt), `GET /receipt/latest/:id`,
 * `POST /replay` (signature only), `GET /trust-records/:id`, and `POST /policies/validate` (loadability only).
 */
import { randomUUID } from "node:crypto";
import { cp, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEX64, ISO_INSTANT, SIGNATURE, independentlyVerifies } from "../support/e2e.js";
import { fixturePoliciesRoot } from "../support/policies.js";
import type { Receipt, TrustRecord, Verification } from "@writ/sidecar";
import { RECORD_ID_PATTERN } from "@writ/wire";
import { businessTransaction, publicKeyPem, startSurfaceB, type ErrorReply, type SurfaceB } from "./support.js";

const RECEIPT = "application/vnd.writ.receipt.v1+json";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const answer = (r: { status: number; body: unknown }) => ({ status: r.status, body: r.body });

let b: SurfaceB;
let pem: string;
let record: TrustRecord;
let id: string;
beforeAll(async () => {
  b = await startSurfaceB();
  pem = await publicKeyPem(b.dataDir);
  record = (await b.call<TrustRecord>("POST", "/execute", businessTransaction())).body;
  id = record.businessTransactionId;
});
afterAll(async () => {
  await b.close();
});

const UNKNOWN_IDS = [randomUUID(), "no-such-id", "x".repeat(65), "é"];
/**
 * The answer of a `/:id` GET route for an id no record has: 404 `notFound`, or 400 before any lookup for an id no
 * record can be stored under (over 64 characters, or outside `A-Z a-z 0-9 . _ ~ : -`). In a body, any such id is 404.
 */
const unknownInPath = (unknown: string, notFound: string) =>
  new RegExp(RECORD_ID_PATTERN).test(unknown)
    ? { status: 404, body: { error: notFound } }
    : {
        status: 400,
        body: {
          error: "Invalid request",
          details: [{ path: "params/id", message: expect.stringMatching(/^must (NOT have more than 64 characters|match pattern)/) }],
        },
      };
const BAD_REF_BODIES: readonly (readonly [string, unknown, string])[] = [
  ["an empty body object", {}, "body must have required property 'businessTransactionId'"],
  ["a number id", { businessTransactionId: 1 }, "Invalid request"],
  ["an empty id", { businessTransactionId: "" }, "Invalid request"],
  ["an unknown member", { businessTransactionId: "a", trustRecordHash: "b" }, "Invalid request"],
  ["an array", [], "Invalid request"],
];

describe("POST /verify", () => {
  it("runs a fresh verification: a new id, VERIFIED, the record's hash", async () => {
    const r = await b.call<Verification>("POST", "/verify", { businessTransactionId: id });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      verificationId: expect.stringMatching(UUID),
      businessTransactionId: id,
      status: "VERIFIED",
      message: "record signature, trustRecordHash and execution attestation verified",
      verifiedAt: expect.stringMatching(ISO_INSTANT),
      trustRecordHash: record.trustRecordHash,
    });
    expect(r.body.verificationId).not.toBe(record.verification.verificationId);
  });

  it("each call is a new verification, and the latest is the one stored last", async () => {
    const first = (await b.call<Verification>("POST", "/verify", { businessTransactionId: id })).body;
    const second = (await b.call<Verification>("POST", "/verify", { businessTransactionId: id })).body;
    expect(second.verificationId).not.toBe(first.verificationId);
    expect((await b.call("GET", `/verification/${id}`)).body).toEqual(second);
    expect((await b.call<TrustRecord>("GET", `/trust-records/${id}`)).body.verification).toEqual(second);
  });

  it.each(UNKNOWN_IDS)("an unknown id (%s) is 404", async (unknown) => {
    expect(answer(await b.call("POST", "/verify", { businessTransactionId: unknown }))).toEqual({
      status: 404,
      body: { error: "trust record not found" },
    });
  });

  it.each(BAD_REF_BODIES)("%s is 400", async (_name, body, error) => {
    const r = await b.call<ErrorReply>("POST", "/verify", body);
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 400, error });
  });
});

describe("GET /verification/:id", () => {
  it("answers the latest stored verification without running one", async () => {
    const fresh = await b.call<TrustRecord>("POST", "/execute", businessTransaction());
    const freshId = fresh.body.businessTransactionId as string;
    const latest = await b.call("GET", `/verification/${freshId}`);
    expect(answer(latest)).toEqual({ status: 200, body: fresh.body.verification });
    expect((await b.call("GET", `/verification/${freshId}`)).body).toEqual(fresh.body.verification);
  });

  it.each(UNKNOWN_IDS)("an unknown id (%s) is 404, or 400 when no record can have it", async (unknown) => {
    expect(answer(await b.call("GET", `/verification/${encodeURIComponent(unknown)}`))).toEqual(
      unknownInPath(unknown, "verification not found"),
    );
  });
});

describe("POST /receipt and GET /receipt/latest/:id", () => {
  it("generates a new signed receipt for the record each time; the latest is kept", async () => {
    const r = await b.call<Receipt>("POST", "/receipt", { businessTransactionId: id });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      receiptId: expect.stringMatching(UUID),
      businessTransactionId: id,
      trustRecordHash: record.trustRecordHash,
      policy: { name: "conformance.transfer", version: "1.0.0" },
      executionStatus: "approved",
      issuedAt: expect.stringMatching(ISO_INSTANT),
      signerKeyId: record.signerKeyId,
      trustRootVersion: record.trustRootVersion,
      signature: expect.stringMatching(SIGNATURE),
    });
    expect(r.body.receiptId).not.toBe(record.receipt.receiptId);
    expect(independentlyVerifies(RECEIPT, r.body, pem)).toBe(true);
    expect(independentlyVerifies(RECEIPT, { ...r.body, executionStatus: "rejected" }, pem)).toBe(false);
    expect(answer(await b.call("GET", `/receipt/latest/${id}`))).toEqual({ status: 200, body: r.body });
    expect((await b.call<TrustRecord>("GET", `/trust-records/${id}`)).body.receipt).toEqual(r.body);
  });

  it("the pipeline's receipt is the latest until another is generated", async () => {
    const fresh = (await b.call<TrustRecord>("POST", "/execute", businessTransaction())).body;
    expect((await b.call("GET", `/receipt/latest/${fresh.businessTransactionId}`)).body).toEqual(fresh.receipt);
  });

  it.each(UNKNOWN_IDS)("an unknown id (%s) is 404 on both (400 in the path when no record can have it)", async (unknown) => {
    expect(answer(await b.call("POST", "/receipt", { businessTransactionId: unknown }))).toEqual({
      status: 404,
      body: { error: "trust record not found" },
    });
    expect(answer(await b.call("GET", `/receipt/latest/${encodeURIComponent(unknown)}`))).toEqual(
      unknownInPath(unknown, "receipt not found"),
    );
  });

  it.each(BAD_REF_BODIES)("POST /receipt with %s is 400", async (_name, body, error) => {
    const r = await b.call<ErrorReply>("POST", "/receipt", body);
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 400, error });
  });
});

describe("POST /replay", () => {
  it("re-verifies the record signature only: the hash and verified true", async () => {
    const r = await b.call("POST", "/replay", { businessTransactionId: id });
    expect(answer(r)).toEqual({
      status: 200,
      body: { businessTransactionId: id, trustRecordHash: record.trustRecordHash, verified: true },
    });
  });

  it("stores nothing and runs no verification", async () => {
    const before = (await b.call("GET", `/verification/${id}`)).body;
    await b.call("POST", "/replay", { businessTransactionId: id });
    expect((await b.call("GET", `/verification/${id}`)).body).toEqual(before);
  });

  it.each(UNKNOWN_IDS)("an unknown id (%s) is 404", async (unknown) => {
    expect(answer(await b.call("POST", "/replay", { businessTransactionId: unknown }))).toEqual({
      status: 404,
      body: { error: "trust record not found" },
    });
  });

  it.each(BAD_REF_BODIES)("%s is 400", async (_name, body, error) => {
    const r = await b.call<ErrorReply>("POST", "/replay", body);
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 400, error });
  });
});

describe("GET /trust-records/:id", () => {
  it("answers the full record: the sealed record with its latest verification and receipt", async () => {
    const fresh = (await b.call<TrustRecord>("POST", "/execute", businessTransaction())).body;
    const r = await b.call<TrustRecord>("GET", `/trust-records/${fresh.businessTransactionId}`);
    expect(answer(r)).toEqual({ status: 200, body: fresh });
    expect(r.body.trustRecordHash).toMatch(HEX64);
  });

  it.each(UNKNOWN_IDS)("an unknown id (%s) is 404, or 400 when no record can have it", async (unknown) => {
    expect(answer(await b.call("GET", `/trust-records/${encodeURIComponent(unknown)}`))).toEqual(
      unknownInPath(unknown, "trust record not found"),
    );
  });
});

describe("POST /policies/validate", () => {
  it("a loadable policy version: 200 {valid: true, errors: []}", async () => {
    expect(answer(await b.call("POST", "/policies/validate", { policyId: "conformance.transfer", policyVersion: "1.0.0" }))).toEqual({
      status: 200,
      body: { valid: true, errors: [] },
    });
  });

  it.each([
    ["an unknown version", "conformance.transfer", "9.9.9"],
    ["an unknown policy", "no.such.policy", "1.0.0"],
    ["a policy id that is not a name", "../etc", "1.0.0"],
    ["a version that is not semver", "conformance.transfer", "latest"],
  ])("%s: 404 {valid: false} with one error naming it, no server path", async (_name, policyId, policyVersion) => {
    const r = await b.call<{ valid: boolean; errors: string[] }>("POST", "/policies/validate", { policyId, policyVersion });
    expect(answer(r)).toEqual({
      status: 404,
      body: { valid: false, errors: [`no bundle for policy \`${policyId}\` version \`${policyVersion}\``] },
    });
  });

  it.each([
    ["a missing policyVersion", { policyId: "conformance.transfer" }, "body must have required property 'policyVersion'"],
    ["a missing policyId", { policyVersion: "1.0.0" }, "body must have required property 'policyId'"],
    ["a number", { policyId: "conformance.transfer", policyVersion: 1 }, "Invalid request"],
    ["an unknown member", { policyId: "conformance.transfer", policyVersion: "1.0.0", content: "x" }, "Invalid request"],
  ])("%s is 400", async (_name, body, error) => {
    const r = await b.call<ErrorReply>("POST", "/policies/validate", body);
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 400, error });
  });
});

describe("POST /policies/validate on a bundle that does not load", () => {
  let broken: SurfaceB;
  beforeAll(async () => {
    const root = await mkdtemp(join(tmpdir(), "writ-surface-b-policies-"));
    await cp(await fixturePoliciesRoot(), root, { recursive: true });
    await writeFile(join(root, "conformance.transfer", "1.1.0", "policy.ir.json"), "{}");
    broken = await startSurfaceB({ env: { SERVICE_POLICIES_ROOT: root } });
  });
  afterAll(async () => {
    await broken.close();
  });

  it("a tampered bundle: 404 {valid: false} saying why", async () => {
    const r = await broken.call<{ valid: boolean; errors: string[] }>("POST", "/policies/validate", {
      policyId: "conformance.transfer",
      policyVersion: "1.1.0",
    });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({
      valid: false,
      errors: [expect.stringMatching(/^bundle of policy `conformance\.transfer` version `1\.1\.0` does not load: /)],
    });
    expect(JSON.stringify(r.body)).not.toContain(tmpdir());
  });
});
