/**
 * The two identifier rules of Surface B. Identifiers are compared exactly as sent (case included), as Surface A
 * compares executionIds: the UUID rule only decides which ids `POST /execute` accepts.
 */

/** Spec 2.13: 8-4-4-4-12 hex digits, version digit 1 to 5, variant digit 8, 9, a or b, case-insensitive. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

export function isBusinessTransactionUuid(value: unknown): value is string {
  return typeof value === "string" && UUID.test(value);
}

/**
 * The ids a record can be stored under (every UUID is one). Each stored record must stay reachable through the
 * `/:id` routes, so an id is made only of characters that need no percent-encoding in a path; and it is short,
 * far below LMDB's key limit (1,978 bytes), so a lookup of any path id never reaches LMDB with a key it refuses.
 */
export const RECORD_ID_PATTERN = "^[A-Za-z0-9._~:-]{1,64}$";
const RECORD_ID = new RegExp(RECORD_ID_PATTERN);

export function isRecordId(value: string): boolean {
  return RECORD_ID.test(value);
}
