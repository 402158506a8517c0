/**
 * The leaf input of an audit log entry (docs/audit.md, "Tamper evidence: the audit log"). The sidecar stores each
 * audit record as a log entry: its position in the log, its kind, and the record's JSON text exactly as stored. The
 * leaf input is
 *
 *     UTF-8(JCS({"kind": kind, "position": position, "record": record}))
 *
 * so the record text is covered byte for byte (it is one JSON string, not re-canonicalized), and a record cannot be
 * moved to another position or presented as another kind without changing its leaf hash.
 *
 * INVARIANT (position is the leaf index): the entry at position p is leaf p of the log's tree. A verifier holding an
 * entry and an inclusion proof checks both (proofs.ts does when given the entry).
 */
import { canonicalBytes } from "../canonical/jcs.js";
import { leafHash } from "./merkle.js";

export const LOG_ENTRY_KINDS = ["decision", "override", "confirmation", "verification", "security", "prune"] as const;
export type LogEntryKind = (typeof LOG_ENTRY_KINDS)[number];

export interface LogEntry {
  /** The entry's leaf index: 0 for the first entry of the log. */
  readonly position: number;
  readonly kind: LogEntryKind;
  /** The stored JSON text of the record, exactly as stored. */
  readonly record: string;
}

export function isLogEntryKind(value: unknown): value is LogEntryKind {
  return typeof value === "string" && (LOG_ENTRY_KINDS as readonly string[]).includes(value);
}

/**
 * The leaf input of `entry`: UTF-8 of the JCS of `{kind, position, record}`.
 * @throws RangeError when `position` is not a non-negative safe integer or `kind` is not a log entry kind
 * @throws TypeError when `record` is not a string
 * @throws CanonicalizationError when `record` holds a lone surrogate (not UTF-8 text)
 */
export function entryLeafInput(entry: LogEntry): Uint8Array {
  const { position, kind, record } = entry;
  if (typeof position !== "number" || !Number.isSafeInteger(position) || position < 0) {
    throw new RangeError(`log entry position \`${String(position)}\` is not a non-negative safe integer`);
  }
  if (!isLogEntryKind(kind)) throw new RangeError(`log entry kind \`${String(kind)}\` is not one of ${LOG_ENTRY_KINDS.join(", ")}`);
  if (typeof record !== "string") throw new TypeError("log entry record is not a string (the stored JSON text)");
  return canonicalBytes({ kind, position, record });
}

/** The leaf hash of `entry`: merkle.ts `leafHash(entryLeafInput(entry))`. */
export function entryLeafHash(entry: LogEntry): Uint8Array {
  return leafHash(entryLeafInput(entry));
}
