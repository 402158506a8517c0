import { describe, expect, it } from "vitest";
import {
  MerkleFrontier,
  PAYLOAD_TYPES,
  canonicalJson,
  checkpointHash,
  createCheckpoint,
  createTrustRoot,
  isCheckpointTimestamp,
  rootOf,
  sha256Hex,
  signObject,
  toHex,
  verifyCheckpoint,
  verifyObject,
  type SignedCheckpoint,
} from "../../src/index.js";
import { LOG_ID, T0, signer, stranger, testLog } from "./support.js";

const pinned = [signer.publicKey];
const log = testLog(11);

/** `checkpoint` with members changed and signed again by `signer`: a genuine signature over a wrong body. */
function resigned(checkpoint: SignedCheckpoint, changes: Record<string, unknown>): Record<string, unknown> {
  const { signature: _old, ...body } = { ...checkpoint, ...changes };
  return { ...body, signature: signObject(PAYLOAD_TYPES.auditCheckpoint, body, signer) };
}

describe("createCheckpoint", () => {
  it("makes the documented form from a frontier, signed in the audit checkpoint domain, and it verifies", () => {
    const c = log.checkpoint(11);
    expect(Object.keys(c)).toEqual(["logId", "size", "rootHash", "timestamp", "previous", "frontier", "keyId", "signature"]);
    expect(c).toMatchObject({
      logId: LOG_ID,
      size: 11,
      rootHash: toHex(rootOf(log.leaves)),
      timestamp: "2026-01-15T09:00:11.000Z",
      previous: null,
      keyId: signer.keyId,
    });
    expect(c.frontier).toHaveLength(3);
    const { signature, ...unsigned } = c;
    expect(verifyObject(PAYLOAD_TYPES.auditCheckpoint, unsigned, signature, pinned)).not.toBeNull();
    expect(verifyObject(PAYLOAD_TYPES.attestation, unsigned, signature, pinned)).toBeNull();
    expect(verifyCheckpoint(c, pinned)).toEqual({ valid: true, errors: [], checkpoint: c });
    expect(verifyCheckpoint(JSON.parse(JSON.stringify(c)), createTrustRoot("v1", pinned)).valid).toBe(true);
  });

  it("chains: previous is the SHA-256 of the JCS of the whole previous checkpoint, signature included", () => {
    const first = log.checkpoint(4);
    const second = log.checkpoint(9, first);
    expect(checkpointHash(first)).toBe(sha256Hex(canonicalJson(first)));
    expect(second.previous).toBe(checkpointHash(first));
    expect(checkpointHash({ ...first, signature: second.signature })).not.toBe(second.previous);
  });

  it("makes a checkpoint of the empty log: size 0, the empty root, no frontier hash", () => {
    const c = createCheckpoint({ logId: LOG_ID, frontier: MerkleFrontier.empty(), timestamp: new Date(T0), previous: null }, signer);
    expect(c).toMatchObject({ size: 0, rootHash: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", frontier: [] });
    expect(verifyCheckpoint(c, pinned).valid).toBe(true);
  });

  it("refuses a bad log id, an invalid date, and a previous checkpoint of another log, larger, or forked", () => {
    const frontier = MerkleFrontier.empty();
    for (const h of log.leaves.slice(0, 5)) frontier.append(h);
    const fields = { logId: LOG_ID, frontier, timestamp: new Date(T0), previous: null };
    expect(() => createCheckpoint({ ...fields, logId: "has space" }, signer)).toThrow(
      "log id `has space` is not 1-128 letters, digits, `.`, `_`, `:` or `-`",
    );
    expect(() => createCheckpoint({ ...fields, logId: "x".repeat(129) }, signer)).toThrow(RangeError);
    expect(() => createCheckpoint({ ...fields, timestamp: new Date(Number.NaN) }, signer)).toThrow(
      "checkpoint timestamp is not a valid date between years 0 and 9999",
    );
    expect(() => createCheckpoint({ ...fields, timestamp: new Date("+010000-01-01T00:00:00Z") }, signer)).toThrow(RangeError);
    expect(() => createCheckpoint({ ...fields, previous: testLog(5, "other").checkpoint(3) }, signer)).toThrow(
      "previous checkpoint is of log `other`, not `sidecar-test:1`",
    );
    expect(() => createCheckpoint({ ...fields, previous: log.checkpoint(6) }, signer)).toThrow(
      "previous checkpoint covers 6 entries, more than this one's 5",
    );
    const forked = testLog(5);
    forked.leaves[0] = log.leaves[1]!;
    expect(() => createCheckpoint({ ...fields, previous: forked.checkpoint(5) }, signer)).toThrow(
      "previous checkpoint has another root at the same size 5: the log forked",
    );
    expect(createCheckpoint({ ...fields, previous: log.checkpoint(5) }, signer).size).toBe(5);
  });
});

describe("verifyCheckpoint", () => {
  const c = log.checkpoint(11);

  it("refuses every member changed after signing", () => {
    for (const [member, value] of [
      ["logId", "sidecar-test:2"],
      ["timestamp", "2026-01-15T09:00:12.000Z"],
      ["previous", "0".repeat(64)],
    ] as const) {
      const result = verifyCheckpoint({ ...c, [member]: value }, pinned);
      expect(result, member).toEqual({
        valid: false,
        errors: [`checkpoint signature does not verify against pinned key \`${signer.keyId}\``],
      });
    }
    const grown = log.checkpoint(10);
    expect(verifyCheckpoint({ ...c, size: 10, rootHash: grown.rootHash, frontier: grown.frontier }, pinned).errors).toEqual([
      `checkpoint signature does not verify against pinned key \`${signer.keyId}\``,
    ]);
  });

  it("trusts pinned keys only, picked by keyId", () => {
    const other = log.checkpoint(11, null, stranger);
    expect(verifyCheckpoint(other, pinned).errors).toEqual([`checkpoint key \`${stranger.keyId}\` is not pinned`]);
    expect(verifyCheckpoint({ ...other, keyId: signer.keyId }, pinned).errors).toEqual([
      `checkpoint signature does not verify against pinned key \`${signer.keyId}\``,
    ]);
    expect(verifyCheckpoint(other, [signer.publicKey, stranger.publicKey]).valid).toBe(true);
    expect(verifyCheckpoint(c, []).valid).toBe(false);
  });

  it("refuses a checkpoint signed in another domain and a malformed signature", () => {
    const { signature: _s, ...unsigned } = c;
    expect(verifyCheckpoint({ ...c, signature: signObject(PAYLOAD_TYPES.attestation, unsigned, signer) }, pinned).valid).toBe(false);
    expect(verifyCheckpoint({ ...c, signature: c.signature.replace(/==$/, "") }, pinned).errors).toEqual([
      "checkpoint signature is malformed: signature is not 64 bytes of standard padded base64",
    ]);
  });

  it("refuses a validly signed checkpoint whose frontier does not hash to its root, or has the wrong number of hashes", () => {
    const wrongFrontier = resigned(c, { frontier: [...c.frontier].reverse() });
    expect(verifyCheckpoint(wrongFrontier, pinned).errors).toEqual([`checkpoint frontier does not hash to its rootHash \`${c.rootHash}\``]);
    expect(verifyCheckpoint(resigned(c, { size: 12 }), pinned).errors).toEqual([
      "checkpoint frontier has 3 hashes; a tree of size 12 has 2 (one per bit set in the size)",
    ]);
    expect(verifyCheckpoint(resigned(c, { rootHash: log.checkpoint(10).rootHash }), pinned).errors).toEqual([
      `checkpoint frontier does not hash to its rootHash \`${log.checkpoint(10).rootHash}\``,
    ]);
  });

  it("requires the exact shape, naming every problem", () => {
    expect(verifyCheckpoint([c], pinned).errors).toEqual(["checkpoint is not a JSON object"]);
    expect(verifyCheckpoint({ ...c, extra: 1 }, pinned).errors).toEqual(["checkpoint has unknown member `extra`"]);
    const { previous: _p, ...withoutPrevious } = c;
    expect(verifyCheckpoint(withoutPrevious, pinned).errors).toEqual(["checkpoint lacks `previous`"]);
    const bad = {
      ...c,
      logId: "",
      size: -1,
      rootHash: c.rootHash.toUpperCase(),
      timestamp: "2026-01-15T09:00:11Z",
      previous: "",
      frontier: ["ab"],
      keyId: "K",
      signature: 5,
    };
    expect(verifyCheckpoint(bad, pinned).errors).toEqual([
      "checkpoint logId `` is not 1-128 letters, digits, `.`, `_`, `:` or `-`",
      "checkpoint size `-1` is not a non-negative safe integer",
      `checkpoint rootHash \`${c.rootHash.toUpperCase()}\` is not 64 lowercase hex digits`,
      "checkpoint timestamp `2026-01-15T09:00:11Z` is not an RFC 3339 UTC time with milliseconds (like 2026-01-15T09:00:00.000Z)",
      "checkpoint previous `` is neither null nor 64 lowercase hex digits",
      "checkpoint frontier is not a list of hashes (64 lowercase hex digits)",
      "checkpoint keyId `K` is not 32 lowercase hex digits",
      "checkpoint signature is not a string",
    ]);
  });

  it("timestamps: UTC with milliseconds, a real date", () => {
    expect(isCheckpointTimestamp("2026-01-15T09:00:00.000Z")).toBe(true);
    expect(isCheckpointTimestamp("2024-02-29T23:59:59.999Z")).toBe(true);
    for (const t of [
      "2026-01-15T09:00:00Z",
      "2026-01-15T09:00:00.000+00:00",
      "2025-02-29T00:00:00.000Z",
      "2026-01-15T24:00:00.000Z",
      "2026-01-15t09:00:00.000z",
      5,
    ]) {
      expect(isCheckpointTimestamp(t), String(t)).toBe(false);
    }
  });
});
