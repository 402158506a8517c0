/**
 * The tamper-evident audit log as the sidecar answers it (docs/audit.md, "Tamper evidence: the audit log"): log
 * entries, signed checkpoints, inclusion and consistency proofs. Hashes are 64 lowercase hex digits (SHA-256).
 */

/** What an audit log entry records. */
export type LogEntryKind = "decision" | "override" | "confirmation" | "verification" | "security" | "prune";

/** An entry of the log; its leaf input is UTF-8(kind) || 0x0A || the record's stored bytes (docs/audit.md). */
export interface LogEntry {
  /** The entry's leaf index: 0 for the first entry of the log. */
  readonly position: number;
  readonly kind: LogEntryKind;
  /** The stored JSON text of the record, exactly as stored. */
  readonly record: string;
}

/** The signed statement of a log's size and Merkle root, payloadType `application/vnd.writ.audit-checkpoint.v1+json`. */
export interface SignedCheckpoint {
  /** The sidecar instance id: 1-128 of `A-Z a-z 0-9 . _ : -`. */
  readonly logId: string;
  /** The number of entries covered: leaves [0, size). */
  readonly size: number;
  /** RFC 9162 Merkle tree hash of those entries. */
  readonly rootHash: string;
  /** RFC 3339 UTC with milliseconds. */
  readonly timestamp: string;
  /** The hash of the log's checkpoint before this one (SHA-256 of its JCS, signature included); null for the first. */
  readonly previous: string | null;
  /** The roots of the perfect subtrees covering leaves [0, size), left to right: one per bit set in `size`. */
  readonly frontier: readonly string[];
  readonly keyId: string;
  /** Ed25519 over PAE(payloadType, JCS(the checkpoint without `signature`)), standard padded base64. */
  readonly signature: string;
}

/** Leaf `leafIndex`, whose hash is `leafHash`, is in the tree of `checkpoint`. */
export interface InclusionProofJson {
  readonly logId: string;
  readonly leafIndex: number;
  /** The checkpoint's `size`. */
  readonly treeSize: number;
  readonly leafHash: string;
  /** RFC 9162 2.1.3.1 audit path, deepest sibling first. */
  readonly auditPath: readonly string[];
  readonly checkpoint: SignedCheckpoint;
}

/** The tree of `from` is a prefix of the tree of `to`. */
export interface ConsistencyProofJson {
  readonly logId: string;
  readonly from: SignedCheckpoint;
  readonly to: SignedCheckpoint;
  /** RFC 9162 2.1.4.1 consistency proof; empty when the sizes are equal or `from` is empty. */
  readonly proof: readonly string[];
}
