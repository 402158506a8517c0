/**
 * The shapes of Surface B (spec 2.13; what the spec leaves open is fixed in docs/surface-b.md), which are the wire's
 * (`@writ/wire`):
 *
 *   Execution Trust Record = sealed record + `verification` (latest) + `receipt` (latest)
 *   sealed record          = Business Transaction + `execution` + seal (`signerKeyId`, `trustRootVersion`,
 *                            `trustRecordHash`, `signature`)
 *
 * The sealed record never changes once written; verifications and receipts are appended beside it, each its own
 * history, so re-verifying or issuing a receipt never touches what the signature covers.
 */
export type {
  BusinessTransaction,
  Execution,
  Receipt,
  ReplayResult,
  Seal,
  SealedRecord,
  TrustRecord,
  Verification,
  VerificationStatus,
} from "@writ/wire";

/** Spec 2.13: the members a Business Transaction has; `POST /transactions` accepts exactly these (sections open). */
export const TRANSACTION_MEMBERS = [
  "businessTransactionId",
  "metadata",
  "authority",
  "authorization",
  "intent",
  "policy",
  "signals",
  "status",
  "createdAt",
] as const;
