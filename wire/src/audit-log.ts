/**
 * The tamper-evident audit log as the sidecar answers it (docs/audit.md, "Tamper evidence: the audit log"): log
 * entries, signed checkpoints, inclusion and consistency proofs. Hashes are 64 lowercase hex digits (SHA-256).
 */
import { Type } from "typebox";
import { Choice, Closed, Hex64, Instant, List, Text, type Static } from "./schema.js";

/** What an audit log entry records. */
export const LogEntryKind = Choice(["decision", "override", "confirmation", "verification", "security", "prune"], {
  title: "LogEntryKind",
  description: "What an audit log entry records.",
});
export type LogEntryKind = Static<typeof LogEntryKind>;

/** An entry of the log; its leaf input is UTF-8(kind) || 0x0A || the record's stored bytes (docs/audit.md). */
export const LogEntry = Closed(
  {
    position: Type.Integer({ minimum: 0, description: "The entry's leaf index: 0 for the first entry of the log." }),
    kind: LogEntryKind,
    record: Type.String({ description: "The stored JSON text of the record, exactly as stored." }),
  },
  {
    title: "LogEntry",
    description: "An entry of the log; its leaf input is UTF-8(kind) || 0x0A || the record's stored bytes (docs/audit.md).",
  },
);
export type LogEntry = Static<typeof LogEntry>;

/** The signed statement of a log's size and Merkle root, payloadType `application/vnd.writ.audit-checkpoint.v1+json`. */
export const SignedCheckpoint = Closed(
  {
    logId: Type.String({ pattern: "^[A-Za-z0-9._:-]{1,128}$", description: "The sidecar instance id: 1-128 of `A-Z a-z 0-9 . _ : -`." }),
    size: Type.Integer({ minimum: 0, description: "The number of entries covered: leaves [0, size)." }),
    rootHash: Hex64("RFC 9162 Merkle tree hash of those entries."),
    timestamp: Instant("RFC 3339 UTC with milliseconds."),
    previous: Type.Union([Hex64(), Type.Null()], {
      description: "The hash of the log's checkpoint before this one (SHA-256 of its JCS, signature included); null for the first.",
    }),
    frontier: List(Hex64(), {
      description: "The roots of the perfect subtrees covering leaves [0, size), left to right: one per bit set in `size`.",
    }),
    keyId: Type.String(),
    signature: Type.String({
      description: "Ed25519 over PAE(payloadType, JCS(the checkpoint without `signature`)), standard padded base64.",
    }),
  },
  {
    title: "SignedCheckpoint",
    description: "The signed statement of a log's size and Merkle root, payloadType `application/vnd.writ.audit-checkpoint.v1+json`.",
  },
);
export type SignedCheckpoint = Static<typeof SignedCheckpoint>;

/** Leaf `leafIndex`, whose hash is `leafHash`, is in the tree of `checkpoint`. */
export const InclusionProofJson = Closed(
  {
    logId: Type.String(),
    leafIndex: Type.Integer({ minimum: 0 }),
    treeSize: Type.Integer({ minimum: 0, description: "The checkpoint's `size`." }),
    leafHash: Hex64(),
    auditPath: List(Hex64(), { description: "RFC 9162 2.1.3.1 audit path, deepest sibling first." }),
    checkpoint: SignedCheckpoint,
  },
  { title: "InclusionProof", description: "Leaf `leafIndex`, whose hash is `leafHash`, is in the tree of `checkpoint`." },
);
export type InclusionProofJson = Static<typeof InclusionProofJson>;

/** The tree of `from` is a prefix of the tree of `to`. */
export const ConsistencyProofJson = Closed(
  {
    logId: Type.String(),
    from: SignedCheckpoint,
    to: SignedCheckpoint,
    proof: List(Hex64(), { description: "RFC 9162 2.1.4.1 consistency proof; empty when the sizes are equal or `from` is empty." }),
  },
  { title: "ConsistencyProof", description: "The tree of `from` is a prefix of the tree of `to`." },
);
export type ConsistencyProofJson = Static<typeof ConsistencyProofJson>;

/** `GET /audit/log`: the log's state. */
export const AuditLogStatus = Closed(
  {
    logId: Type.String(),
    size: Type.Integer({ minimum: 0, description: "Records sequenced into the log." }),
    pending: Type.Integer({ minimum: 0, description: "Records written and not sequenced yet." }),
    latest: Type.Union([SignedCheckpoint, Type.Null()], { description: "The latest signed checkpoint; null before the first." }),
  },
  { title: "AuditLogStatus", description: "The state of the sidecar's audit record log." },
);
export type AuditLogStatus = Static<typeof AuditLogStatus>;

/** `GET /audit/checkpoints`. */
export const CheckpointList = List(SignedCheckpoint, {
  title: "CheckpointList",
  description: "Checkpoints with `size` at least `from`, oldest first.",
});

/** A size of a log: a count of entries, so a safe integer (at most 2^53 - 1). */
const size = (description: string) => Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description });

const logId = Type.Optional(
  Type.String({
    maxLength: 128,
    pattern: "^[A-Za-z0-9._:-]{1,128}$",
    description: "The log to read (a sidecar instance id, `GET /audit/logs`: 1-128 of `A-Z a-z 0-9 . _ : -`); default this sidecar's.",
  }),
);

/** `GET /audit/logs`: the logs the store holds. */
export const AuditLogList = Closed(
  { logIds: List(Type.String(), { description: "This sidecar's log, and on a fleet's database every other sidecar's." }) },
  { title: "AuditLogList", description: "The audit record logs the store holds." },
);
export type AuditLogList = Static<typeof AuditLogList>;

/** `GET /audit/log` and `GET /audit/checkpoints/{size}` query parameters. */
export const LogQuery = Closed({ logId });
/** `GET /audit/checkpoints` query parameters. */
export const CheckpointQuery = Closed({
  from: Type.Optional(size("The smallest checkpoint size listed; default 0.")),
  limit: Type.Optional(size("At most this many, default 100; above 1,000 is 1,000.")),
  logId,
});
/** `GET /audit/checkpoints/{size}` path parameters. */
export const CheckpointParams = Closed({ size: size("The checkpoint's size.") });
/** `GET /audit/proofs/inclusion` query parameters: the proof is in the log that holds the decision. */
export const InclusionProofQuery = Closed({
  executionId: Text("The decision whose record is proven: its executionId, 1 to 1,024 characters."),
  size: Type.Optional(size("The checkpoint to prove against, by its size; default the latest.")),
});
/** `GET /audit/proofs/consistency` query parameters. */
export const ConsistencyProofQuery = Closed({
  from: size("The earlier checkpoint's size."),
  to: size("The later checkpoint's size, at least `from`."),
  logId,
});
/** `GET /audit/export` query parameters. */
export const ExportQuery = Closed({ from: Type.Optional(size("0 (the default) or the size of a checkpoint to resume from.")), logId });
