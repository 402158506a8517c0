/**
 * Offline checks of the tamper-evident audit record log (docs/audit.md): an inclusion proof, a consistency proof, and a
 * whole export, against pinned keys only, as `writ audit verify` checks them. A decision's embedded attestation is
 * checked against the same keys.
 */
import {
  ExportVerifier,
  decisionAttestationSigned,
  verifyConsistencyProof as verifyConsistency,
  verifyInclusionProof as verifyInclusion,
  type ExportReport,
  type ProofVerification,
} from "@writ/runtime";
import { pinnedTrustRoot, type PinnedKeys } from "../keys.js";

/**
 * That a record is in a signed checkpoint: the proof as `GET /audit/proofs/inclusion` answers it.
 * @throws WritKeyError when a pinned key is unusable
 */
export function verifyInclusionProof(proof: unknown, keys: PinnedKeys): ProofVerification {
  return verifyInclusion(proof, pinnedTrustRoot(keys));
}

/**
 * That one checkpoint's log is a prefix of another's: the proof as `GET /audit/proofs/consistency` answers it.
 * @throws WritKeyError when a pinned key is unusable
 */
export function verifyConsistencyProof(proof: unknown, keys: PinnedKeys): ProofVerification {
  return verifyConsistency(proof, pinnedTrustRoot(keys));
}

/**
 * A whole export (`GovernanceClient.auditExport`, or its lines read from a file, parsed), line by line with the memory of
 * a Merkle frontier: every record against its logged leaf, every checkpoint's signature, root and chain, and each
 * decision's attestation signature. `valid` only when every line passed; `failures` name the first ones.
 * @throws WritKeyError when a pinned key is unusable
 */
export async function verifyAuditExport(lines: AsyncIterable<unknown> | Iterable<unknown>, keys: PinnedKeys): Promise<ExportReport> {
  const trustRoot = pinnedTrustRoot(keys);
  const verifier = new ExportVerifier(trustRoot, decisionAttestationSigned(trustRoot));
  for await (const line of lines) verifier.add(line);
  return verifier.finish();
}
