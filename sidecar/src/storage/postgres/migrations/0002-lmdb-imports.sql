-- description: writ_imports: the LMDB data dirs imported by `writ-sidecar import-lmdb`, each once
--
-- Released: never edited, a change of the schema is a new migration (postgres-migrations-pinned.test.ts pins this text).

CREATE TABLE IF NOT EXISTS writ_imports (
  source text PRIMARY KEY,
  imported_at timestamptz NOT NULL DEFAULT now(),
  counts text NOT NULL
);
