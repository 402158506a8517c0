/**
 * Surface B, the business-transaction API (spec 2.13, 4.2). What the spec leaves open (the execution, the seal, the
 * receipt, the listing) is docs/surface-b.md's:
 *
 *   Execution Trust Record = sealed record + `verification` (latest) + `receipt` (latest)
 *   sealed record          = Business Transaction + `execution` + seal
 *
 * Identifiers are compared exactly as sent; timestamps are ISO 8601.
 */
import type { JsonObject, Signals } from "./common.js";
import type { EvaluateResponse } from "./surface-a.js";

/** The policy version a transaction is executed under. */
export interface PolicyRef {
  readonly name: string;
  /** Semantic version. */
  readonly version: string;
}

/** `metadata` of a `POST /execute` transaction. */
export type TransactionMetadata = { readonly businessTransactionId: string; readonly correlationId: string; readonly createdBy: string; readonly createdAt: string };
/** `authority`: who acts (`authorityType` `USER` is the one the spec shows). */
export type TransactionAuthority = { readonly authorityId: string; readonly authorityType: string; readonly principalId: string; readonly displayName: string; readonly issuedAt: string };
/** `authorization`: what the authority was authorized for. */
export type TransactionAuthorization = { readonly authorizationId: string; readonly authorityId: string; readonly purpose: string; readonly authorizedAt: string };
/** `intent`: the action on a resource. */
export type TransactionIntent = { readonly intentId: string; readonly authorizationId: string; readonly action: string; readonly resource: string; readonly issuedAt: string };

/**
 * `POST /execute`: the whole Business Transaction (spec 2.13). Sections are closed, their members non-empty strings
 * of at most 1,024 characters, the four timestamps ISO 8601 instants with a zone.
 */
export interface ExecuteTransactionRequest {
  /** A UUID (versions 1 to 5); anything else is 400 `businessTransactionId must be a valid UUID.` before any execution. */
  readonly businessTransactionId: string;
  readonly metadata: TransactionMetadata;
  readonly authority: TransactionAuthority;
  readonly authorization: TransactionAuthorization;
  readonly intent: TransactionIntent;
  readonly policy: PolicyRef;
  readonly signals: Signals;
  /** Accepted and replaced: the service sets `RECEIVED` and the current time (spec 3). */
  readonly status?: unknown;
  readonly createdAt?: unknown;
}

/** `POST /transactions`: used as given (spec 4.2): sections optional and open, `status` (default `SUBMITTED`) and `createdAt` kept. */
export interface CreateTransactionRequest {
  /** Any id of 1 to 64 characters `A-Z a-z 0-9 . _ ~ : -`. */
  readonly businessTransactionId: string;
  readonly metadata?: JsonObject;
  readonly authority?: JsonObject;
  readonly authorization?: JsonObject;
  readonly intent?: JsonObject;
  readonly policy: PolicyRef;
  readonly signals: Signals;
  /** 1 to 64 characters. */
  readonly status?: string;
  /** 1 to 64 characters; default the current time. */
  readonly createdAt?: string;
}

/** A stored Business Transaction (`GET /transactions/:id`): what was executed, without the evidence appended to it. */
export interface BusinessTransaction {
  readonly businessTransactionId: string;
  readonly metadata?: JsonObject;
  readonly authority?: JsonObject;
  readonly authorization?: JsonObject;
  readonly intent?: JsonObject;
  readonly policy: PolicyRef;
  readonly signals: Signals;
  /** `RECEIVED` from `POST /execute`; as given (default `SUBMITTED`) from `POST /transactions`. */
  readonly status: string;
  readonly createdAt: string;
}

/**
 * The execution: the runtime's decision on the transaction, exactly the evaluate response of spec 2.4 for
 * `executionId` = `businessTransactionId`, `policyId` = `policy.name`, `policyVersion` = `policy.version`.
 */
export type Execution = EvaluateResponse;

/** Who sealed the record: the signature verifies with the trust root's key `signerKeyId`. */
export interface Seal {
  readonly signerKeyId: string;
  readonly trustRootVersion: string;
  /** Lowercase hex SHA-256 of JCS(sealed record without `signature` and `trustRecordHash`). */
  readonly trustRecordHash: string;
  /** Ed25519 over PAE(`PAYLOAD_TYPES.trustRecord`, JCS(sealed record without `signature`)). */
  readonly signature: string;
}

/** What the seal's signature covers; written once, never changed. */
export interface SealedRecord extends BusinessTransaction, Seal {
  readonly execution: Execution;
}

/** `VERIFIED` (spec 2.13) when every check passes; `FAILED` (writ's) otherwise, `message` saying why. */
export type VerificationStatus = "VERIFIED" | "FAILED";

/** `POST /verify`, `GET /verification/:id`: spec 2.13's verification response. */
export interface Verification {
  /** A UUID, new for each verification. */
  readonly verificationId: string;
  readonly businessTransactionId: string;
  readonly status: VerificationStatus;
  readonly message: string;
  readonly verifiedAt: string;
  /** Recomputed from the record as stored when it was verified. */
  readonly trustRecordHash: string;
}

/** `POST /receipt`, `GET /receipt/latest/:id`: a signed statement that the record verified when it was issued. */
export interface Receipt {
  /** A UUID, new for each receipt. */
  readonly receiptId: string;
  readonly businessTransactionId: string;
  readonly trustRecordHash: string;
  readonly policy: PolicyRef;
  readonly executionStatus: Execution["status"];
  readonly issuedAt: string;
  readonly signerKeyId: string;
  readonly trustRootVersion: string;
  /** Ed25519 over PAE(`PAYLOAD_TYPES.receipt`, JCS(receipt without `signature`)). */
  readonly signature: string;
}

/** The Execution Trust Record (`POST /execute`, `POST /transactions`, `GET /trust-records/:id`). */
export interface TrustRecord extends SealedRecord {
  readonly verification: Verification;
  readonly receipt: Receipt;
}

/** The body of `POST /verify`, `POST /receipt` and `POST /replay`. */
export interface TransactionRef {
  readonly businessTransactionId: string;
}

/** `POST /replay`: the record's signature re-checked, nothing re-executed. */
export interface ReplayResult {
  readonly businessTransactionId: string;
  /** Recomputed from what is stored. */
  readonly trustRecordHash: string;
  readonly verified: boolean;
}

/** `GET /transactions` query parameters: `page` 1 to 1,000,000 (default 1), `pageSize` 1 to 100 (default 20). */
export interface TransactionQuery {
  readonly page?: number;
  readonly pageSize?: number;
}

/** `GET /transactions`: Business Transactions, oldest first; a page past the end has no items. */
export interface TransactionPage {
  readonly items: readonly BusinessTransaction[];
  readonly page: number;
  readonly pageSize: number;
  readonly total: number;
}

/** `POST /policies/validate`. */
export interface PolicyValidateRequest {
  readonly policyId: string;
  readonly policyVersion: string;
}

/** `POST /policies/validate`: whether the policy version loads (200 valid, 404 `{valid: false, errors: [one]}`). */
export interface PolicyValidation {
  readonly valid: boolean;
  readonly errors: readonly string[];
}

/** `GET /version`: hardcoded by the service, not linked to any package version (spec 9). */
export interface VersionInfo {
  readonly name: string;
  readonly version: string;
  readonly api: string;
}

/** Surface B's `GET /health`: nothing else is returned. */
export interface ServiceHealth {
  readonly status: "UP";
}
