/**
 * Surface B's tables on PostgreSQL (record-store.ts). Applied by migrations.ts.
 * - `writ_trust_records`: one row per businessTransactionId (the primary key: a record is never replaced), the sealed
 *   record as JSON text (never `jsonb`: its signed bytes are kept), and `seq`, the creation order for paging.
 * - `writ_trust_history`: the verifications and receipts of a record, `seq` ordering them (the latest is the highest).
 */
export const TRUST_RECORD_SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS writ_trust_records (
    id text PRIMARY KEY,
    seq bigserial NOT NULL UNIQUE,
    body text NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS writ_trust_history (
    seq bigserial PRIMARY KEY,
    id text NOT NULL REFERENCES writ_trust_records (id),
    kind text NOT NULL CHECK (kind IN ('verification', 'receipt')),
    body text NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS writ_trust_history_latest ON writ_trust_history (id, kind, seq)`,
];
