import { PAYLOAD_TYPES, canonicalJson, parseStrictJson, sha256Hex } from "@writ/runtime";
import type { Attestation, ExecutionProof } from "@writ/wire";
import { pinnedTrustRoot, type PinnedKeys } from "../keys.js";
import { checkSignature, isObject, type SignedRecordVerification } from "./signed.js";

export interface ExecutionProofVerification extends SignedRecordVerification {
  /** The proof, once it verified; null otherwise. Whether the execution matched is its `match`. */
  readonly proof: ExecutionProof | null;
}

/** The proof as given: the `proof` text of a confirm-execution answer is parsed strictly (docs/signing.md). */
function parsed(proof: string | object, errors: string[]): unknown {
  if (typeof proof !== "string") return proof;
  try {
    return parseStrictJson(proof);
  } catch (e) {
    errors.push(`the proof is not strict JSON: ${(e as Error).message}`);
    return null;
  }
}

/**
 * Verifies an Execution Integrity Proof (spec 2.9) offline: its signature in the execution-proof domain against the
 * pinned keys, its `integrityHash` (binding what ran to the authorization), and, given the attestation it confirms,
 * that it names that attestation. `valid` says the proof is authentic; `proof.match` says whether the executed action
 * matched the authorized one.
 * @throws WritKeyError when a pinned key is unusable
 */
export function verifyExecutionProof(
  proof: string | object,
  keys: PinnedKeys,
  expected: { readonly attestation?: Attestation } = {},
): ExecutionProofVerification {
  const trustRoot = pinnedTrustRoot(keys);
  const errors: string[] = [];
  const value = parsed(proof, errors);
  if (!isObject(value)) {
    if (errors.length === 0) errors.push("the proof is not a JSON object");
    return { valid: false, signerKeyId: null, errors, proof: null };
  }
  const signerKeyId = checkSignature(PAYLOAD_TYPES.executionProof, value, trustRoot, errors);
  if (
    signerKeyId !== null &&
    value["integrityHash"] !== sha256Hex(canonicalJson({ authorizationId: value["authorizationId"], executed: value["executed"] }))
  ) {
    errors.push("`integrityHash` does not bind the executed action to the authorization");
  }
  const attestation = expected.attestation;
  if (attestation) {
    if (value["authorizationId"] !== sha256Hex(canonicalJson(attestation)))
      errors.push("the proof confirms another attestation (`authorizationId` differs)");
    if (value["executionId"] !== attestation.executionId) errors.push("the proof names another `executionId`");
  }
  const valid = errors.length === 0;
  return { valid, signerKeyId, errors, proof: valid ? (value as unknown as ExecutionProof) : null };
}
