/**
 * Surface B's operations, as its OpenAPI document shows them (docs/surface-b.md). One entry per route of
 * http/scopes.ts's `SURFACE_B_SCOPES`, with the same key; a test checks that the two tables and the routes served
 * agree.
 */
import {
  BusinessTransaction,
  CreateTransactionRequest,
  ExecuteTransactionRequest,
  PolicyValidateRequest,
  PolicyValidation,
  Receipt,
  RecordParams,
  ReplayResult,
  ServiceHealth,
  TransactionPage,
  TransactionQuery,
  TransactionRef,
  TrustRecord,
  Verification,
  VersionInfo,
} from "@writ/wire";
import type { Api } from "./operation.js";

/** What the pipeline of `POST /execute` and `POST /transactions` refuses before anything is stored. */
const PIPELINE = [
  "SIGNALS_VALIDATION_FAILED",
  "SIGNAL_VALIDATION_FAILED",
  "POLICY_NOT_FOUND",
  "POLICY_BUNDLE_MISSING",
  "POLICY_BUNDLE_INVALID",
  "SYS-006",
  "INV-013",
  "EVALUATION_FAILED",
  "RUNTIME_NOT_CONFIGURED",
  "REPLAY_STORE_UNAVAILABLE",
] as const;
const STORED = ["RUNTIME_NOT_CONFIGURED"] as const;

export const SURFACE_B_API: Api = {
  "GET /health": {
    summary: "Liveness",
    tag: "service",
    answers: { 200: { description: "Up.", schema: ServiceHealth } },
  },
  "GET /version": {
    summary: "The service's name, version and API version, hardcoded",
    tag: "service",
    answers: { 200: { description: "The version.", schema: VersionInfo } },
  },
  "POST /policies/validate": {
    summary: "Whether a policy version loads (manifest, file hashes, signature policy), not its content",
    tag: "policies",
    body: PolicyValidateRequest,
    answers: {
      200: { description: "It loads.", schema: PolicyValidation },
      404: { description: "It does not load: `{valid: false, errors: [why]}`.", schema: PolicyValidation },
    },
  },
  "POST /execute": {
    summary: "Execute a Business Transaction: decide, seal, verify, issue a receipt, store",
    description:
      "`businessTransactionId` must be a UUID (versions 1 to 5), checked before anything else; then the body is checked whole, then its timestamps. Answered once the record is on disk.",
    tag: "transactions",
    body: ExecuteTransactionRequest,
    answers: { 200: { description: "The Execution Trust Record.", schema: TrustRecord } },
    errors: ["INVALID_BUSINESS_TRANSACTION_ID", ...PIPELINE],
  },
  "POST /transactions": {
    summary: "Execute a Business Transaction used as given (the weaker form)",
    tag: "transactions",
    body: CreateTransactionRequest,
    answers: { 201: { description: "The Execution Trust Record.", schema: TrustRecord } },
    errors: PIPELINE,
  },
  "GET /transactions": {
    summary: "Stored Business Transactions, oldest first, by page",
    tag: "transactions",
    query: TransactionQuery,
    answers: { 200: { description: "A page.", schema: TransactionPage } },
    errors: STORED,
  },
  "GET /transactions/:id": {
    summary: "A stored Business Transaction, without its evidence",
    tag: "transactions",
    params: RecordParams,
    answers: { 200: { description: "The transaction.", schema: BusinessTransaction } },
    errors: ["TRANSACTION_NOT_FOUND", ...STORED],
  },
  "GET /trust-records/:id": {
    summary: "The whole Execution Trust Record, with its latest verification and receipt",
    tag: "evidence",
    params: RecordParams,
    answers: { 200: { description: "The trust record, as stored.", schema: TrustRecord } },
    errors: ["TRUST_RECORD_NOT_FOUND", ...STORED],
  },
  "POST /verify": {
    summary: "Verify a stored trust record again, and keep the verification",
    tag: "evidence",
    body: TransactionRef,
    answers: { 200: { description: "The verification: `VERIFIED`, or `FAILED` with why.", schema: Verification } },
    errors: ["TRUST_RECORD_NOT_FOUND", ...STORED, "REPLAY_STORE_UNAVAILABLE"],
  },
  "GET /verification/:id": {
    summary: "The latest verification of a trust record",
    tag: "evidence",
    params: RecordParams,
    answers: { 200: { description: "The verification.", schema: Verification } },
    errors: ["VERIFICATION_NOT_FOUND", ...STORED],
  },
  "POST /receipt": {
    summary: "Issue a signed receipt for a trust record that verifies",
    tag: "evidence",
    body: TransactionRef,
    answers: { 200: { description: "The receipt.", schema: Receipt } },
    errors: ["TRUST_RECORD_NOT_FOUND", "TRUST_RECORD_INVALID", ...STORED, "REPLAY_STORE_UNAVAILABLE"],
  },
  "GET /receipt/latest/:id": {
    summary: "The latest receipt of a trust record",
    tag: "evidence",
    params: RecordParams,
    answers: { 200: { description: "The receipt.", schema: Receipt } },
    errors: ["RECEIPT_NOT_FOUND", ...STORED],
  },
  "POST /replay": {
    summary: "Check a stored record's signature again; nothing re-executed or stored",
    tag: "evidence",
    body: TransactionRef,
    answers: { 200: { description: "Whether the signature verifies.", schema: ReplayResult } },
    errors: ["TRUST_RECORD_NOT_FOUND", ...STORED],
  },
};
