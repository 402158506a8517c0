/**
 * Surface B shapes (spec 2.13, 4.2). What the spec leaves open (the execution, the receipt, the listing) is
 * docs/surface-b.md's: the execution is the evaluate response of spec 2.4, and the record is sealed with the
 * trust-record signature of DESIGN.md section 3.
 */
import type { EvaluateResponse, Signals } from "../workflow.js";

type Section = Readonly<Record<string, unknown>>;

/** The policy version a transaction is executed under. */
export interface PolicyRef {
  readonly name: string;
  /** Semantic version. */
  readonly version: string;
}

/** `POST /execute`: the whole Business Transaction (spec 2.13); identifiers are UUIDs, timestamps ISO 8601. */
export interface ExecuteTransactionRequest {
  /** A UUID (versions 1 to 5); anything else is 400 `businessTransactionId must be a valid UUID.` before any execution. */
  readonly businessTransactionId: string;
  readonly metadata: { readonly businessTransactionId: string; readonly correlationId: string; readonly createdBy: string; readonly createdAt: string };
  readonly authority: { readonly authorityId: string; readonly authorityType: string; readonly principalId: string; readonly displayName: string; readonly issuedAt: string };
  readonly authorization: { readonly authorizationId: string; readonly authorityId: string; readonly purpose: string; readonly authorizedAt: string };
  readonly intent: { readonly intentId: string; readonly authorizationId: string; readonly action: string; readonly resource: string; readonly issuedAt: string };
  readonly policy: PolicyRef;
  readonly signals: Signals;
  /** Replaced: the service sets `RECEIVED` and the current time (spec 3). */
  readonly status?: unknown;
  readonly createdAt?: unknown;
}

/** `POST /transactions`: used as given (spec 4.2): sections optional and open, `status` (default `SUBMITTED`) and `createdAt` kept. */
export interface CreateTransactionRequest {
  /** Any id of 1 to 64 characters `A-Z a-z 0-9 . _ ~ : -`. */
  readonly businessTransactionId: string;
  readonly metadata?: Section;
  readonly authority?: Section;
  readonly authorization?: Section;
  readonly intent?: Section;
  readonly policy: PolicyRef;
  readonly signals: Signals;
  readonly status?: string;
  readonly createdAt?: string;
}

/** A stored Business Transaction: what was executed, without the evidence appended to it. */
export interface BusinessTransaction {
  readonly businessTransactionId: string;
  readonly metadata?: Section;
  readonly authority?: Section;
  readonly authorization?: Section;
  readonly intent?: Section;
  readonly policy: PolicyRef;
  readonly signals: Signals;
  /** `RECEIVED` from `POST /execute`; as given (default `SUBMITTED`) from `POST /transactions`. */
  readonly status: string;
  readonly createdAt: string;
}

/** `POST /verify`, `GET /verification/:id`: spec 2.13's verification response. */
export interface Verification {
  readonly verificationId: string;
  readonly businessTransactionId: string;
  /** `FAILED` (writ's) when the stored record no longer verifies; `message` says why. */
  readonly status: "VERIFIED" | "FAILED";
  readonly message: string;
  readonly verifiedAt: string;
  /** Recomputed from the record as stored now. */
  readonly trustRecordHash: string;
}

/** `POST /receipt`, `GET /receipt/latest/:id`: a signed statement that the record verified when it was issued. */
export interface Receipt {
  readonly receiptId: string;
  readonly businessTransactionId: string;
  readonly trustRecordHash: string;
  readonly policy: PolicyRef;
  readonly executionStatus: EvaluateResponse["status"];
  readonly issuedAt: string;
  readonly signerKeyId: string;
  readonly trustRootVersion: string;
  readonly signature: string;
}

/** The Execution Trust Record: the transaction, its execution and seal, and the latest verification and receipt. */
export interface TrustRecord extends BusinessTransaction {
  readonly execution: EvaluateResponse;
  readonly signerKeyId: string;
  readonly trustRootVersion: string;
  readonly trustRecordHash: string;
  readonly signature: string;
  readonly verification: Verification;
  readonly receipt: Receipt;
}

/** `POST /replay`: the record's signature re-checked, nothing re-executed. */
export interface ReplayResult {
  readonly businessTransactionId: string;
  readonly trustRecordHash: string;
  readonly verified: boolean;
}

/** `GET /transactions` query: `page` from 1, `pageSize` 1 to 100 (default 20). */
export interface TransactionQuery {
  readonly page?: number;
  readonly pageSize?: number;
}

/** `GET /transactions`, oldest first. */
export interface TransactionPage {
  readonly items: readonly BusinessTransaction[];
  readonly page: number;
  readonly pageSize: number;
  readonly total: number;
}

/** `POST /policies/validate`: whether the policy version loads (not whether its content is sound). */
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
