-- description: the templates decision records are coded against (docs/audit.md, "Coded decision records")
--
-- Released: never edited, a change of the schema is a new migration (postgres-migrations-pinned.test.ts pins this text).

-- One row per record shape (endpoint, status, rule, policy, version, bundle): its number, which a coded record names,
-- and its anchors as a JSON array of strings. Rows are never changed or removed: a coded record reads with its template
-- for as long as it is kept. Every sidecar of a fleet codes and reads with the same rows.
CREATE TABLE IF NOT EXISTS writ_audit_record_templates (
  id integer PRIMARY KEY CHECK (id >= 0),
  shape text NOT NULL UNIQUE,
  anchors text NOT NULL
);
