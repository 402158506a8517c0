/**
 * The audit trail's own tables on PostgreSQL (audit-log.ts). Decisions, overrides and confirmations are in the records
 * table that the replay store writes with each transition (runtime `replaySchema`). Applied by migrations.ts.
 * - `writ_audit_verifications`, `writ_audit_security`: one row per record, `seq` (a sequence) ordering rows of the
 *   same millisecond; the row as answered in `body` (JSON text).
 * - `writ_audit_counters`: the totals of `/audit/stats` that outlive retention (verifications, valid verifications,
 *   security events, API calls), each added to in the statement that writes what it counts.
 */
export const AUDIT_SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS writ_audit_verifications (
    seq bigserial PRIMARY KEY,
    recorded_at bigint NOT NULL,
    body text NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS writ_audit_verifications_time ON writ_audit_verifications (recorded_at, seq)`,
  `CREATE TABLE IF NOT EXISTS writ_audit_security (
    seq bigserial PRIMARY KEY,
    at bigint NOT NULL,
    body text NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS writ_audit_security_time ON writ_audit_security (at, seq)`,
  `CREATE TABLE IF NOT EXISTS writ_audit_counters (name text PRIMARY KEY, value bigint NOT NULL)`,
];
