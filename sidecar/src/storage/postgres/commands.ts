/**
 * The fleet database's commands of `writ-sidecar` (docs/fleet.md), each reading only SERVICE_DATABASE_URL or
 * SERVICE_DATABASE_URL_FILE (and the pool settings), never an API or signing key:
 * - `migrate`: brings the schema to this release's version and exits;
 * - `import-lmdb <data-dir>`: migrates, then moves a stopped sidecar's LMDB state into the database, in one
 *   transaction, with progress on stdout.
 * Each answers an exit code: 0 done, 1 failed (one line on stderr, the URL's password never in it).
 * Loaded only for these commands: a sidecar on LMDB never loads `pg`.
 */
import type pg from "pg";
import { databaseConfig } from "./config.js";
import type { ImportKind } from "./import-lmdb.js";
import { migrate } from "./migrations.js";
import { redactedUrl } from "./hosts.js";
import { createPool } from "./pool.js";

/** How often a long import reports how far it got. */
const PROGRESS_INTERVAL_MS = 1_000;

const say = (line: string): void => void process.stdout.write(`writ-sidecar: ${line}\n`);

export async function migrateCommand(env: NodeJS.ProcessEnv): Promise<number> {
  return withDatabase(env, "migrate", async (pool, where) => {
    const outcome = await migrate(pool, (m) => say(`applied migration ${m.version}: ${m.description}`));
    say(
      outcome.applied.length === 0
        ? `${where}: schema already at version ${outcome.to}`
        : `${where}: schema migrated from version ${outcome.from} to ${outcome.to}`,
    );
  });
}

export async function importLmdbCommand(env: NodeJS.ProcessEnv, dataDir: string): Promise<number> {
  return withDatabase(env, "import-lmdb", async (pool, where) => {
    const { importLmdb } = await import("./import-lmdb.js");
    await migrate(pool, (m) => say(`applied migration ${m.version}: ${m.description}`));
    say(`importing \`${dataDir}\` into ${where} in one transaction`);
    let reportedAt = Date.now();
    const counts = await importLmdb(pool, dataDir, (kind: ImportKind, rows: number) => {
      if (Date.now() - reportedAt < PROGRESS_INTERVAL_MS) return;
      reportedAt = Date.now();
      say(`… ${kind}: ${rows} rows`);
    });
    for (const [kind, rows] of Object.entries(counts.imported)) {
      const conflicts = counts.conflicts[kind as ImportKind];
      say(`imported ${kind}: ${rows}${conflicts > 0 ? ` (${conflicts} already in the database, kept as they were)` : ""}`);
    }
    say("import committed");
  });
}

async function withDatabase(
  env: NodeJS.ProcessEnv,
  command: string,
  body: (pool: pg.Pool, where: string) => Promise<void>,
): Promise<number> {
  const database = databaseConfig(env);
  const pool = createPool(database, () => undefined);
  try {
    await body(pool, redactedUrl(database.url));
    return 0;
  } catch (error) {
    process.stderr.write(`writ-sidecar: ${command} failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await pool.end();
  }
}
