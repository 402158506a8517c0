-- description: writ_bundle_pins: the bundle_hash each policyId@version was first served with, for the whole fleet
--
-- Released: never edited, a change of the schema is a new migration (postgres-migrations-pinned.test.ts pins this text).

-- One row per policyId@version, inserted once by whichever sidecar serves it first.
CREATE TABLE IF NOT EXISTS writ_bundle_pins (
  policy_id text NOT NULL,
  version text NOT NULL,
  bundle_hash text NOT NULL,
  pinned_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (policy_id, version)
);
