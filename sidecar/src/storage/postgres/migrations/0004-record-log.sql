-- description: the tamper-evident audit record log: one log per sidecar instance (pending records, entries, kept subtree roots, checkpoints, state, prune notes)
--
-- Released: never edited, a change of the schema is a new migration (postgres-migrations-pinned.test.ts pins this text).

-- Records written and not yet in a log.
CREATE TABLE IF NOT EXISTS writ_audit_log_pending (
  seq bigserial PRIMARY KEY,
  log_id text NOT NULL,
  kind text NOT NULL,
  ref text COLLATE "C" NOT NULL,
  leaf bytea NOT NULL,
  pended_at bigint NOT NULL
);

CREATE INDEX IF NOT EXISTS writ_audit_log_pending_by_log ON writ_audit_log_pending (log_id, seq);

CREATE UNIQUE INDEX IF NOT EXISTS writ_audit_log_pending_by_record ON writ_audit_log_pending (kind, ref);

-- The logs, each in order; a record is in at most one log once.
CREATE TABLE IF NOT EXISTS writ_audit_log_entries (
  log_id text NOT NULL,
  position bigint NOT NULL,
  kind text NOT NULL,
  ref text COLLATE "C" NOT NULL,
  leaf bytea NOT NULL,
  PRIMARY KEY (log_id, position)
);

CREATE UNIQUE INDEX IF NOT EXISTS writ_audit_log_entries_by_record ON writ_audit_log_entries (kind, ref);

-- The kept roots of perfect subtrees.
CREATE TABLE IF NOT EXISTS writ_audit_log_nodes (
  log_id text NOT NULL,
  height integer NOT NULL,
  idx bigint NOT NULL,
  hash bytea NOT NULL,
  PRIMARY KEY (log_id, height, idx)
);

CREATE TABLE IF NOT EXISTS writ_audit_log_checkpoints (
  log_id text NOT NULL,
  size bigint NOT NULL,
  body text NOT NULL,
  PRIMARY KEY (log_id, size)
);

-- Per log: its size, frontier and latest checkpoint; its row, locked, is the log's write lock.
CREATE TABLE IF NOT EXISTS writ_audit_log_state (
  log_id text PRIMARY KEY,
  size bigint NOT NULL,
  frontier text NOT NULL,
  latest_size bigint
);

CREATE TABLE IF NOT EXISTS writ_audit_log_prunes (
  seq bigserial PRIMARY KEY,
  recorded_at bigint NOT NULL,
  body text NOT NULL
);

-- A `complete` mark that let starts skip a scan of every record (dropped by migration 5).
CREATE TABLE IF NOT EXISTS writ_audit_log_meta (
  name text PRIMARY KEY,
  value text NOT NULL
);
