/**
 * How long the audit trail keeps its records: by age and by count, per trail, with documented defaults
 * (docs/audit.md, "Retention"). Decisions, with their overrides and confirmations, are evidence: kept unless the
 * operator sets a limit. Verifications likewise. Security events, which unauthenticated traffic causes, are bounded by
 * default.
 */

export interface RetentionLimit {
  /** Records older than this (by their time key) are removed; null keeps them whatever their age. */
  readonly maxAgeMs: number | null;
  /** The oldest records beyond this count are removed; null: no count limit. */
  readonly maxRecords: number | null;
}

export interface AuditRetention {
  readonly decisions: RetentionLimit;
  readonly verifications: RetentionLimit;
  readonly security: RetentionLimit;
}

export const DAY_MS = 86_400_000;
const KEEP: RetentionLimit = { maxAgeMs: null, maxRecords: null };

export const DEFAULT_AUDIT_RETENTION: AuditRetention = {
  decisions: KEEP,
  verifications: KEEP,
  security: { maxAgeMs: 30 * DAY_MS, maxRecords: 100_000 },
};

/** Largest number of records removed in one write transaction: pruning never holds the write lock for long. */
export const PRUNE_CHUNK = 1_000;

/**
 * How many of the oldest `keys` (ascending by time, their first element Unix ms) are due for removal at `now`:
 * those older than `maxAgeMs`, and the oldest beyond `maxRecords` of a trail holding `total` records.
 */
export function dueCount(keys: readonly (readonly [number, ...unknown[]])[], total: number, limit: RetentionLimit, now: number): number {
  const overCount = limit.maxRecords === null ? 0 : Math.max(0, total - limit.maxRecords);
  const cutoff = limit.maxAgeMs === null ? -Infinity : now - limit.maxAgeMs;
  let due = 0;
  while (due < keys.length && (due < overCount || keys[due]![0] < cutoff)) due += 1;
  return due;
}
