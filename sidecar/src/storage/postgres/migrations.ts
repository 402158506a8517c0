/**
 * The sidecar's schema on PostgreSQL, as numbered migrations applied in order, each in one transaction with the
 * version it brings recorded in `writ_schema`. Run at start by every sidecar and by `writ-sidecar migrate`:
 *
 * - One at a time across the fleet: each run takes a transaction-level advisory lock first, so sidecars starting at
 *   once wait for each other and the later ones find nothing to do.
 * - A database whose schema is newer than this sidecar knows (a newer release migrated it) is refused with one line,
 *   `SchemaTooNewError`: an older sidecar must not write rows whose meaning it does not know.
 * - A migration is never edited once released; a change is a new migration.
 * - Each holds its locks until it commits: migration 5 creates triggers on the audit tables, which blocks their writes
 *   while it fills its tables from the existing rows (docs/fleet.md, "Schema and migrations").
 */
import { DEFAULT_RECORDS_TABLE, MIGRATION_LOCK, replaySchema } from "@writ/runtime/postgres";
import type pg from "pg";
import { AUDIT_SCHEMA } from "./audit-schema.js";
import { BUNDLE_PINS_SCHEMA } from "./bundle-pins.js";
import { DECISION_COUNTS_SCHEMA } from "./decision-counts.js";
import { OUTSIDE_LOG_SCHEMA } from "./outside-log.js";
import { transaction, query } from "./query.js";
import { RECORD_LOG_SCHEMA } from "./record-log-storage.js";
import { TRUST_RECORD_SCHEMA } from "./record-schema.js";

export interface Migration {
  readonly version: number;
  readonly description: string;
  readonly statements: readonly string[];
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "replay store, transition records (decisions, overrides, confirmations), audit trails, Trust Records",
    statements: [...replaySchema(), ...AUDIT_SCHEMA, ...TRUST_RECORD_SCHEMA],
  },
  {
    version: 2,
    description: "writ_imports: the LMDB data dirs imported by `writ-sidecar import-lmdb`, each once",
    statements: [
      "CREATE TABLE IF NOT EXISTS writ_imports (source text PRIMARY KEY, imported_at timestamptz NOT NULL DEFAULT now(), counts text NOT NULL)",
    ],
  },
  {
    version: 3,
    description: "writ_bundle_pins: the bundle_hash each policyId@version was first served with, for the whole fleet",
    statements: BUNDLE_PINS_SCHEMA,
  },
  {
    version: 4,
    description:
      "the tamper-evident audit record log: one log per sidecar instance (pending records, entries, kept subtree roots, checkpoints, state, prune notes)",
    statements: RECORD_LOG_SCHEMA,
  },
  {
    version: 5,
    description:
      "the audit trail at volume: records outside the record log kept as candidates by triggers (writ_audit_log_outside), decision counts per log and day, an index for listing decisions by policy and status",
    statements: [
      ...OUTSIDE_LOG_SCHEMA,
      ...DECISION_COUNTS_SCHEMA,
      `CREATE INDEX IF NOT EXISTS ${DEFAULT_RECORDS_TABLE}_by_policy_status ON ${DEFAULT_RECORDS_TABLE} (policy_id, status, recorded_at, execution_fp) WHERE kind = 'decision'`,
      "DROP TABLE IF EXISTS writ_audit_log_meta",
    ],
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

export class SchemaTooNewError extends Error {
  override readonly name = "SchemaTooNewError";
  readonly code = "SCHEMA_TOO_NEW" as const;
  constructor(readonly found: number) {
    super(
      `the database schema is at version ${found}, newer than this sidecar knows (${SCHEMA_VERSION}): upgrade the sidecar, or point it at another database`,
    );
  }
}

export interface MigrationOutcome {
  /** The version found before (0: an empty database). */
  readonly from: number;
  readonly to: number;
  readonly applied: readonly Migration[];
}

async function currentVersion(client: pg.PoolClient | pg.Pool): Promise<number> {
  await query(
    client,
    "reading the schema version",
    "CREATE TABLE IF NOT EXISTS writ_schema (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
  );
  const { rows } = await query<{ version: number | null }>(
    client,
    "reading the schema version",
    "SELECT max(version) AS version FROM writ_schema",
  );
  return rows[0]?.version ?? 0;
}

/**
 * Brings the schema to SCHEMA_VERSION, one migration per transaction, under the fleet-wide lock; `onApplied` tells of
 * each migration applied (for the operator's log).
 * @throws SchemaTooNewError when the database is ahead of this sidecar
 */
export async function migrate(pool: pg.Pool, onApplied: (migration: Migration) => void = () => undefined): Promise<MigrationOutcome> {
  let from = -1;
  const applied: Migration[] = [];
  for (;;) {
    const next = await transaction(pool, "migrating the schema", async (client) => {
      await query(client, "migrating the schema", MIGRATION_LOCK);
      const version = await currentVersion(client);
      if (from < 0) from = version;
      if (version > SCHEMA_VERSION) throw new SchemaTooNewError(version);
      const migration = MIGRATIONS.find((m) => m.version === version + 1);
      if (migration === undefined) return null;
      for (const statement of migration.statements) await query(client, `migration ${migration.version}`, statement);
      await query(client, `migration ${migration.version}`, "INSERT INTO writ_schema (version, description) VALUES ($1, $2)", [
        migration.version,
        migration.description,
      ]);
      return migration;
    });
    if (next === null) return { from, to: SCHEMA_VERSION, applied };
    applied.push(next);
    onApplied(next);
  }
}
