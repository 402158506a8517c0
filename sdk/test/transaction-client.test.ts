/**
 * Every method of the Surface B client (the 13 routes of spec 4.2) against a real listening sidecar, with the answer
 * shapes of spec 2.13 and the execution's attestation verifying offline against the pinned key.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyAttestation, type TransactionClient } from "@writ/sdk";
import { TRANSFER, TRANSFER_SIGNALS, businessTransaction, startSidecar, type Running } from "./support.js";

let s: Running;
let b: TransactionClient;
beforeAll(async () => {
  s = await startSidecar({}, { surfaceB: true });
  b = s.b!;
});
afterAll(async () => {
  await s.close();
});

const keys = (value: object) => Object.keys(value).sort();
const RECORD_MEMBERS = [
  "authority",
  "authorization",
  "businessTransactionId",
  "createdAt",
  "execution",
  "intent",
  "metadata",
  "policy",
  "receipt",
  "signals",
  "signature",
  "signerKeyId",
  "status",
  "trustRecordHash",
  "trustRootVersion",
  "verification",
];

describe("service routes", () => {
  it("health is exactly {status: UP}", async () => {
    expect(await b.health()).toEqual({ status: "UP" });
  });

  it("version is the hardcoded name, version and api", async () => {
    expect(await b.version()).toEqual({ name: "writ", version: "0.4.0", api: "v1" });
  });

  it("validatePolicy: valid for a loadable version; the 404 answer is a result, not an error", async () => {
    expect(await b.validatePolicy(TRANSFER.policyId, TRANSFER.policyVersion)).toEqual({ valid: true, errors: [] });
    const missing = await b.validatePolicy(TRANSFER.policyId, "9.9.9");
    expect(missing.valid).toBe(false);
    expect(missing.errors).toHaveLength(1);
  });
});

describe("transactions", () => {
  it("execute: the whole Execution Trust Record, status forced to RECEIVED", async () => {
    const transaction = { ...businessTransaction(), status: "SHIPPED" };
    const record = await b.execute(transaction);
    expect(keys(record)).toEqual(RECORD_MEMBERS);
    expect(record.status).toBe("RECEIVED");
    expect(record.execution).toMatchObject({ status: "approved", requires_override: false });
    expect(record.verification).toMatchObject({
      status: "VERIFIED",
      businessTransactionId: transaction.businessTransactionId,
      trustRecordHash: record.trustRecordHash,
    });
    expect(record.receipt).toMatchObject({ businessTransactionId: transaction.businessTransactionId, executionStatus: "approved" });
    expect(verifyAttestation(record.execution.attestation, s.publicKeyPem).valid).toBe(true);
  });

  it("createTransaction: the body used as given (any id, status kept), executed as well", async () => {
    const id = `order-${randomUUID()}`;
    const record = await b.createTransaction({
      businessTransactionId: id,
      policy: { name: TRANSFER.policyId, version: TRANSFER.policyVersion },
      signals: TRANSFER_SIGNALS.pending,
      status: "DRAFT",
    });
    expect(record).toMatchObject({ businessTransactionId: id, status: "DRAFT" });
    expect(record.execution.status).toBe("pending_override");
  });

  it("transaction: the stored Business Transaction, without the evidence", async () => {
    const transaction = businessTransaction();
    const record = await b.execute(transaction);
    const stored = await b.transaction(transaction.businessTransactionId);
    expect(keys(stored)).toEqual([
      "authority",
      "authorization",
      "businessTransactionId",
      "createdAt",
      "intent",
      "metadata",
      "policy",
      "signals",
      "status",
    ]);
    expect(stored).toMatchObject({
      businessTransactionId: transaction.businessTransactionId,
      status: "RECEIVED",
      createdAt: record.createdAt,
    });
  });

  it("listTransactions: pages, oldest first", async () => {
    const first = await b.listTransactions();
    expect(keys(first)).toEqual(["items", "page", "pageSize", "total"]);
    expect(first).toMatchObject({ page: 1, pageSize: 20 });
    const executed = await b.execute(businessTransaction());
    const total = first.total + 1;
    const last = await b.listTransactions({ page: total, pageSize: 1 });
    expect(last).toMatchObject({ page: total, pageSize: 1, total });
    expect(last.items.map((t) => t.businessTransactionId)).toEqual([executed.businessTransactionId]);
  });
});

describe("evidence", () => {
  it("trustRecord, verify, latestVerification, issueReceipt, latestReceipt, replay", async () => {
    const id = (await b.execute(businessTransaction())).businessTransactionId;
    const record = await b.trustRecord(id);
    expect(keys(record)).toEqual(RECORD_MEMBERS);

    const verification = await b.verify(id);
    expect(keys(verification)).toEqual(["businessTransactionId", "message", "status", "trustRecordHash", "verificationId", "verifiedAt"]);
    expect(verification).toMatchObject({ status: "VERIFIED", trustRecordHash: record.trustRecordHash });
    expect(await b.latestVerification(id)).toEqual(verification);

    const receipt = await b.issueReceipt(id);
    expect(receipt.receiptId).not.toBe(record.receipt.receiptId);
    expect(await b.latestReceipt(id)).toEqual(receipt);

    expect(await b.replay(id)).toEqual({ businessTransactionId: id, trustRecordHash: record.trustRecordHash, verified: true });
  });
});
