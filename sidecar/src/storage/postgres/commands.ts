/**
 * The fleet database's commands of `writ-sidecar` (docs/fleet.md), each reading only SERVICE_DATABASE_URL or
 * SERVICE_DATABASE_URL_FILE (and the pool settings), never an API or signing key:
 * - `migrate`: brings the schema to this release's version and exits;
 * - `import-lmdb <data-dir>`: migrates, then moves a stopped sidecar's LMDB state into the database, in one
 *   transaction, with progress on stdout.
 * Each resolves once done and rejects with why it failed (main.ts says it on stderr: the URL's password is never in it).
 * Loaded only for these commands (engine.ts): a sidecar on LMDB never loads `pg`.
 */
import type pg from "pg";
import { databaseConfig } from "./config.js";
import type { ImportKind } from "./import-lmdb.js";
import { migrate } from "./migrations.js";
import { redactedUrl } from "./connection/hosts.js";
import { createPool } from "./connection/pool.js";

/** How often a long import reports how far it got. */
const PROGRESS_INTERVAL_MS = 1_000;

export async function migrateCommand(env: NodeJS.ProcessEnv, say: (line: string) => void): Promise<void> {
  await withDatabase(env, async (pool, where) => {
    const outcome = await migrate(pool, (m) => say(`applied migration ${m.version}: ${m.description}`));
    say(
      outcome.applied.length === 0
        ? `${where}: schema already at version ${outcome.to}`
        : `${where}: schema migrated from version ${outcome.from} to ${outcome.to}`,
    );
  });
}

export async function importLmdbCommand(env: NodeJS.ProcessEnv, dataDir: string, say: (line: string) => void): Promise<void> {
  await withDatabase(env, async (pool, where) => {
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

async function withDatabase(env: NodeJS.ProcessEnv, body: (pool: pg.Pool, where: string) => Promise<void>): Promise<void> {
  const database = databaseConfig(env);
  const pool = createPool(database, () => undefined);
  try {
    await body(pool, redactedUrl(database.url));
  } finally {
    await pool.end();
  }
}
