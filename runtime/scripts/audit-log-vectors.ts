/**
 * The audit log vectors, conformance/vectors/audit-log.json (docs/audit.md, "Tamper evidence: the audit log";
 * conformance/vectors/README.md): written by runtime/scripts/conformance-vectors.ts with the other vector files, from
 * the same fixed keys, with a fixed clock, so every run writes the same bytes.
 *
 * A log of seven entries, one of each kind and a second decision: each entry's leaf input and leaf hash, the root of
 * every size 0 to 7, the inclusion path of every leaf in every size, the consistency proof between every pair of
 * sizes, two checkpoints chained by `previous`, and the two proofs as the sidecar's routes answer them. Beside each
 * valid case, cases that must be refused (`expected.valid` false), each with what is wrong in its description and,
 * where writ's verification names it, `expected.errors`: the messages writ gives, for writ's own tests; another
 * verifier compares `valid` only. Every expected result is stated here, never read back from the functions tested:
 * runtime/test/fixtures/conformance-vectors.test.ts checks each one with them.
 */
import {
  MerkleFrontier,
  PAYLOAD_TYPES,
  canonicalJson,
  checkpointHash,
  consistencyProof,
  createCheckpoint,
  entryLeafHash,
  entryLeafInput,
  inclusionProof,
  rootOf,
  sha256Hex,
  signObject,
  toHex,
  verifyConsistency,
  verifyInclusion,
  hashFromHex,
  type ConsistencyProofJson,
  type InclusionProofJson,
  type LogEntry,
  type PayloadType,
  type SignedCheckpoint,
  type SigningKey,
} from "../src/index.js";

export const AUDIT_LOG_FILE = "audit-log.json";

/** The result a vector must give: valid, or refused (with writ's messages where writ's verification gives them). */
export type AuditExpected = { readonly valid: true } | { readonly valid: false; readonly errors?: readonly string[] };

export interface EntryVector {
  readonly position: number;
  readonly kind: LogEntry["kind"];
  readonly record: string;
  /** UTF-8 text of the leaf input: the kind, a line feed, the record. */
  readonly leafInput: string;
  readonly leafHash: string;
}

export interface InclusionVector {
  readonly id: string;
  readonly description: string;
  readonly leafIndex: number;
  readonly treeSize: number;
  readonly leafHash: string;
  readonly rootHash: string;
  readonly auditPath: readonly string[];
  readonly expected: AuditExpected;
}

export interface ConsistencyVector {
  readonly id: string;
  readonly description: string;
  readonly fromSize: number;
  readonly toSize: number;
  readonly fromRoot: string;
  readonly toRoot: string;
  readonly proof: readonly string[];
  readonly expected: AuditExpected;
}

export interface CheckpointVector {
  readonly id: string;
  readonly description: string;
  /** The checkpoint as received (raw JSON text). */
  readonly json: string;
  /** The checkpoint's hash (SHA-256 of its JCS), on valid checkpoints. */
  readonly checkpointHash?: string;
  readonly expected: AuditExpected;
}

export interface ChainVector {
  readonly id: string;
  readonly description: string;
  /** Ids of `checkpoints` vectors, oldest first. */
  readonly checkpoints: readonly string[];
  readonly expected: AuditExpected;
}

export interface ProofVector {
  readonly id: string;
  readonly description: string;
  readonly type: "inclusion" | "consistency";
  /** The proof as a route answers it (raw JSON text). */
  readonly json: string;
  /** Inclusion only: the log entry the verifier holds, checked against `leafHash` and `leafIndex`. */
  readonly entry?: LogEntry;
  readonly expected: AuditExpected;
}

export interface AuditLogVectorFile {
  readonly kind: "audit-log";
  readonly payloadType: typeof PAYLOAD_TYPES.auditCheckpoint;
  /** The one pinned key (SPKI PEM). */
  readonly publicKey: string;
  readonly logId: string;
  readonly entries: readonly EntryVector[];
  readonly roots: readonly { readonly size: number; readonly rootHash: string }[];
  readonly inclusion: readonly InclusionVector[];
  readonly consistency: readonly ConsistencyVector[];
  readonly checkpoints: readonly CheckpointVector[];
  readonly chains: readonly ChainVector[];
  readonly proofs: readonly ProofVector[];
}

const LOG_ID = "conformance-sidecar-1";
const T0 = Date.parse("2026-01-15T09:00:00.000Z");
const VALID = { valid: true } as const;
const utf8 = new TextDecoder();

/** The log: records as the sidecar stores them, one entry per kind, a second decision with non-ASCII text. */
const ENTRIES: readonly LogEntry[] = [
  {
    position: 0,
    kind: "decision",
    record: '{"executionId":"3f0c8a52-6d1e-4c7a-9b1e-5a0d2c4e6f01","status":"approved","recordedAt":"2026-01-15T09:00:00.000Z"}',
  },
  {
    position: 1,
    kind: "verification",
    record: '{"executionId":"3f0c8a52-6d1e-4c7a-9b1e-5a0d2c4e6f01","valid":true,"recordedAt":"2026-01-15T09:00:01.000Z"}',
  },
  {
    position: 2,
    kind: "override",
    record:
      '{"executionId":"3f0c8a52-6d1e-4c7a-9b1e-5a0d2c4e6f02","approved":true,"approvedBy":"alice@example.com","recordedAt":"2026-01-15T09:05:00.000Z"}',
  },
  {
    position: 3,
    kind: "confirmation",
    record: '{"executionId":"3f0c8a52-6d1e-4c7a-9b1e-5a0d2c4e6f01","match":true,"recordedAt":"2026-01-15T09:06:00.000Z"}',
  },
  {
    position: 4,
    kind: "security",
    record: '{"type":"authentication_failed","method":"POST","path":"/evaluate","ip":"203.0.113.7","detail":"bad key"}',
  },
  {
    position: 5,
    kind: "decision",
    record:
      '{"executionId":"3f0c8a52-6d1e-4c7a-9b1e-5a0d2c4e6f03","status":"rejected","reason":"risque trop élevé","recordedAt":"2026-01-15T09:07:00.000Z"}',
  },
  { position: 6, kind: "prune", record: '{"positions":[4],"reason":"retention: security events older than 30 days"}' },
];

const flip = (hash: string): string => `${hash.slice(0, 63)}${hash.endsWith("0") ? "1" : "0"}`;

function frontierOf(leaves: readonly Uint8Array[]): MerkleFrontier {
  const frontier = MerkleFrontier.empty();
  for (const h of leaves) frontier.append(h);
  return frontier;
}

/** `checkpoint` with members changed, signed again in `payloadType` by `key`: a genuine signature over that body. */
function resigned(
  checkpoint: SignedCheckpoint,
  changes: Partial<SignedCheckpoint>,
  key: SigningKey,
  payloadType: PayloadType = PAYLOAD_TYPES.auditCheckpoint,
): SignedCheckpoint {
  const { signature: _old, ...body } = { ...checkpoint, ...changes };
  return { ...body, signature: signObject(payloadType, body, key) };
}

/** A negative vector that the tree functions accept is a broken generator, not a vector. */
function mustFail(id: string, accepted: boolean): void {
  if (accepted) throw new Error(`negative vector ${id} verifies`);
}

export function auditLogVectors(keys: { readonly signer: SigningKey; readonly unpinned: SigningKey }): AuditLogVectorFile {
  const { signer, unpinned } = keys;
  const leaves = ENTRIES.map(entryLeafHash);
  const hex = (b: Uint8Array): string => toHex(b);
  const root = (size: number): string => hex(rootOf(leaves.slice(0, size)));
  const entries: EntryVector[] = ENTRIES.map((e, i) => ({ ...e, leafInput: utf8.decode(entryLeafInput(e)), leafHash: hex(leaves[i]!) }));
  const roots = Array.from({ length: ENTRIES.length + 1 }, (_, size) => ({ size, rootHash: root(size) }));

  // ---- inclusion: every leaf of every size, then what must be refused ---------------------------------------------
  const inclusion: InclusionVector[] = [];
  for (let size = 1; size <= ENTRIES.length; size++) {
    for (let i = 0; i < size; i++) {
      inclusion.push({
        id: `inclusion-${i}-of-${size}`,
        description: `the audit path of leaf ${i} in the tree of ${size}`,
        leafIndex: i,
        treeSize: size,
        leafHash: hex(leaves[i]!),
        rootHash: root(size),
        auditPath: inclusionProof(leaves.slice(0, size), i).map(hex),
        expected: VALID,
      });
    }
  }
  const path57 = inclusionProof(leaves, 5).map(hex);
  const refusedInclusion = (
    id: string,
    description: string,
    leafIndex: number,
    treeSize: number,
    auditPath: readonly string[],
    rootHash = root(7),
  ): void => {
    mustFail(id, verifyInclusion(leaves[5]!, leafIndex, treeSize, auditPath.map(hashFromHex), hashFromHex(rootHash)));
    inclusion.push({ id, description, leafIndex, treeSize, leafHash: hex(leaves[5]!), rootHash, auditPath, expected: { valid: false } });
  };
  refusedInclusion("inclusion-flipped-hash", "inclusion-5-of-7 with the last bit of its second path hash flipped", 5, 7, [
    path57[0]!,
    flip(path57[1]!),
    path57[2]!,
  ]);
  refusedInclusion("inclusion-wrong-index", "inclusion-5-of-7's path and leaf presented as leaf 4", 4, 7, path57);
  refusedInclusion(
    "inclusion-wrong-size",
    "inclusion-5-of-7's path presented for the tree of 6 (root of 7): the path has another shape there",
    5,
    6,
    path57,
  );
  refusedInclusion("inclusion-index-not-in-tree", "leaf index 7 in the tree of 7 (indices are 0 to 6)", 7, 7, path57);
  refusedInclusion("inclusion-extra-hash", "inclusion-5-of-7 with the root appended to its path", 5, 7, [...path57, root(7)]);
  refusedInclusion("inclusion-other-root", "inclusion-5-of-7 checked against the root of 6", 5, 7, path57, root(6));

  // ---- consistency: every pair of sizes, then what must be refused -------------------------------------------------
  const consistency: ConsistencyVector[] = [];
  for (let to = 0; to <= ENTRIES.length; to++) {
    for (let from = 0; from <= to; from++) {
      const proof = consistencyProof(leaves, from, to).map(hex);
      const why = from === to ? "the same tree: an empty proof" : from === 0 ? "from the empty tree: an empty proof" : "RFC 9162 PROOF";
      consistency.push({
        id: `consistency-${from}-to-${to}`,
        description: `from size ${from} to size ${to} (${why})`,
        fromSize: from,
        toSize: to,
        fromRoot: root(from),
        toRoot: root(to),
        proof,
        expected: VALID,
      });
    }
  }
  const proof37 = consistencyProof(leaves, 3, 7).map(hex);
  const forked = [leaves[0]!, leaves[1]!, entryLeafHash({ ...ENTRIES[2]!, record: ENTRIES[2]!.record.replace("alice", "mallory") })];
  const refusedConsistency = (
    id: string,
    description: string,
    fromSize: number,
    toSize: number,
    fromRoot: string,
    toRoot: string,
    proof: readonly string[],
  ): void => {
    mustFail(id, verifyConsistency(fromSize, toSize, hashFromHex(fromRoot), hashFromHex(toRoot), proof.map(hashFromHex)));
    consistency.push({ id, description, fromSize, toSize, fromRoot, toRoot, proof, expected: { valid: false } });
  };
  refusedConsistency(
    "consistency-flipped-hash",
    "consistency-3-to-7 with the last bit of its first proof hash flipped",
    3,
    7,
    root(3),
    root(7),
    [flip(proof37[0]!), ...proof37.slice(1)],
  );
  refusedConsistency(
    "consistency-not-extending",
    "from a tree of 3 whose entry 2 differs (the override approved by mallory@example.com) to the tree of 7, with consistency-3-to-7's proof: the tree of 7 does not extend it",
    3,
    7,
    hex(rootOf(forked)),
    root(7),
    proof37,
  );
  refusedConsistency(
    "consistency-shrinking",
    "consistency-3-to-7's proof presented from size 7 to size 3",
    7,
    3,
    root(7),
    root(3),
    proof37,
  );
  refusedConsistency("consistency-empty-proof", "from size 3 to size 7 with an empty proof", 3, 7, root(3), root(7), []);
  refusedConsistency(
    "consistency-same-size-other-root",
    "two trees of size 7 with different roots (the last one forked), empty proof",
    7,
    7,
    root(7),
    hex(rootOf([...leaves.slice(0, 6), forked[2]!])),
    [],
  );

  // ---- checkpoints and their chain ---------------------------------------------------------------------------------
  const at = (size: number): Date => new Date(T0 + size * 60_000);
  const cp3 = createCheckpoint({ logId: LOG_ID, frontier: frontierOf(leaves.slice(0, 3)), timestamp: at(3), previous: null }, signer);
  const cp7 = createCheckpoint({ logId: LOG_ID, frontier: frontierOf(leaves), timestamp: at(7), previous: cp3 }, signer);
  const relinked = resigned(cp7, { previous: sha256Hex(canonicalJson({ ...cp3, signature: "" })) }, signer);
  const pinnedId = signer.keyId;
  const notVerified = [`checkpoint signature does not verify against pinned key \`${pinnedId}\``];
  const checkpoints: CheckpointVector[] = [
    {
      id: "checkpoint-3",
      description: "the first checkpoint of the log: 3 entries, previous null",
      json: JSON.stringify(cp3),
      checkpointHash: checkpointHash(cp3),
      expected: VALID,
    },
    {
      id: "checkpoint-7",
      description: "the second checkpoint: 7 entries, previous the hash of checkpoint-3",
      json: JSON.stringify(cp7),
      checkpointHash: checkpointHash(cp7),
      expected: VALID,
    },
    {
      id: "checkpoint-7-relinked",
      description:
        "checkpoint-7 with previous replaced (the hash of checkpoint-3 with an empty signature) and signed again: valid alone, it breaks the chain",
      json: JSON.stringify(relinked),
      checkpointHash: checkpointHash(relinked),
      expected: VALID,
    },
    {
      id: "checkpoint-changed-timestamp",
      description: "checkpoint-7 with its timestamp changed after signing",
      json: JSON.stringify({ ...cp7, timestamp: at(8).toISOString() }),
      expected: { valid: false, errors: notVerified },
    },
    {
      id: "checkpoint-changed-root",
      description: "checkpoint-7 with rootHash set to the root of 6 after signing",
      json: JSON.stringify({ ...cp7, rootHash: root(6) }),
      expected: { valid: false, errors: [...notVerified, `checkpoint frontier does not hash to its rootHash \`${root(6)}\``] },
    },
    {
      id: "checkpoint-key-not-pinned",
      description:
        "checkpoint-7 signed by another key (RFC 8032 TEST 2), its keyId naming that key: a key arriving with the checkpoint is never trusted",
      json: JSON.stringify(resigned(cp7, { keyId: unpinned.keyId }, unpinned)),
      expected: { valid: false, errors: [`checkpoint key \`${unpinned.keyId}\` is not pinned`] },
    },
    {
      id: "checkpoint-wrong-payload-type",
      description: "checkpoint-7 signed by the pinned key as an attestation (another payloadType)",
      json: JSON.stringify(resigned(cp7, {}, signer, PAYLOAD_TYPES.attestation)),
      expected: { valid: false, errors: notVerified },
    },
    {
      id: "checkpoint-frontier-mismatch",
      description:
        "checkpoint-7 with its frontier in reverse order, signed: the signature verifies, the frontier does not hash to rootHash",
      json: JSON.stringify(resigned(cp7, { frontier: [...cp7.frontier].reverse() }, signer)),
      expected: { valid: false, errors: [`checkpoint frontier does not hash to its rootHash \`${cp7.rootHash}\``] },
    },
    {
      id: "checkpoint-frontier-count",
      description: "checkpoint-7 without the last hash of its frontier, signed: size 7 has three bits set, so three hashes",
      json: JSON.stringify(resigned(cp7, { frontier: cp7.frontier.slice(0, 2) }, signer)),
      expected: { valid: false, errors: ["checkpoint frontier has 2 hashes; a tree of size 7 has 3 (one per bit set in the size)"] },
    },
    {
      id: "checkpoint-timestamp-without-milliseconds",
      description: "checkpoint-3 with a timestamp without milliseconds, signed",
      json: JSON.stringify(resigned(cp3, { timestamp: "2026-01-15T09:03:00Z" }, signer)),
      expected: {
        valid: false,
        errors: [
          "checkpoint timestamp `2026-01-15T09:03:00Z` is not an RFC 3339 UTC time with milliseconds (like 2026-01-15T09:00:00.000Z)",
        ],
      },
    },
  ];
  const chains: ChainVector[] = [
    { id: "chain-valid", description: "checkpoint-3 then checkpoint-7", checkpoints: ["checkpoint-3", "checkpoint-7"], expected: VALID },
    {
      id: "chain-broken-previous",
      description: "checkpoint-3 then checkpoint-7-relinked, whose previous is not checkpoint-3's hash",
      checkpoints: ["checkpoint-3", "checkpoint-7-relinked"],
      expected: {
        valid: false,
        errors: [`checkpoint 1: previous \`${relinked.previous ?? "null"}\` is not the hash \`${checkpointHash(cp3)}\` of checkpoint 0`],
      },
    },
    {
      id: "chain-reordered",
      description: "checkpoint-7 then checkpoint-3",
      checkpoints: ["checkpoint-7", "checkpoint-3"],
      expected: {
        valid: false,
        errors: [
          `checkpoint 1: previous \`null\` is not the hash \`${checkpointHash(cp7)}\` of checkpoint 0`,
          "checkpoint 1: size 3 is smaller than size 7 of checkpoint 0",
        ],
      },
    },
  ];

  // ---- the proofs as the routes answer them ------------------------------------------------------------------------
  const included: InclusionProofJson = {
    logId: LOG_ID,
    leafIndex: 5,
    treeSize: 7,
    leafHash: hex(leaves[5]!),
    auditPath: path57,
    checkpoint: cp7,
  };
  const extended: ConsistencyProofJson = { logId: LOG_ID, from: cp3, to: cp7, proof: proof37 };
  const moved: LogEntry = { ...ENTRIES[5]!, position: 4 };
  const proofs: ProofVector[] = [
    {
      id: "proof-inclusion",
      description: "entry 5 in checkpoint-7, with the entry",
      type: "inclusion",
      json: JSON.stringify(included),
      entry: ENTRIES[5]!,
      expected: VALID,
    },
    {
      id: "proof-inclusion-entry-moved",
      description:
        "proof-inclusion with the verifier holding entry 5's record at position 4: the record cannot move (the tree fixes its position)",
      type: "inclusion",
      json: JSON.stringify(included),
      entry: moved,
      expected: {
        valid: false,
        errors: ["the given entry's position 4 is not the proof's leafIndex 5"],
      },
    },
    {
      id: "proof-inclusion-tree-size",
      description: "proof-inclusion claiming a treeSize of 6 with checkpoint-7",
      type: "inclusion",
      json: JSON.stringify({ ...included, treeSize: 6 }),
      expected: { valid: false, errors: ["inclusion proof treeSize 6 is not its checkpoint's size 7"] },
    },
    {
      id: "proof-inclusion-flipped-hash",
      description: "proof-inclusion with the last bit of its first path hash flipped",
      type: "inclusion",
      json: JSON.stringify({ ...included, auditPath: [flip(path57[0]!), ...path57.slice(1)] }),
      expected: {
        valid: false,
        errors: [`inclusion proof audit path does not lead from leaf 5 to the checkpoint's root \`${cp7.rootHash}\` at size 7`],
      },
    },
    {
      id: "proof-inclusion-checkpoint-not-pinned",
      description: "proof-inclusion whose checkpoint is signed by a key nobody pinned",
      type: "inclusion",
      json: JSON.stringify({ ...included, checkpoint: resigned(cp7, { keyId: unpinned.keyId }, unpinned) }),
      expected: { valid: false, errors: [`checkpoint: checkpoint key \`${unpinned.keyId}\` is not pinned`] },
    },
    {
      id: "proof-consistency",
      description: "from checkpoint-3 to checkpoint-7",
      type: "consistency",
      json: JSON.stringify(extended),
      expected: VALID,
    },
    {
      id: "proof-consistency-swapped",
      description: "proof-consistency with from and to swapped",
      type: "consistency",
      json: JSON.stringify({ ...extended, from: cp7, to: cp3 }),
      expected: { valid: false, errors: ["consistency proof goes from size 7 to the smaller size 3"] },
    },
    {
      id: "proof-consistency-flipped-hash",
      description: "proof-consistency with the last bit of its last proof hash flipped",
      type: "consistency",
      json: JSON.stringify({ ...extended, proof: [...proof37.slice(0, -1), flip(proof37[proof37.length - 1]!)] }),
      expected: {
        valid: false,
        errors: [
          `consistency proof does not show the tree of size 3 (root \`${cp3.rootHash}\`) to be a prefix of the tree of size 7 (root \`${cp7.rootHash}\`)`,
        ],
      },
    },
  ];

  return {
    kind: "audit-log",
    payloadType: PAYLOAD_TYPES.auditCheckpoint,
    publicKey: signer.publicKey.pem,
    logId: LOG_ID,
    entries,
    roots,
    inclusion,
    consistency,
    checkpoints,
    chains,
    proofs,
  };
}
