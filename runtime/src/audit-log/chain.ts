/**
 * The hash chain of a log's checkpoints (docs/audit.md, "Tamper evidence: the audit log"): each checkpoint's
 * `previous` is the `checkpointHash` of the one before it, so a checkpoint cannot be removed, replaced or reordered
 * without breaking every later link.
 *
 * INVARIANT (a chain only grows): consecutive checkpoints name one log, the later covers at least as many entries,
 * and at an equal size the root is the same (two roots of one size are a fork, visible without any proof). That the
 * later tree extends the earlier one is proven by a consistency proof (proofs.ts), not by the chain.
 */
import type { TrustRoot } from "../attest/trust-root.js";
import type { PublicKey } from "../signing/keys.js";
import { checkpointHash, verifyCheckpoint, type SignedCheckpoint } from "./checkpoint.js";

export interface ChainVerification {
  readonly valid: boolean;
  readonly errors: string[];
}

/**
 * Verifies checkpoints given oldest first: each one (`verifyCheckpoint`), and each link. The first checkpoint's
 * `previous` is not checked (a chain may start at any checkpoint of a log). Errors name checkpoints by their place in
 * the list, from 0.
 * @throws KeyError when a pinned key is unusable (a configuration error)
 */
export function verifyCheckpointChain(values: readonly unknown[], keys: readonly PublicKey[] | TrustRoot): ChainVerification {
  if (!Array.isArray(values) || values.length === 0)
    return { valid: false, errors: ["a checkpoint chain is a non-empty list of checkpoints"] };
  const errors: string[] = [];
  let before: SignedCheckpoint | undefined;
  values.forEach((value, i) => {
    const verified = verifyCheckpoint(value, keys);
    for (const e of verified.errors) errors.push(`checkpoint ${i}: ${e}`);
    const current = verified.checkpoint;
    if (current !== undefined && before !== undefined) errors.push(...linkErrors(before, current, i));
    before = current;
  });
  return { valid: errors.length === 0, errors };
}

function linkErrors(before: SignedCheckpoint, after: SignedCheckpoint, i: number): string[] {
  const errors: string[] = [];
  const expected = checkpointHash(before);
  if (after.previous !== expected) {
    errors.push(`checkpoint ${i}: previous \`${String(after.previous)}\` is not the hash \`${expected}\` of checkpoint ${i - 1}`);
  }
  if (after.logId !== before.logId)
    errors.push(`checkpoint ${i}: log \`${after.logId}\` is not log \`${before.logId}\` of checkpoint ${i - 1}`);
  if (after.size < before.size)
    errors.push(`checkpoint ${i}: size ${after.size} is smaller than size ${before.size} of checkpoint ${i - 1}`);
  if (after.size === before.size && after.rootHash !== before.rootHash) {
    errors.push(`checkpoint ${i}: root \`${after.rootHash}\` differs from checkpoint ${i - 1}'s at the same size ${after.size}`);
  }
  return errors;
}
