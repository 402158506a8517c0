import { describe, expect, it } from "vitest";
import { PAYLOAD_TYPES, checkpointHash, signObject, verifyCheckpointChain, type SignedCheckpoint } from "../../src/index.js";
import { signer, testLog } from "./support.js";

const pinned = [signer.publicKey];
const log = testLog(12);
const a = log.checkpoint(3);
const b = log.checkpoint(7, a);
const c = log.checkpoint(12, b);

function resigned(checkpoint: SignedCheckpoint, changes: Partial<SignedCheckpoint>): SignedCheckpoint {
  const { signature: _old, ...body } = { ...checkpoint, ...changes };
  return { ...body, signature: signObject(PAYLOAD_TYPES.auditCheckpoint, body, signer) };
}

describe("verifyCheckpointChain", () => {
  it("accepts checkpoints linked by previous, oldest first, from any starting checkpoint", () => {
    expect(verifyCheckpointChain([a, b, c], pinned)).toEqual({ valid: true, errors: [] });
    expect(verifyCheckpointChain([b, c], pinned).valid).toBe(true);
    expect(verifyCheckpointChain([a], pinned).valid).toBe(true);
    // A checkpoint at the same size (nothing new logged) with the same root continues the chain.
    expect(verifyCheckpointChain([a, b, log.checkpoint(7, b)], pinned).valid).toBe(true);
  });

  it("refuses a missing, replaced or reordered checkpoint", () => {
    expect(verifyCheckpointChain([a, c], pinned).errors).toEqual([
      `checkpoint 1: previous \`${b.previous === null ? "" : checkpointHash(b)}\` is not the hash \`${checkpointHash(a)}\` of checkpoint 0`,
    ]);
    expect(verifyCheckpointChain([b, a], pinned).errors).toEqual([
      `checkpoint 1: previous \`null\` is not the hash \`${checkpointHash(b)}\` of checkpoint 0`,
      "checkpoint 1: size 3 is smaller than size 7 of checkpoint 0",
    ]);
    const relinked = resigned(b, { previous: "0".repeat(64) });
    expect(verifyCheckpointChain([a, relinked], pinned).errors).toEqual([
      `checkpoint 1: previous \`${"0".repeat(64)}\` is not the hash \`${checkpointHash(a)}\` of checkpoint 0`,
    ]);
  });

  it("refuses a fork at one size, another log, and an invalid checkpoint, naming it", () => {
    const forkedLog = testLog(7);
    forkedLog.entries.reverse();
    forkedLog.leaves.reverse();
    const fork = forkedLog.checkpoint(7);
    const forked = resigned(fork, { previous: checkpointHash(b) });
    expect(verifyCheckpointChain([b, forked], pinned).errors).toEqual([
      `checkpoint 1: root \`${fork.rootHash}\` differs from checkpoint 0's at the same size 7`,
    ]);
    const other = testLog(9, "other-log").checkpoint(9);
    expect(verifyCheckpointChain([b, resigned(other, { previous: checkpointHash(b) })], pinned).errors).toEqual([
      "checkpoint 1: log `other-log` is not log `sidecar-test:1` of checkpoint 0",
    ]);
    expect(verifyCheckpointChain([a, { ...b, size: 8 }, c], pinned).errors[0]).toMatch(/^checkpoint 1: checkpoint /);
    expect(verifyCheckpointChain([], pinned).errors).toEqual(["a checkpoint chain is a non-empty list of checkpoints"]);
  });
});
