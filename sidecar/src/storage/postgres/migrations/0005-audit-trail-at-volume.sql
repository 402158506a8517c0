-- description: the audit trail at volume: records outside the record log kept as candidates by triggers (writ_audit_log_outside), decision counts per log and day, an index for listing decisions by policy and status
--
-- Released: never edited, a change of the schema is a new migration (postgres-migrations-pinned.test.ts pins this text).
--
-- Each CREATE TRIGGER locks its table against writes until the migration commits: the fills and counts below see every
-- record stored before, the triggers every one after.

-- Records stored outside the record log, kept as candidates: the table, a statement-level trigger on each table the
-- log's records are stored in (one probe of the pending set's (kind, ref) index per inserted row), then the records
-- that are in no log and not pending, once.
CREATE TABLE IF NOT EXISTS writ_audit_log_outside (
  kind text NOT NULL,
  ref text COLLATE "C" NOT NULL,
  PRIMARY KEY (kind, ref)
);

CREATE OR REPLACE FUNCTION writ_audit_records_outside_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO writ_audit_log_outside (kind, ref)
  SELECT i.kind, i.execution_fp FROM inserted i
  WHERE NOT EXISTS (SELECT 1 FROM writ_audit_log_pending p WHERE p.kind = i.kind AND p.ref = i.execution_fp OFFSET 0)
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;

CREATE TRIGGER writ_audit_records_outside_log AFTER INSERT ON writ_audit_records
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT
  EXECUTE FUNCTION writ_audit_records_outside_log();

CREATE OR REPLACE FUNCTION writ_audit_verifications_outside_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO writ_audit_log_outside (kind, ref)
  SELECT 'verification'::text, i.seq::text FROM inserted i
  WHERE NOT EXISTS (SELECT 1 FROM writ_audit_log_pending p WHERE p.kind = 'verification'::text AND p.ref = i.seq::text OFFSET 0)
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;

CREATE TRIGGER writ_audit_verifications_outside_log AFTER INSERT ON writ_audit_verifications
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT
  EXECUTE FUNCTION writ_audit_verifications_outside_log();

CREATE OR REPLACE FUNCTION writ_audit_security_outside_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO writ_audit_log_outside (kind, ref)
  SELECT 'security'::text, i.seq::text FROM inserted i
  WHERE NOT EXISTS (SELECT 1 FROM writ_audit_log_pending p WHERE p.kind = 'security'::text AND p.ref = i.seq::text OFFSET 0)
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;

CREATE TRIGGER writ_audit_security_outside_log AFTER INSERT ON writ_audit_security
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT
  EXECUTE FUNCTION writ_audit_security_outside_log();

CREATE OR REPLACE FUNCTION writ_audit_log_prunes_outside_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO writ_audit_log_outside (kind, ref)
  SELECT 'prune'::text, i.seq::text FROM inserted i
  WHERE NOT EXISTS (SELECT 1 FROM writ_audit_log_pending p WHERE p.kind = 'prune'::text AND p.ref = i.seq::text OFFSET 0)
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;

CREATE TRIGGER writ_audit_log_prunes_outside_log AFTER INSERT ON writ_audit_log_prunes
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT
  EXECUTE FUNCTION writ_audit_log_prunes_outside_log();

INSERT INTO writ_audit_log_outside (kind, ref)
  SELECT i.kind, i.execution_fp FROM writ_audit_records i
  WHERE NOT EXISTS (SELECT 1 FROM writ_audit_log_entries e WHERE e.kind = i.kind AND e.ref = i.execution_fp)
    AND NOT EXISTS (SELECT 1 FROM writ_audit_log_pending p WHERE p.kind = i.kind AND p.ref = i.execution_fp)
  ON CONFLICT DO NOTHING;

INSERT INTO writ_audit_log_outside (kind, ref)
  SELECT 'verification'::text, i.seq::text FROM writ_audit_verifications i
  WHERE NOT EXISTS (SELECT 1 FROM writ_audit_log_entries e WHERE e.kind = 'verification'::text AND e.ref = i.seq::text)
    AND NOT EXISTS (SELECT 1 FROM writ_audit_log_pending p WHERE p.kind = 'verification'::text AND p.ref = i.seq::text)
  ON CONFLICT DO NOTHING;

INSERT INTO writ_audit_log_outside (kind, ref)
  SELECT 'security'::text, i.seq::text FROM writ_audit_security i
  WHERE NOT EXISTS (SELECT 1 FROM writ_audit_log_entries e WHERE e.kind = 'security'::text AND e.ref = i.seq::text)
    AND NOT EXISTS (SELECT 1 FROM writ_audit_log_pending p WHERE p.kind = 'security'::text AND p.ref = i.seq::text)
  ON CONFLICT DO NOTHING;

INSERT INTO writ_audit_log_outside (kind, ref)
  SELECT 'prune'::text, i.seq::text FROM writ_audit_log_prunes i
  WHERE NOT EXISTS (SELECT 1 FROM writ_audit_log_entries e WHERE e.kind = 'prune'::text AND e.ref = i.seq::text)
    AND NOT EXISTS (SELECT 1 FROM writ_audit_log_pending p WHERE p.kind = 'prune'::text AND p.ref = i.seq::text)
  ON CONFLICT DO NOTHING;

-- The decision counts of each log and UTC day, kept by triggers on the entries (appends) and on the records table
-- (removals), then started from the decisions logged so far. The triggers probe one key per row (a lateral subquery
-- with OFFSET 0, which the planner never turns into a join), never scanning the trail.
ALTER TABLE writ_audit_log_state ADD COLUMN IF NOT EXISTS decisions bigint NOT NULL DEFAULT 0;

CREATE TABLE IF NOT EXISTS writ_audit_log_days (
  day bigint NOT NULL,
  log_id text NOT NULL,
  decisions bigint NOT NULL,
  PRIMARY KEY (day, log_id)
);

CREATE OR REPLACE FUNCTION writ_audit_log_entries_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH counted AS (SELECT a.log_id, floor(r.recorded_at / 86400000.0)::bigint AS day, count(*) AS n FROM appended a
   CROSS JOIN LATERAL (SELECT recorded_at FROM writ_audit_records WHERE execution_fp = a.ref AND kind = 'decision' OFFSET 0) r
   WHERE a.kind = 'decision' GROUP BY 1, 2),
    days AS (INSERT INTO writ_audit_log_days (day, log_id, decisions) SELECT day, log_id, n FROM counted
         ON CONFLICT (day, log_id) DO UPDATE SET decisions = writ_audit_log_days.decisions + EXCLUDED.decisions)
  UPDATE writ_audit_log_state s SET decisions = s.decisions + t.n
  FROM (SELECT log_id, sum(n) AS n FROM counted GROUP BY log_id) t WHERE s.log_id = t.log_id;
  RETURN NULL;
END
$$;

CREATE TRIGGER writ_audit_log_entries_count AFTER INSERT ON writ_audit_log_entries
  REFERENCING NEW TABLE AS appended FOR EACH STATEMENT
  EXECUTE FUNCTION writ_audit_log_entries_count();

CREATE OR REPLACE FUNCTION writ_audit_records_uncount() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH counted AS (SELECT e.log_id, floor(d.recorded_at / 86400000.0)::bigint AS day, count(*) AS n FROM removed d
   CROSS JOIN LATERAL (SELECT log_id FROM writ_audit_log_entries WHERE kind = 'decision' AND ref = d.execution_fp OFFSET 0) e
   WHERE d.kind = 'decision' GROUP BY 1, 2),
    days AS (UPDATE writ_audit_log_days y SET decisions = y.decisions - c.n FROM counted c WHERE y.day = c.day AND y.log_id = c.log_id)
  UPDATE writ_audit_log_state s SET decisions = s.decisions - t.n
  FROM (SELECT log_id, sum(n) AS n FROM counted GROUP BY log_id) t WHERE s.log_id = t.log_id;
  RETURN NULL;
END
$$;

CREATE TRIGGER writ_audit_records_uncount AFTER DELETE ON writ_audit_records
  REFERENCING OLD TABLE AS removed FOR EACH STATEMENT
  EXECUTE FUNCTION writ_audit_records_uncount();

UPDATE writ_audit_log_state s SET decisions = c.n
  FROM (SELECT e.log_id, count(*) AS n
        FROM writ_audit_log_entries e JOIN writ_audit_records r ON r.execution_fp = e.ref AND r.kind = 'decision'
        WHERE e.kind = 'decision' GROUP BY e.log_id) c
  WHERE s.log_id = c.log_id;

INSERT INTO writ_audit_log_days (day, log_id, decisions)
  SELECT floor(r.recorded_at / 86400000.0)::bigint, e.log_id, count(*)
  FROM writ_audit_log_entries e JOIN writ_audit_records r ON r.execution_fp = e.ref AND r.kind = 'decision'
  WHERE e.kind = 'decision' GROUP BY 1, 2;

-- Listing decisions by policy and status.
CREATE INDEX IF NOT EXISTS writ_audit_records_by_policy_status ON writ_audit_records (policy_id, status, recorded_at, execution_fp)
  WHERE kind = 'decision';

-- Migration 4's `complete` mark: no scan of every record is left for it to spare.
DROP TABLE IF EXISTS writ_audit_log_meta;
