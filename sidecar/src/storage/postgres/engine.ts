/**
 * The PostgreSQL engine (`SERVICE_STORE=postgres`, docs/fleet.md) as the registry carries it (../engine.ts): its
 * settings, its backend, the fleet database's commands (commands.ts) and its pools' series of `/metrics`.
 */
import type { StorageEngine } from "../engine.js";
import type { PostgresBackend } from "./backend.js";
import { POSTGRES_SETTINGS, type PostgresStorageConfig } from "./config.js";
import { PRIMARY_POOL, READ_POOL, poolSeries } from "./connection/pool-stats.js";

const commands = async () => import("./commands.js");

export const POSTGRES_ENGINE: StorageEngine<PostgresStorageConfig, PostgresBackend> = {
  settings: POSTGRES_SETTINGS,
  open: async () => (await import("./backend.js")).openPostgresBackend,
  commands: [
    {
      name: "migrate",
      operands: [],
      summary: "apply the database schema migrations (SERVICE_DATABASE_URL or SERVICE_DATABASE_URL_FILE) and exit",
      run: async (_, env, say) => (await commands()).migrateCommand(env, say),
    },
    {
      name: "import-lmdb",
      operands: ["<data-dir>"],
      summary: "move a stopped sidecar's LMDB data dir (replay entries, audit trail, Trust Records) into the database",
      run: async ([dataDir], env, say) => (await commands()).importLmdbCommand(env, dataDir!, say),
    },
  ],
  // The read pool's series only on a sidecar with a read database.
  metrics: (backend) => [
    ...poolSeries(PRIMARY_POOL, () => backend.pool()),
    ...(backend.readPool() === null ? [] : poolSeries(READ_POOL, () => backend.readPool())),
  ],
};
