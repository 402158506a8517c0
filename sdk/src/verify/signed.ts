/**
 * The one signature rule (docs/signing.md), for the signed records other than attestations: Ed25519 over
 * PAE(payloadType, JCS(record without `signature`)), checked against pinned keys only.
 */
import { WritRuntimeError, verifyObject, type PayloadType, type TrustRoot } from "@writ/runtime";

/** What every offline check answers: `valid` only when `errors` is empty. */
export interface SignedRecordVerification {
  readonly valid: boolean;
  /** The pinned key that verified the signature, or null. */
  readonly signerKeyId: string | null;
  readonly errors: readonly string[];
}

export function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The signature check of `record`: the key that verifies it, or null and what is wrong (added to `errors`). */
export function checkSignature(
  payloadType: PayloadType,
  record: Readonly<Record<string, unknown>>,
  trustRoot: TrustRoot,
  errors: string[],
): string | null {
  const signature = record["signature"];
  if (typeof signature !== "string") {
    errors.push("the record has no `signature` (a string)");
    return null;
  }
  try {
    const key = verifyObject(payloadType, record, signature, trustRoot.keys);
    if (key) return key.keyId;
    errors.push("the signature does not verify against the pinned keys: the record was changed, or not signed by a pinned key");
  } catch (e) {
    // A value JSON cannot carry (a function, a non-finite number): not something a service signed.
    if (!(e instanceof WritRuntimeError)) throw e;
    errors.push(`the record cannot be canonicalized: ${e.message}`);
  }
  return null;
}
