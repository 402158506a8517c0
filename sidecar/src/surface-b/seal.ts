/**
 * Sealing a trust record and signing receipts, by docs/signing.md's one rule: Ed25519 over
 * PAE(payloadType, JCS(object without "signature")), signed through the signer's engine and self-verified (runtime
 * `signObjectVerified`), like attestations.
 *
 * `trustRecordHash` is the SHA-256 (lowercase hex) of JCS(sealed record without `signature` and `trustRecordHash`),
 * and the signature covers the record with its `trustRecordHash`: changing the hash member breaks the signature too.
 */
import { randomUUID } from "node:crypto";
import { PAYLOAD_TYPES, canonicalJson, sha256Hex, signObjectVerified, type Signer } from "@writ/runtime";
import type { BusinessTransaction, Execution, Receipt, SealedRecord } from "../trust-records/types.js";

/** `trustRecordHash` of any stored value: a record changed on disk need not be an object any more. */
export function trustRecordHashOf(value: unknown): string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return sha256Hex(canonicalJson(value));
  const { signature: _signature, trustRecordHash: _hash, ...hashed } = value as Record<string, unknown>;
  return sha256Hex(canonicalJson(hashed));
}

export async function sealRecord(transaction: BusinessTransaction, execution: Execution, signer: Signer): Promise<SealedRecord> {
  const unhashed = { ...transaction, execution, signerKeyId: signer.key.keyId, trustRootVersion: signer.trustRoot.version };
  const unsigned = { ...unhashed, trustRecordHash: trustRecordHashOf(unhashed) };
  return { ...unsigned, signature: await signObjectVerified(PAYLOAD_TYPES.trustRecord, unsigned, signer.key, signer.engine) };
}

/** A new receipt for `record`, which the caller has just verified (a receipt vouches for what it names). */
export async function issueReceipt(record: SealedRecord, signer: Signer, issuedAt: string): Promise<Receipt> {
  const unsigned = {
    receiptId: randomUUID(),
    businessTransactionId: record.businessTransactionId,
    trustRecordHash: record.trustRecordHash,
    policy: { name: record.policy.name, version: record.policy.version },
    executionStatus: record.execution.status,
    issuedAt,
    signerKeyId: signer.key.keyId,
    trustRootVersion: signer.trustRoot.version,
  };
  return { ...unsigned, signature: await signObjectVerified(PAYLOAD_TYPES.receipt, unsigned, signer.key, signer.engine) };
}
