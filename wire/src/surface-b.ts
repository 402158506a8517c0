/**
 * Surface B, the business-transaction API (spec 2.13, 4.2). What the spec leaves open (the execution, the seal, the
 * receipt, the listing) is docs/surface-b.md's:
 *
 *   Execution Trust Record = sealed record + `verification` (latest) + `receipt` (latest)
 *   sealed record          = Business Transaction + `execution` + seal
 *
 * Identifiers are compared exactly as sent; timestamps are ISO 8601. Request bodies are closed like Surface A's: a
 * member not named is a 400; signals are checked only as an object (their content is the policy's schema's business).
 */
import { Type } from "typebox";
import { DecisionStatus, JsonObject, Signals } from "./common.js";
import { Choice, Closed, Instant, List, Text, type Static } from "./schema.js";
import { EvaluateResponse } from "./surface-a.js";

/**
 * A business transaction id `POST /execute` takes: a UUID, versions 1 to 5 (8-4-4-4-12 hex digits, version digit 1
 * to 5, variant digit 8, 9, a or b, case-insensitive).
 */
export const BUSINESS_TRANSACTION_UUID_PATTERN =
  "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-5][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$";

/** The longest id a record can be stored under. */
export const RECORD_ID_MAX_LENGTH = 64;

/**
 * The ids a record can be stored under (every UUID is one): only characters that need no percent-encoding in a path,
 * and at most 64 of them.
 */
export const RECORD_ID_PATTERN = `^[A-Za-z0-9._~:-]{1,${RECORD_ID_MAX_LENGTH}}$`;

/** The policy version a transaction is executed under. */
export const PolicyRef = Closed(
  { name: Text(), version: Text("Semantic version.") },
  { title: "PolicyRef", description: "The policy version a transaction is executed under." },
);
export type PolicyRef = Static<typeof PolicyRef>;

/** `metadata` of a `POST /execute` transaction. */
export const TransactionMetadata = Closed(
  { businessTransactionId: Text(), correlationId: Text(), createdBy: Text(), createdAt: Instant() },
  { title: "TransactionMetadata" },
);
export type TransactionMetadata = Static<typeof TransactionMetadata>;
/** `authority`: who acts (`authorityType` `USER` is the one the spec shows). */
export const TransactionAuthority = Closed(
  { authorityId: Text(), authorityType: Text(), principalId: Text(), displayName: Text(), issuedAt: Instant() },
  { title: "TransactionAuthority", description: "Who acts (`authorityType` `USER` is the one the spec shows)." },
);
export type TransactionAuthority = Static<typeof TransactionAuthority>;
/** `authorization`: what the authority was authorized for. */
export const TransactionAuthorization = Closed(
  { authorizationId: Text(), authorityId: Text(), purpose: Text(), authorizedAt: Instant() },
  { title: "TransactionAuthorization", description: "What the authority was authorized for." },
);
export type TransactionAuthorization = Static<typeof TransactionAuthorization>;
/** `intent`: the action on a resource. */
export const TransactionIntent = Closed(
  { intentId: Text(), authorizationId: Text(), action: Text(), resource: Text(), issuedAt: Instant() },
  { title: "TransactionIntent", description: "The action on a resource." },
);
export type TransactionIntent = Static<typeof TransactionIntent>;

/**
 * `POST /execute`: the whole Business Transaction (spec 2.13). Sections are closed, their members non-empty strings
 * of at most 1,024 characters, the four timestamps ISO 8601 instants with a zone.
 */
export const ExecuteTransactionRequest = Closed(
  {
    businessTransactionId: Type.String({
      pattern: BUSINESS_TRANSACTION_UUID_PATTERN,
      description: "A UUID (versions 1 to 5); anything else is 400 `businessTransactionId must be a valid UUID.` before any execution.",
    }),
    metadata: TransactionMetadata,
    authority: TransactionAuthority,
    authorization: TransactionAuthorization,
    intent: TransactionIntent,
    policy: PolicyRef,
    signals: Signals,
    // Whatever the client sends is replaced (spec 3: `RECEIVED` and the current time), so any value is accepted.
    status: Type.Optional(Type.Unknown({ description: "Accepted and replaced: the service sets `RECEIVED`." })),
    createdAt: Type.Optional(Type.Unknown({ description: "Accepted and replaced: the service sets the current time." })),
  },
  {
    title: "ExecuteTransactionRequest",
    description:
      "The whole Business Transaction. Sections are closed, their members non-empty strings of at most 1,024 characters, the four timestamps date-times that exist, with a time zone.",
  },
);
export type ExecuteTransactionRequest = Static<typeof ExecuteTransactionRequest>;

const openSection = Type.Optional(JsonObject);

/** `POST /transactions`: used as given (spec 4.2): sections optional and open, `status` (default `SUBMITTED`) and `createdAt` kept. */
export const CreateTransactionRequest = Closed(
  {
    businessTransactionId: Type.String({
      pattern: RECORD_ID_PATTERN,
      description: "Any id of 1 to 64 characters `A-Z a-z 0-9 . _ ~ : -`.",
    }),
    metadata: openSection,
    authority: openSection,
    authorization: openSection,
    intent: openSection,
    policy: PolicyRef,
    signals: Signals,
    status: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "1 to 64 characters; default `SUBMITTED`." })),
    createdAt: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "1 to 64 characters; default the current time." })),
  },
  {
    title: "CreateTransactionRequest",
    description: "A Business Transaction used as given: sections optional and open, `status` (default `SUBMITTED`) and `createdAt` kept.",
  },
);
export type CreateTransactionRequest = Static<typeof CreateTransactionRequest>;

const transactionMembers = {
  businessTransactionId: Type.String(),
  metadata: openSection,
  authority: openSection,
  authorization: openSection,
  intent: openSection,
  policy: PolicyRef,
  signals: Signals,
  status: Type.String({ description: "`RECEIVED` from `POST /execute`; as given (default `SUBMITTED`) from `POST /transactions`." }),
  createdAt: Type.String(),
};

/** A stored Business Transaction (`GET /transactions/:id`): what was executed, without the evidence appended to it. */
export const BusinessTransaction = Closed(transactionMembers, {
  title: "BusinessTransaction",
  description: "A stored Business Transaction: what was executed, without the evidence appended to it.",
});
export type BusinessTransaction = Static<typeof BusinessTransaction>;

/**
 * The execution: the runtime's decision on the transaction, exactly the evaluate response of spec 2.4 for
 * `executionId` = `businessTransactionId`, `policyId` = `policy.name`, `policyVersion` = `policy.version`.
 */
export const Execution = EvaluateResponse;
export type Execution = EvaluateResponse;

const sealMembers = {
  signerKeyId: Type.String(),
  trustRootVersion: Type.String(),
  trustRecordHash: Type.String({ description: "Lowercase hex SHA-256 of JCS(sealed record without `signature` and `trustRecordHash`)." }),
  signature: Type.String({
    description: "Ed25519 over PAE(`application/vnd.writ.trust-record.v1+json`, JCS(sealed record without `signature`)).",
  }),
};

/** Who sealed the record: the signature verifies with the trust root's key `signerKeyId`. */
export const Seal = Closed(sealMembers, {
  title: "Seal",
  description: "Who sealed the record: the signature verifies with the trust root's key `signerKeyId`.",
});
export type Seal = Static<typeof Seal>;

/** What the seal's signature covers; written once, never changed. */
export const SealedRecord = Closed(
  { ...transactionMembers, execution: Execution, ...sealMembers },
  { title: "SealedRecord", description: "What the seal's signature covers; written once, never changed." },
);
export type SealedRecord = Static<typeof SealedRecord>;

/** `VERIFIED` (spec 2.13) when every check passes; `FAILED` (writ's) otherwise, `message` saying why. */
export const VerificationStatus = Choice(["VERIFIED", "FAILED"], {
  title: "VerificationStatus",
  description: "`VERIFIED` when every check passes; `FAILED` otherwise, `message` saying why.",
});
export type VerificationStatus = Static<typeof VerificationStatus>;

/** `POST /verify`, `GET /verification/:id`: spec 2.13's verification response. */
export const Verification = Closed(
  {
    verificationId: Type.String({ format: "uuid", description: "A UUID, new for each verification." }),
    businessTransactionId: Type.String(),
    status: VerificationStatus,
    message: Type.String(),
    verifiedAt: Instant(),
    trustRecordHash: Type.String({ description: "Recomputed from the record as stored when it was verified." }),
  },
  { title: "Verification", description: "A verification of a stored trust record." },
);
export type Verification = Static<typeof Verification>;

/** `POST /receipt`, `GET /receipt/latest/:id`: a signed statement that the record verified when it was issued. */
export const Receipt = Closed(
  {
    receiptId: Type.String({ format: "uuid", description: "A UUID, new for each receipt." }),
    businessTransactionId: Type.String(),
    trustRecordHash: Type.String(),
    policy: PolicyRef,
    executionStatus: DecisionStatus,
    issuedAt: Instant(),
    signerKeyId: Type.String(),
    trustRootVersion: Type.String(),
    signature: Type.String({ description: "Ed25519 over PAE(`application/vnd.writ.receipt.v1+json`, JCS(receipt without `signature`))." }),
  },
  { title: "Receipt", description: "A signed statement that the record verified when it was issued." },
);
export type Receipt = Static<typeof Receipt>;

/** The Execution Trust Record (`POST /execute`, `POST /transactions`, `GET /trust-records/:id`). */
export const TrustRecord = Closed(
  { ...SealedRecord.properties, verification: Verification, receipt: Receipt },
  {
    title: "TrustRecord",
    description: "The Execution Trust Record: the sealed record with its latest verification and receipt.",
  },
);
export type TrustRecord = Static<typeof TrustRecord>;

/** The body of `POST /verify`, `POST /receipt` and `POST /replay`. */
export const TransactionRef = Closed(
  { businessTransactionId: Text() },
  { title: "TransactionRef", description: "Names a stored transaction." },
);
export type TransactionRef = Static<typeof TransactionRef>;

/** `POST /replay`: the record's signature re-checked, nothing re-executed. */
export const ReplayResult = Closed(
  {
    businessTransactionId: Type.String(),
    trustRecordHash: Type.String({ description: "Recomputed from what is stored." }),
    verified: Type.Boolean(),
  },
  { title: "ReplayResult", description: "The record's signature re-checked, nothing re-executed." },
);
export type ReplayResult = Static<typeof ReplayResult>;

/**
 * The path parameter of `GET /transactions/{id}`, `/trust-records/{id}`, `/verification/{id}`, `/receipt/latest/{id}`:
 * an id no record can be stored under is refused before any lookup; a storable one that is not stored is 404.
 */
export const RecordParams = Closed({
  id: Type.String({
    maxLength: RECORD_ID_MAX_LENGTH,
    pattern: RECORD_ID_PATTERN,
    description:
      "A businessTransactionId, exactly as sent: 1 to 64 of `A-Z a-z 0-9 . _ ~ : -`, the ids a record can be stored under (any other is 400).",
  }),
});
export type RecordParams = Static<typeof RecordParams>;

/** `GET /transactions` query parameters: `page` 1 to 1,000,000 (default 1), `pageSize` 1 to 100 (default 20). */
export const TransactionQuery = Closed(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: "1 to 1,000,000, default 1." })),
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: "1 to 100, default 20." })),
  },
  { title: "TransactionQuery" },
);
export type TransactionQuery = Static<typeof TransactionQuery>;

/** `GET /transactions`: Business Transactions, oldest first; a page past the end has no items. */
export const TransactionPage = Closed(
  { items: List(BusinessTransaction), page: Type.Integer(), pageSize: Type.Integer(), total: Type.Integer({ minimum: 0 }) },
  { title: "TransactionPage", description: "Business Transactions, oldest first; a page past the end has no items." },
);
export type TransactionPage = Static<typeof TransactionPage>;

/** `POST /policies/validate`. */
export const PolicyValidateRequest = Closed({ policyId: Text(), policyVersion: Text() }, { title: "PolicyValidateRequest" });
export type PolicyValidateRequest = Static<typeof PolicyValidateRequest>;

/** `POST /policies/validate`: whether the policy version loads (200 valid, 404 `{valid: false, errors: [one]}`). */
export const PolicyValidation = Closed(
  { valid: Type.Boolean(), errors: List(Type.String()) },
  { title: "PolicyValidation", description: "Whether the policy version loads: 200 valid, 404 `{valid: false, errors: [one]}`." },
);
export type PolicyValidation = Static<typeof PolicyValidation>;

/** `GET /version`: hardcoded by the service, not linked to any package version (spec 9). */
export const VersionInfo = Closed(
  { name: Type.String(), version: Type.String(), api: Type.String() },
  { title: "VersionInfo", description: "Hardcoded by the service, not linked to any package version." },
);
export type VersionInfo = Static<typeof VersionInfo>;

/** Surface B's `GET /health`: nothing else is returned. */
export const ServiceHealth = Closed({ status: Type.Literal("UP") }, { title: "ServiceHealth", description: "Nothing else is returned." });
export type ServiceHealth = Static<typeof ServiceHealth>;
