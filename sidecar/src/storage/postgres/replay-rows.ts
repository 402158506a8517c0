/**
 * The replay table's rows (migrations/0001-replay-audit-trust.sql) as replay-store.ts reads and writes them: the
 * columns it names, a fingerprint's key, the entry a row reads back as, and when a row counts as absent.
 */
import { parseStoredEntry } from "@writ/runtime/replay-store";
import type { ReplayEntry } from "@writ/runtime";

/** A row of the replay table, as the driver reads it (bigint columns as text, the key as bytes). */
export interface Row {
  readonly fingerprint: Buffer;
  readonly state: string;
  readonly token: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly expires_at: string | null;
  readonly context: string | null;
  readonly resolution: string | null;
}

/** The columns of an entry, named (never `*`: a prepared statement's result must not change with the table). */
export const COLUMNS = "fingerprint, state, token, created_at, updated_at, expires_at, context, resolution";

/** A claim that takes over an expired row replaces all of it. */
export const UPSERT_SET =
  "state = EXCLUDED.state, token = EXCLUDED.token, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at, expires_at = EXCLUDED.expires_at, context = EXCLUDED.context, resolution = NULL";

/** A `reserved` or `failed` row whose TTL has passed at `$now` counts as absent (lifecycle.ts `isExpired`). */
export const EXPIRED = (row: string, now: string) =>
  `(${row}.state IN ('reserved', 'failed') AND ${row}.expires_at IS NOT NULL AND ${now} >= ${row}.expires_at)`;

/**
 * The key of a fingerprint: its UTF-8 bytes, as `bytea`. A `text` column cannot hold U+0000, which a fingerprint may
 * contain (lifecycle.ts accepts any string up to MAX_FINGERPRINT_BYTES); LMDB keys are the same UTF-8 bytes.
 */
export function keyOf(fingerprint: string): Buffer {
  return Buffer.from(fingerprint, "utf8");
}

export function entryOf(row: Row): ReplayEntry {
  const fingerprint = row.fingerprint.toString("utf8");
  return parseStoredEntry(
    {
      fingerprint,
      state: row.state,
      token: row.token,
      createdAt: Number(row.created_at),
      updatedAt: Number(row.updated_at),
      expiresAt: row.expires_at === null ? null : Number(row.expires_at),
      ...(row.context === null ? {} : { context: JSON.parse(row.context) as unknown }),
      ...(row.resolution === null ? {} : { resolution: JSON.parse(row.resolution) as unknown }),
    },
    fingerprint,
  );
}
