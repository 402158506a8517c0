import { PAYLOAD_TYPES, canonicalJson, sha256Hex } from "@writ/runtime";
import type { Attestation } from "@writ/wire";
import { pinnedTrustRoot, type PinnedKeys } from "../keys.js";
import { checkSignature, isObject, type SignedRecordVerification } from "./signed.js";

/**
 * Verifies an override record (the `record` of an override response, spec 2.8) offline: its signature in the
 * override domain against the pinned keys and, given the original attestation, that the record resolves that
 * decision. A record made without a signing key carries only a SHA-256 `digest`, which anyone can recompute: it
 * is refused, since nothing authenticates it.
 * @throws WritKeyError when a pinned key is unusable
 */
export function verifyOverrideRecord(
  record: unknown,
  keys: PinnedKeys,
  expected: { readonly attestation?: Attestation } = {},
): SignedRecordVerification {
  const trustRoot = pinnedTrustRoot(keys);
  const errors: string[] = [];
  if (!isObject(record)) return { valid: false, signerKeyId: null, errors: ["the override record is not a JSON object"] };
  if (record["signature"] === undefined && typeof record["digest"] === "string") {
    errors.push("the record carries a digest, not a signature: made without a signing key, it cannot be authenticated");
    return { valid: false, signerKeyId: null, errors };
  }
  const signerKeyId = checkSignature(PAYLOAD_TYPES.override, record, trustRoot, errors);
  const attestation = expected.attestation;
  if (attestation) {
    if (record["attestationHash"] !== sha256Hex(canonicalJson(attestation)))
      errors.push("the record resolves another attestation (`attestationHash` differs)");
    if (record["execution_fingerprint"] !== attestation.execution_fingerprint)
      errors.push("the record names another `execution_fingerprint`");
  }
  return { valid: errors.length === 0, signerKeyId, errors };
}
