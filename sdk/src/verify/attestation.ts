import { verifyAttestation as verifyWithTrustRoot, type AttestationVerification, type VerifierOptions } from "@writ/runtime";
import { pinnedTrustRoot, type PinnedKeys } from "../keys.js";

/** What a verifier may pin beside the keys: accepted runtimes, schema versions, runtime manifests, bundle hashes. */
export type AttestationVerifierOptions = Omit<VerifierOptions, "trustRoot">;

/**
 * Verifies an attestation of either shape offline (spec 2.10, library form): the signature against the pinned keys
 * only (the key the attestation names must be one of them), the runtime (by default, any release deciding as the
 * runtime this SDK is built on does, and the runtimes a trust root document lists in `acceptedRuntimeHashes`; the
 * option `acceptedRuntimeHashes` replaces both), the schema version, and the decision's consistency. `valid`
 * false means the authorized action must not proceed (spec 7).
 * @throws WritKeyError when a pinned key is unusable
 */
export function verifyAttestation(
  attestation: unknown,
  keys: PinnedKeys,
  options: AttestationVerifierOptions = {},
): AttestationVerification {
  return verifyWithTrustRoot(attestation, { ...options, trustRoot: pinnedTrustRoot(keys) });
}
