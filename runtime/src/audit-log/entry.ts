/**
 * The leaf of an audit log entry (docs/audit.md, "Entries and leaf inputs"): `UTF-8(kind) || 0x0A || record bytes`,
 * the record's stored bytes byte for byte, never re-encoded, so the store hashes a record once from the bytes it writes;
 * the leaf hash is merkle.ts `leafHash` of it. A kind never contains a line feed, so the split is unambiguous: a record
 * cannot be presented as another kind without changing its leaf hash.
 *
 * The leaf holds no position: the tree fixes it (RFC 9162 proves "leaf m of the tree of size n"), so a record moved
 * to another position changes the root of every checkpoint covering either place.
 */
import type { LogEntry } from "@writ/wire/types";
import { leafHashOfParts } from "./merkle.js";

export const LOG_ENTRY_KINDS = ["decision", "override", "confirmation", "verification", "security", "prune"] as const;
export type LogEntryKind = (typeof LOG_ENTRY_KINDS)[number];

/** A logged record: its kind and its stored JSON text (a string, or its UTF-8 bytes as stored). */
export interface LogRecord {
  readonly kind: LogEntryKind;
  readonly record: string | Uint8Array;
}

/** A log entry as an export or a verifier holds it: the record's text at its position (its leaf index). */
export type { LogEntry };

export function isLogEntryKind(value: unknown): value is LogEntryKind {
  return typeof value === "string" && (LOG_ENTRY_KINDS as readonly string[]).includes(value);
}

const KIND_LINES: Readonly<Record<LogEntryKind, Buffer>> = Object.fromEntries(
  LOG_ENTRY_KINDS.map((kind) => [kind, Buffer.from(`${kind}\n`)]),
) as Record<LogEntryKind, Buffer>;

function checked(entry: LogRecord): Buffer {
  if (!isLogEntryKind(entry.kind))
    throw new RangeError(`log entry kind \`${String(entry.kind)}\` is not one of ${LOG_ENTRY_KINDS.join(", ")}`);
  if (typeof entry.record !== "string" && !(entry.record instanceof Uint8Array))
    throw new TypeError("log entry record is not its stored JSON text (a string or bytes)");
  return KIND_LINES[entry.kind];
}

/**
 * The leaf input of `entry`: UTF-8(kind) || 0x0A || the record's bytes (a string record is taken as UTF-8).
 * @throws RangeError when `kind` is not a log entry kind; TypeError when `record` is neither a string nor bytes
 */
export function entryLeafInput(entry: LogRecord): Uint8Array {
  const kind = checked(entry);
  return new Uint8Array(Buffer.concat([kind, typeof entry.record === "string" ? Buffer.from(entry.record, "utf8") : entry.record]));
}

/**
 * The leaf hash of `entry`, SHA-256(0x00 || entryLeafInput(entry)), without building the leaf input first (merkle.ts
 * `leafHashOfParts`): what a store computes from the bytes it writes.
 * @throws RangeError when `kind` is not a log entry kind; TypeError when `record` is neither a string nor bytes
 */
export function entryLeafHash(entry: LogRecord): Uint8Array {
  const kind = checked(entry);
  return leafHashOfParts([kind, typeof entry.record === "string" ? Buffer.from(entry.record, "utf8") : entry.record]);
}
