/**
 * The shapes of Surface B (spec 2.13; what the spec leaves open is fixed in docs/surface-b.md):
 *
 *   Execution Trust Record = sealed record + `verification` (latest) + `receipt` (latest)
 *   sealed record          = Business Transaction + `execution` + seal (`signerKeyId`, `trustRootVersion`,
 *                            `trustRecordHash`, `signature`)
 *
 * The sealed record never changes once written; verifications and receipts are appended beside it, each its own
 * history, so re-verifying or issuing a receipt never touches what the signature covers.
 */
import type { AttestationV1, Evaluated } from "@writ/runtime";

/** Spec 2.13: the members a Business Transaction has; `POST /transactions` accepts exactly these (sections open). */
export const TRANSACTION_MEMBERS = ["businessTransactionId", "metadata", "authority", "authorization", "intent", "policy", "signals", "status", "createdAt"] as const;

export interface BusinessTransaction {
  readonly businessTransactionId: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly authority?: Readonly<Record<string, unknown>>;
  readonly authorization?: Readonly<Record<string, unknown>>;
  readonly intent?: Readonly<Record<string, unknown>>;
  readonly policy: { readonly name: string; readonly version: string };
  readonly signals: Readonly<Record<string, unknown>>;
  /** `RECEIVED` from `POST /execute`; as given (default `SUBMITTED`) from `POST /transactions`. */
  readonly status: string;
  readonly createdAt: string;
}

/** The execution: the runtime's decision on the transaction, exactly the evaluate response of spec 2.4. */
export type Execution = Evaluated<AttestationV1>;

/** Who sealed the record: the signature verifies with the trust root's key `signerKeyId`. */
export interface Seal {
  readonly signerKeyId: string;
  readonly trustRootVersion: string;
  /** Lowercase hex SHA-256 of JCS(sealed record without `signature` and `trustRecordHash`). */
  readonly trustRecordHash: string;
  /** Ed25519 over PAE(`application/vnd.writ.trust-record.v1+json`, JCS(sealed record without `signature`)). */
  readonly signature: string;
}

export type SealedRecord = BusinessTransaction & { readonly execution: Execution } & Seal;

/** `VERIFIED` (spec 2.13) when every check of docs/surface-b.md passes; `FAILED` otherwise, `message` saying why. */
export type VerificationStatus = "VERIFIED" | "FAILED";

/** Spec 2.13's verification response; `trustRecordHash` is recomputed from the record as it is stored now. */
export interface Verification {
  readonly verificationId: string;
  readonly businessTransactionId: string;
  readonly status: VerificationStatus;
  readonly message: string;
  readonly verifiedAt: string;
  readonly trustRecordHash: string;
}

/** A signed statement that, when it was issued, the record with `trustRecordHash` verified. */
export interface Receipt {
  readonly receiptId: string;
  readonly businessTransactionId: string;
  readonly trustRecordHash: string;
  readonly policy: { readonly name: string; readonly version: string };
  readonly executionStatus: Execution["status"];
  readonly issuedAt: string;
  readonly signerKeyId: string;
  readonly trustRootVersion: string;
  /** Ed25519 over PAE(`application/vnd.writ.receipt.v1+json`, JCS(receipt without `signature`)). */
  readonly signature: string;
}

export type TrustRecord = SealedRecord & { readonly verification: Verification; readonly receipt: Receipt };

/** Spec 2.13's replay response. */
export interface ReplayResult {
  readonly businessTransactionId: string;
  readonly trustRecordHash: string;
  readonly verified: boolean;
}
