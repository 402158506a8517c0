import { describe, expect, it } from "vitest";
import {
  MAX_PROOF_HASHES,
  consistencyProof,
  createTrustRoot,
  entryLeafInput,
  inclusionProof,
  toHex,
  verifyConsistencyProof,
  verifyInclusionProof,
  type ConsistencyProofJson,
  type InclusionProofJson,
} from "../../src/index.js";
import { signer, stranger, testLog } from "./support.js";

const pinned = [signer.publicKey];
const log = testLog(13);
const at6 = log.checkpoint(6);
const at13 = log.checkpoint(13, at6);

function inclusion(index: number, checkpoint = at13): InclusionProofJson {
  return {
    logId: checkpoint.logId,
    leafIndex: index,
    treeSize: checkpoint.size,
    leafHash: toHex(log.leaves[index]!),
    auditPath: inclusionProof(log.leaves.slice(0, checkpoint.size), index).map(toHex),
    checkpoint,
  };
}

function consistency(from = at6, to = at13): ConsistencyProofJson {
  return { logId: from.logId, from, to, proof: consistencyProof(log.leaves, from.size, to.size).map(toHex) };
}

const flip = (h: string): string => `${h.slice(0, 63)}${h.endsWith("0") ? "1" : "0"}`;

describe("verifyInclusionProof", () => {
  it("accepts every leaf of two checkpoints, with and without the leaf input or the entry", () => {
    for (const checkpoint of [at6, at13]) {
      for (let i = 0; i < checkpoint.size; i++) {
        const proof = inclusion(i, checkpoint);
        expect(verifyInclusionProof(proof, pinned)).toEqual({ valid: true, errors: [] });
        expect(
          verifyInclusionProof(JSON.parse(JSON.stringify(proof)), createTrustRoot("v1", pinned), entryLeafInput(log.entries[i]!)).valid,
        ).toBe(true);
        expect(verifyInclusionProof(proof, pinned, log.entries[i]!).valid).toBe(true);
      }
    }
  });

  it("refuses a changed path, another index, a leaf hash that is not the given leaf's, an entry moved", () => {
    const proof = inclusion(5);
    const failed = `inclusion proof audit path does not lead from leaf 5 to the checkpoint's root \`${at13.rootHash}\` at size 13`;
    expect(
      verifyInclusionProof({ ...proof, auditPath: [proof.auditPath[0]!, flip(proof.auditPath[1]!), ...proof.auditPath.slice(2)] }, pinned)
        .errors,
    ).toEqual([failed]);
    expect(verifyInclusionProof({ ...proof, leafIndex: 4 }, pinned).errors).toEqual([failed.replace("leaf 5", "leaf 4")]);
    expect(verifyInclusionProof({ ...proof, leafIndex: 13 }, pinned).errors).toEqual([failed.replace("leaf 5", "leaf 13")]);
    const other = toHex(log.leaves[4]!);
    expect(verifyInclusionProof(proof, pinned, entryLeafInput(log.entries[4]!)).errors).toEqual([
      `inclusion proof leafHash \`${proof.leafHash}\` is not the hash \`${other}\` of the given leaf`,
    ]);
    // The leaf holds no position: the entry's own position must be the proof's leafIndex.
    const moved = { ...log.entries[5]!, position: 4 };
    expect(verifyInclusionProof(proof, pinned, moved).errors).toEqual(["the given entry's position 4 is not the proof's leafIndex 5"]);
    expect(verifyInclusionProof(proof, pinned, { ...log.entries[5]!, kind: "nope" as "decision" }).errors[0]).toMatch(
      /^the given entry is not a log entry: log entry kind `nope`/,
    );
  });

  it("binds the proof to its checkpoint: its log, its size, its signature by a pinned key", () => {
    const proof = inclusion(2);
    expect(verifyInclusionProof({ ...proof, treeSize: 12 }, pinned).errors).toEqual([
      "inclusion proof treeSize 12 is not its checkpoint's size 13",
    ]);
    expect(verifyInclusionProof({ ...proof, logId: "elsewhere" }, pinned).errors).toEqual([
      "inclusion proof is of log `elsewhere`, its checkpoint of log `sidecar-test:1`",
    ]);
    expect(verifyInclusionProof({ ...proof, checkpoint: { ...at13, timestamp: "2026-01-15T10:00:00.000Z" } }, pinned).errors).toEqual([
      `checkpoint: checkpoint signature does not verify against pinned key \`${signer.keyId}\``,
    ]);
    expect(verifyInclusionProof({ ...proof, checkpoint: log.checkpoint(13, at6, stranger) }, pinned).errors).toEqual([
      `checkpoint: checkpoint key \`${stranger.keyId}\` is not pinned`,
    ]);
  });

  it("requires the exact shape", () => {
    const proof = inclusion(2);
    expect(verifyInclusionProof(null, pinned).errors).toEqual(["inclusion proof is not a JSON object"]);
    expect(verifyInclusionProof({ ...proof, more: true }, pinned).errors).toEqual(["inclusion proof has unknown member `more`"]);
    const { auditPath: _a, ...noPath } = proof;
    expect(verifyInclusionProof(noPath, pinned).errors).toEqual(["inclusion proof lacks `auditPath`"]);
    expect(
      verifyInclusionProof(
        {
          ...proof,
          logId: "a b",
          leafIndex: "2",
          treeSize: -1,
          leafHash: "x",
          auditPath: Array(MAX_PROOF_HASHES + 1).fill(proof.leafHash),
          checkpoint: 1,
        },
        pinned,
      ).errors,
    ).toEqual([
      "inclusion proof logId `a b` is not 1-128 letters, digits, `.`, `_`, `:` or `-`",
      "inclusion proof leafIndex `2` is not a non-negative safe integer",
      "inclusion proof treeSize `-1` is not a non-negative safe integer",
      "inclusion proof leafHash `x` is not 64 lowercase hex digits",
      "inclusion proof auditPath is not a list of at most 64 hashes (64 lowercase hex digits)",
      "checkpoint: checkpoint is not a JSON object",
    ]);
  });
});

describe("verifyConsistencyProof", () => {
  it("accepts the proof between any two checkpoints of the log, equal sizes and the empty log included", () => {
    const sizes = [0, 1, 2, 4, 5, 8, 13];
    const checkpoints = sizes.map((s) => log.checkpoint(s));
    for (const from of checkpoints) {
      for (const to of checkpoints.filter((c) => c.size >= from.size)) {
        expect(verifyConsistencyProof(consistency(from, to), pinned), `${from.size} -> ${to.size}`).toEqual({ valid: true, errors: [] });
      }
    }
  });

  it("refuses a changed proof, trees that do not extend one another, and a shrinking pair", () => {
    const proof = consistency();
    const failed = `consistency proof does not show the tree of size 6 (root \`${at6.rootHash}\`) to be a prefix of the tree of size 13 (root \`${at13.rootHash}\`)`;
    expect(verifyConsistencyProof({ ...proof, proof: [flip(proof.proof[0]!), ...proof.proof.slice(1)] }, pinned).errors).toEqual([failed]);
    const other = testLog(13);
    other.leaves[2] = log.leaves[3]!;
    const otherAt6 = other.checkpoint(6);
    expect(verifyConsistencyProof({ ...proof, from: otherAt6 }, pinned).errors).toEqual([failed.replace(at6.rootHash, otherAt6.rootHash)]);
    expect(verifyConsistencyProof({ ...proof, from: at13, to: at6 }, pinned).errors).toEqual([
      "consistency proof goes from size 13 to the smaller size 6",
    ]);
    expect(verifyConsistencyProof({ ...proof, proof: [] }, pinned).valid).toBe(false);
  });

  it("binds both checkpoints: verified, of the proof's log", () => {
    const proof = consistency();
    expect(verifyConsistencyProof({ ...proof, logId: "elsewhere" }, pinned).errors).toEqual([
      "consistency proof is of log `elsewhere`, its `from` checkpoint of log `sidecar-test:1`",
      "consistency proof is of log `elsewhere`, its `to` checkpoint of log `sidecar-test:1`",
    ]);
    expect(verifyConsistencyProof({ ...proof, to: { ...at13, size: 12 } }, pinned).errors[0]).toMatch(/^to: checkpoint /);
    expect(verifyConsistencyProof({ ...proof, from: log.checkpoint(6, null, stranger) }, pinned).errors).toEqual([
      `from: checkpoint key \`${stranger.keyId}\` is not pinned`,
    ]);
    expect(verifyConsistencyProof({ ...proof, proof: "none" }, pinned).errors).toEqual([
      "consistency proof proof is not a list of at most 64 hashes (64 lowercase hex digits)",
    ]);
    expect(verifyConsistencyProof([], pinned).errors).toEqual(["consistency proof is not a JSON object"]);
  });
});
