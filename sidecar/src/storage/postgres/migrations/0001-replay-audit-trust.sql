-- description: replay store, transition records (decisions, overrides, confirmations), audit trails, Trust Records
--
-- Released: never edited, a change of the schema is a new migration (postgres-migrations-pinned.test.ts pins this text).

-- The replay store: one row per execution fingerprint, its UTF-8 bytes as the key (a text column cannot hold U+0000);
-- times as Unix ms; `context` and `resolution` as JSON text, never jsonb, which would rewrite a signed attestation's
-- keys and numbers.
CREATE TABLE IF NOT EXISTS writ_replay (
  fingerprint bytea PRIMARY KEY,
  state text NOT NULL
    CHECK (state IN ('reserved', 'executing', 'consumed', 'failed', 'pending_override', 'rejected')),
  token text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  expires_at bigint,
  context text,
  resolution text
);

CREATE INDEX IF NOT EXISTS writ_replay_expiring ON writ_replay (expires_at) WHERE expires_at IS NOT NULL;

-- The records the replay store writes with each transition: one decision, override and confirmation per execution,
-- `body` the record's JSON text; partial indexes on decisions for the audit's filters.
CREATE TABLE IF NOT EXISTS writ_audit_records (
  execution_fp text COLLATE "C" NOT NULL,
  kind text NOT NULL CHECK (kind IN ('decision', 'override', 'confirmation')),
  recorded_at bigint NOT NULL,
  policy_id text,
  status text,
  body text NOT NULL,
  PRIMARY KEY (execution_fp, kind)
);

CREATE INDEX IF NOT EXISTS writ_audit_records_decisions ON writ_audit_records (recorded_at, execution_fp)
  WHERE kind = 'decision';

CREATE INDEX IF NOT EXISTS writ_audit_records_by_policy ON writ_audit_records (policy_id, recorded_at, execution_fp)
  WHERE kind = 'decision';

CREATE INDEX IF NOT EXISTS writ_audit_records_by_status ON writ_audit_records (status, recorded_at, execution_fp)
  WHERE kind = 'decision';

-- The audit trail's own tables. Verifications and security events: one row per record, `seq` ordering rows of the same
-- millisecond, the row as answered in `body` (JSON text). The counters: the totals of /audit/stats that outlive
-- retention (verifications, valid verifications, security events, API calls), each added to in the statement that
-- writes what it counts.
CREATE TABLE IF NOT EXISTS writ_audit_verifications (
  seq bigserial PRIMARY KEY,
  recorded_at bigint NOT NULL,
  body text NOT NULL
);

CREATE INDEX IF NOT EXISTS writ_audit_verifications_time ON writ_audit_verifications (recorded_at, seq);

CREATE TABLE IF NOT EXISTS writ_audit_security (
  seq bigserial PRIMARY KEY,
  at bigint NOT NULL,
  body text NOT NULL
);

CREATE INDEX IF NOT EXISTS writ_audit_security_time ON writ_audit_security (at, seq);

CREATE TABLE IF NOT EXISTS writ_audit_counters (
  name text PRIMARY KEY,
  value bigint NOT NULL
);

-- Surface B's tables. writ_trust_records: one row per businessTransactionId (the key: a record is never replaced), the
-- sealed record as JSON text (never jsonb: its signed bytes are kept), `seq` the creation order for paging.
-- writ_trust_history: the verifications and receipts of a record, `seq` ordering them (the latest is the highest).
CREATE TABLE IF NOT EXISTS writ_trust_records (
  id text PRIMARY KEY,
  seq bigserial NOT NULL UNIQUE,
  body text NOT NULL
);

CREATE TABLE IF NOT EXISTS writ_trust_history (
  seq bigserial PRIMARY KEY,
  id text NOT NULL REFERENCES writ_trust_records (id),
  kind text NOT NULL CHECK (kind IN ('verification', 'receipt')),
  body text NOT NULL
);

CREATE INDEX IF NOT EXISTS writ_trust_history_latest ON writ_trust_history (id, kind, seq);
