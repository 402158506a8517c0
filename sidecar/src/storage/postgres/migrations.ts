/**
 * The sidecar's schema on PostgreSQL, as numbered migrations applied in order (docs/fleet.md, "Schema and migrations"),
 * each in one transaction with the version it brings recorded in `writ_schema`. Run at start by every sidecar and by
 * `writ-sidecar migrate`, one at a time across the fleet (a transaction-level advisory lock), so the later ones find
 * nothing to do. A schema newer than this sidecar knows is refused with one line (`SchemaTooNewError`): an older
 * sidecar must not write rows whose meaning it does not know.
 *
 * Each migration is a file of literal SQL, migrations/<version>-<slug>.sql: its first line `-- description: …`, then
 * its statements, each ending with `;`, run one by one. A released one is never edited, a change is a new migration
 * (sidecar/test/storage/postgres/postgres-migrations-pinned.test.ts holds each released file's SHA-256). Each holds its locks
 * until it commits: migration 5 blocks the audit tables' writes while it fills its tables from the existing rows.
 */
import { readFileSync } from "node:fs";
import type pg from "pg";
import { transaction, query } from "./connection/query.js";

/**
 * Taken first by every transaction that changes the schema: the same transaction-level advisory lock in every process,
 * so the schema changes of a fleet happen one at a time.
 */
const MIGRATION_LOCK = "SELECT pg_advisory_xact_lock(hashtext('writ.migrate'))";

/** The migrations' files in migrations/, in order: `<version, 4 digits>-<slug>.sql`. */
const FILES = [
  "0001-replay-audit-trust.sql",
  "0002-lmdb-imports.sql",
  "0003-bundle-pins.sql",
  "0004-record-log.sql",
  "0005-audit-trail-at-volume.sql",
  "0006-record-templates.sql",
] as const;

export interface Migration {
  readonly version: number;
  /** Recorded in `writ_schema`: the first line of its file, `-- description: …`. */
  readonly description: string;
  /** Its file in migrations/. */
  readonly file: string;
  /** The file's text: once released, never edited (postgres-migrations-pinned.test.ts holds its SHA-256). */
  readonly sql: string;
  /** Its statements in order (`splitStatements`), each run as one query. */
  readonly statements: readonly string[];
}

const DESCRIPTION = "-- description: ";

/**
 * Reads a migration's file. The URL is relative to this module: the sources' migrations/ folder, or dist/migrations/
 * in the built sidecar, whose chunks are all in dist/ and into which tsup.config.ts copies the files.
 */
function load(file: string): Migration {
  const version = /^(\d{4})-[a-z0-9-]+\.sql$/.exec(file)?.[1];
  if (version === undefined) throw new Error(`migrations/${file}: not named <version, 4 digits>-<slug>.sql`);
  const sql = readFileSync(new URL(`./migrations/${file}`, import.meta.url), "utf8");
  const first = sql.slice(0, sql.indexOf("\n"));
  if (!first.startsWith(DESCRIPTION)) throw new Error(`migrations/${file}: its first line is not \`${DESCRIPTION}…\``);
  return {
    version: Number(version),
    description: first.slice(DESCRIPTION.length).trim(),
    file,
    sql,
    statements: splitStatements(sql, file),
  };
}

/** The 1-based line of `sql` at `offset`. */
function lineAt(sql: string, offset: number): number {
  let line = 1;
  for (let i = sql.indexOf("\n"); i >= 0 && i < offset; i = sql.indexOf("\n", i + 1)) line++;
  return line;
}

const IDENTIFIER_CHAR = /[A-Za-z0-9_$]/;
const DOLLAR_TAG = /\$(?:[A-Za-z_][A-Za-z_0-9]*)?\$/y;

/**
 * The statements of a migration's text, in order: split at each `;` outside quoted strings and identifiers ('…', E'…',
 * "…"), dollar-quoted bodies ($$…$$, $tag$…$tag$) and comments (`--`, nested `/* … *\/`), each trimmed and without the
 * comments before it. Every statement ends with `;`.
 * @throws Error naming `file` and the line of what is left open
 */
export function splitStatements(sql: string, file: string): string[] {
  const statements: string[] = [];
  const fail = (what: string, at: number): never => {
    throw new Error(`migrations/${file}, line ${lineAt(sql, at)}: ${what}`);
  };
  /** Where the statement under way starts: -1 before its first token. */
  let start = -1;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? sql.length : end + 1;
    } else if (c === "/" && sql[i + 1] === "*") {
      let depth = 0;
      let j = i;
      do {
        if (j >= sql.length) fail("a comment is never closed", i);
        const mark = sql.slice(j, j + 2);
        depth += mark === "/*" ? 1 : mark === "*/" ? -1 : 0;
        j += mark === "/*" || mark === "*/" ? 2 : 1;
      } while (depth > 0);
      i = j;
    } else if (/\s/.test(c)) {
      i++;
    } else {
      if (start < 0) start = i;
      if (c === ";") {
        statements.push(sql.slice(start, i).trim());
        start = -1;
        i++;
      } else if (c === "'" || c === '"') {
        // E'…' takes backslash escapes; every quoted text takes its quote doubled.
        const backslashes = c === "'" && /[Ee]/.test(sql[i - 1] ?? "") && !IDENTIFIER_CHAR.test(sql[i - 2] ?? "");
        let j = i + 1;
        for (; ; j++) {
          if (j >= sql.length) fail(`a ${c}-quoted text is never closed`, i);
          if (backslashes && sql[j] === "\\") j++;
          else if (sql[j] === c && sql[j + 1] === c) j++;
          else if (sql[j] === c) break;
        }
        i = j + 1;
      } else if (c === "$" && !IDENTIFIER_CHAR.test(sql[i - 1] ?? "") && ((DOLLAR_TAG.lastIndex = i), DOLLAR_TAG.test(sql))) {
        const tag = sql.slice(i, DOLLAR_TAG.lastIndex);
        const end = sql.indexOf(tag, i + tag.length);
        if (end < 0) fail(`${tag} is never closed`, i);
        i = end + tag.length;
      } else {
        i++;
      }
    }
  }
  if (start >= 0) fail("the last statement does not end with `;`", start);
  return statements;
}

/** Read at load: a file missing or unreadable fails the import, before any database is touched. */
export const MIGRATIONS: readonly Migration[] = FILES.map(load);

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
      let at = 0;
      for (const statement of migration.statements) {
        at = migration.sql.indexOf(statement, at);
        await query(
          client,
          `migration ${migration.version} (${migration.file}, the statement at line ${lineAt(migration.sql, at)})`,
          statement,
        );
      }
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
