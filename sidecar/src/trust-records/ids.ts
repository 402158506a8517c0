/**
 * The two identifier rules of Surface B, as @writ/wire's schemas state them. Identifiers are compared exactly as
 * sent (case included), as Surface A compares executionIds: the UUID rule only decides which ids `POST /execute`
 * accepts.
 */
import { BUSINESS_TRANSACTION_UUID_PATTERN, RECORD_ID_PATTERN } from "@writ/wire";

/** Spec 2.13: 8-4-4-4-12 hex digits, version digit 1 to 5, variant digit 8, 9, a or b, case-insensitive. */
const UUID = new RegExp(BUSINESS_TRANSACTION_UUID_PATTERN);

export function isBusinessTransactionUuid(value: unknown): value is string {
  return typeof value === "string" && UUID.test(value);
}

/**
 * The ids a record can be stored under (every UUID is one). Each stored record must stay reachable through the
 * `/:id` routes, so an id is made only of characters that need no percent-encoding in a path; and it is short,
 * far below LMDB's key limit (1,978 bytes), so a lookup of any path id never reaches LMDB with a key it refuses.
 */
const RECORD_ID = new RegExp(RECORD_ID_PATTERN);

export function isRecordId(value: string): boolean {
  return RECORD_ID.test(value);
}
