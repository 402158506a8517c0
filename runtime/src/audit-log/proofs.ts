/**
 * Inclusion and consistency proofs as the sidecar's routes answer them (docs/audit.md, "Tamper evidence: the audit
 * log"), and their verification against pinned keys. Each proof carries the signed checkpoint(s) it is relative to, so
 * one JSON object and the pinned keys are all a verifier needs.
 *
 * INVARIANT (a proof is only as good as its checkpoint): a proof verifies only when every checkpoint in it verifies
 * (checkpoint.ts) and names the proof's log, and the path leads to the checkpoint's own `rootHash` at its own `size`.
 */
import type { TrustRoot } from "../attest/trust-root.js";
import { isJsonObject } from "../bundle/json-object.js";
import type { PublicKey } from "../signing/keys.js";
import { LOG_ID_PATTERN, verifyCheckpoint, type SignedCheckpoint } from "./checkpoint.js";
import { entryLeafInput, type LogEntry } from "./entry.js";
import { hashFromHex, isHashHex, toHex } from "./hex.js";
import { leafHash, verifyConsistency, verifyInclusion } from "./merkle.js";
import { show } from "./show.js";
import type { ConsistencyProofJson, InclusionProofJson } from "@writ/wire/types";

/** The proofs as the routes answer them: an inclusion proof of one leaf, a consistency proof of two checkpoints. */
export type { ConsistencyProofJson, InclusionProofJson };

export interface ProofVerification {
  readonly valid: boolean;
  /** What failed, lowercase; empty when valid. */
  readonly errors: string[];
}

/** A tree of at most 2^53 leaves is 53 levels deep: a longer list is refused before any hashing. */
export const MAX_PROOF_HASHES = 64;

const INCLUSION_MEMBERS = ["logId", "leafIndex", "treeSize", "leafHash", "auditPath", "checkpoint"] as const;
const CONSISTENCY_MEMBERS = ["logId", "from", "to", "proof"] as const;

/**
 * Verifies an inclusion proof as received (strictly parsed JSON): its shape, its checkpoint (signature against the
 * pinned keys, frontier), that it is of the checkpoint's log and size, and the audit path from `leafHash` to the
 * checkpoint's `rootHash` (RFC 9162 2.1.3.2). Given `leaf`, also that `leafHash` is its hash: for leaf input bytes,
 * `leafHash(leaf)`; for a log entry, the hash of its leaf input, and the entry's `position` must be `leafIndex`.
 * @throws KeyError when a pinned key is unusable (a configuration error)
 */
export function verifyInclusionProof(
  value: unknown,
  keys: readonly PublicKey[] | TrustRoot,
  leaf?: Uint8Array | LogEntry,
): ProofVerification {
  const what = "inclusion proof";
  const errors = memberErrors(value, INCLUSION_MEMBERS, what);
  if (errors.length > 0) return { valid: false, errors };
  const p = value as Record<(typeof INCLUSION_MEMBERS)[number], unknown>;
  checkLogId(p.logId, what, errors);
  for (const name of ["leafIndex", "treeSize"] as const) {
    if (!isCount(p[name])) errors.push(`${what} ${name} \`${show(p[name])}\` is not a non-negative safe integer`);
  }
  if (!isHashHex(p.leafHash)) errors.push(`${what} leafHash \`${show(p.leafHash)}\` is not 64 lowercase hex digits`);
  checkHashList(p.auditPath, `${what} auditPath`, errors);
  const checkpoint = checkedCheckpoint(p.checkpoint, keys, "checkpoint", errors);
  if (errors.length > 0) return { valid: false, errors };
  const proof = value as InclusionProofJson;
  if (checkpoint === undefined) return { valid: false, errors };
  if (proof.logId !== checkpoint.logId) errors.push(`${what} is of log \`${proof.logId}\`, its checkpoint of log \`${checkpoint.logId}\``);
  if (proof.treeSize !== checkpoint.size) errors.push(`${what} treeSize ${proof.treeSize} is not its checkpoint's size ${checkpoint.size}`);
  if (leaf !== undefined) errors.push(...leafErrors(leaf, proof));
  if (proof.treeSize === checkpoint.size) {
    const path = proof.auditPath.map(hashFromHex);
    if (!verifyInclusion(hashFromHex(proof.leafHash), proof.leafIndex, proof.treeSize, path, hashFromHex(checkpoint.rootHash))) {
      errors.push(
        `${what} audit path does not lead from leaf ${proof.leafIndex} to the checkpoint's root \`${checkpoint.rootHash}\` at size ${checkpoint.size}`,
      );
    }
  }
  return { valid: errors.length === 0, errors };
}

/**
 * Verifies a consistency proof as received (strictly parsed JSON): its shape, both checkpoints (signatures against the
 * pinned keys, frontiers), that both are of the proof's log, that `from` is not larger than `to`, and the proof
 * between their roots (RFC 9162 2.1.4.2; equal sizes need an empty proof and equal roots, an empty `from` an empty
 * proof).
 * @throws KeyError when a pinned key is unusable (a configuration error)
 */
export function verifyConsistencyProof(value: unknown, keys: readonly PublicKey[] | TrustRoot): ProofVerification {
  const what = "consistency proof";
  const errors = memberErrors(value, CONSISTENCY_MEMBERS, what);
  if (errors.length > 0) return { valid: false, errors };
  const p = value as Record<(typeof CONSISTENCY_MEMBERS)[number], unknown>;
  checkLogId(p.logId, what, errors);
  checkHashList(p.proof, `${what} proof`, errors);
  const from = checkedCheckpoint(p.from, keys, "from", errors);
  const to = checkedCheckpoint(p.to, keys, "to", errors);
  if (errors.length > 0 || from === undefined || to === undefined) return { valid: false, errors };
  const proof = value as ConsistencyProofJson;
  for (const [name, c] of [
    ["from", from],
    ["to", to],
  ] as const) {
    if (c.logId !== proof.logId) errors.push(`${what} is of log \`${proof.logId}\`, its \`${name}\` checkpoint of log \`${c.logId}\``);
  }
  if (from.size > to.size) {
    errors.push(`${what} goes from size ${from.size} to the smaller size ${to.size}`);
  } else if (!verifyConsistency(from.size, to.size, hashFromHex(from.rootHash), hashFromHex(to.rootHash), proof.proof.map(hashFromHex))) {
    errors.push(
      `${what} does not show the tree of size ${from.size} (root \`${from.rootHash}\`) to be a prefix of the tree of size ${to.size} (root \`${to.rootHash}\`)`,
    );
  }
  return { valid: errors.length === 0, errors };
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function memberErrors(value: unknown, members: readonly string[], what: string): string[] {
  if (!isJsonObject(value)) return [`${what} is not a JSON object`];
  const errors: string[] = [];
  for (const name of Object.keys(value)) if (!members.includes(name)) errors.push(`${what} has unknown member \`${show(name)}\``);
  for (const name of members) if (!Object.hasOwn(value, name)) errors.push(`${what} lacks \`${name}\``);
  return errors;
}

function checkLogId(logId: unknown, what: string, errors: string[]): void {
  if (typeof logId !== "string" || !LOG_ID_PATTERN.test(logId)) {
    errors.push(`${what} logId \`${show(logId)}\` is not 1-128 letters, digits, \`.\`, \`_\`, \`:\` or \`-\``);
  }
}

function checkHashList(value: unknown, what: string, errors: string[]): void {
  if (!Array.isArray(value) || value.length > MAX_PROOF_HASHES || !value.every(isHashHex)) {
    errors.push(`${what} is not a list of at most ${MAX_PROOF_HASHES} hashes (64 lowercase hex digits)`);
  }
}

/** The verified checkpoint, or undefined with its errors (prefixed by `name`) added to `errors`. */
function checkedCheckpoint(
  value: unknown,
  keys: readonly PublicKey[] | TrustRoot,
  name: string,
  errors: string[],
): SignedCheckpoint | undefined {
  const verified = verifyCheckpoint(value, keys);
  for (const e of verified.errors) errors.push(`${name}: ${e}`);
  return verified.checkpoint;
}

function leafErrors(leaf: Uint8Array | LogEntry, proof: InclusionProofJson): string[] {
  const errors: string[] = [];
  let input: Uint8Array;
  if (leaf instanceof Uint8Array) {
    input = leaf;
  } else {
    try {
      input = entryLeafInput(leaf);
    } catch (error) {
      return [`the given entry is not a log entry: ${error instanceof Error ? error.message : String(error)}`];
    }
    if (leaf.position !== proof.leafIndex)
      errors.push(`the given entry's position ${leaf.position} is not the proof's leafIndex ${proof.leafIndex}`);
  }
  const expected = toHex(leafHash(input));
  if (expected !== proof.leafHash)
    errors.push(`inclusion proof leafHash \`${proof.leafHash}\` is not the hash \`${expected}\` of the given leaf`);
  return errors;
}
