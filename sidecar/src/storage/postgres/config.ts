/**
 * The PostgreSQL engine's settings (`SERVICE_STORE=postgres`, docs/fleet.md): the shared database of a fleet. Read
 * without loading `pg`, at start-up with the rest of the configuration.
 */
import { ConfigError, flag, integer, oneOf, type Env } from "../../env.js";
import type { EngineSettings } from "../engine-settings.js";
import { READ_URL_VARIABLES, databaseUrlFrom, readDatabaseUrl } from "./connection/database-url.js";

/** The shared database of a fleet (`SERVICE_STORE=postgres`, docs/fleet.md). */
export interface DatabaseConfig {
  /**
   * `postgresql://…` from SERVICE_DATABASE_URL or the file SERVICE_DATABASE_URL_FILE names, one host or several
   * (`postgresql://user@db1:5432,db2:5432/writ?target_session_attrs=read-write`, hosts.ts); a secret: never logged.
   */
  readonly url: string;
  readonly poolSize: number;
  readonly statementTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** The server's `lock_timeout` on every connection: the longest wait for one lock. */
  readonly lockTimeoutMs: number;
  /**
   * The server's `idle_in_transaction_session_timeout` on every pooled connection: a transaction that sends nothing this
   * long (its client gone, or cut off by the network) is ended with its connection, and its locks released.
   */
  readonly idleInTransactionTimeoutMs: number;
  /**
   * Whether the replay store's statements are named prepared statements (replay-store.ts); off behind a pooler that
   * runs a client's transactions on any server connection (docs/fleet.md, "Poolers"). Absent: on.
   */
  readonly preparedStatements?: boolean;
}

/**
 * The defaults (docs/fleet.md, "Timeouts"). Every lock writ takes is held for one statement or one short transaction,
 * whose statements follow each other within milliseconds: the lock timeout, below the statement timeout, makes a wait
 * on a lock held elsewhere fail as what it is, and the idle limit gives back within seconds the locks of a transaction
 * whose client is gone (PostgreSQL's own default never does, and its TCP keepalive takes about 2 hours).
 */
export const DEFAULT_DATABASE = {
  poolSize: 10,
  statementTimeoutMs: 5_000,
  connectTimeoutMs: 5_000,
  lockTimeoutMs: 3_000,
  idleInTransactionTimeoutMs: 10_000,
} as const;

export interface PostgresStorageConfig {
  readonly kind: "postgres";
  readonly database: DatabaseConfig;
  /** SERVICE_DATABASE_READ_URL(_FILE) (database-url.ts): where the reads that scan history go; null: to `database`. A secret. */
  readonly readUrl: string | null;
}

/**
 * SERVICE_DATABASE_URL, or the file SERVICE_DATABASE_URL_FILE names (one line, mode 0600 advised); never both. Read
 * alone by `writ-sidecar migrate`, which needs no API key.
 * @throws ConfigError
 */
export function databaseConfig(env: Env, cwd: string = process.cwd()): DatabaseConfig {
  const url = databaseUrlFrom(env, cwd, "SERVICE_DATABASE_URL", "SERVICE_DATABASE_URL_FILE");
  if (url === null)
    throw new ConfigError("SERVICE_STORE is `postgres` but neither SERVICE_DATABASE_URL nor SERVICE_DATABASE_URL_FILE is set");
  return {
    url,
    poolSize: integer(env, "SERVICE_DATABASE_POOL_SIZE", DEFAULT_DATABASE.poolSize, 1, 1_000),
    statementTimeoutMs: integer(env, "SERVICE_DATABASE_STATEMENT_TIMEOUT_MS", DEFAULT_DATABASE.statementTimeoutMs, 100, 600_000),
    connectTimeoutMs: integer(env, "SERVICE_DATABASE_CONNECT_TIMEOUT_MS", DEFAULT_DATABASE.connectTimeoutMs, 100, 600_000),
    lockTimeoutMs: integer(env, "SERVICE_DATABASE_LOCK_TIMEOUT_MS", DEFAULT_DATABASE.lockTimeoutMs, 100, 600_000),
    // At least a second: a shorter limit would end the sidecar's own transactions whenever its event loop is held
    // between two of their statements.
    idleInTransactionTimeoutMs: integer(
      env,
      "SERVICE_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS",
      DEFAULT_DATABASE.idleInTransactionTimeoutMs,
      1_000,
      3_600_000,
    ),
    preparedStatements: flag(env, "SERVICE_DATABASE_PREPARED_STATEMENTS", true),
  };
}

export const POSTGRES_SETTINGS: EngineSettings<PostgresStorageConfig> = {
  kind: "postgres",
  variables: ["SERVICE_DATABASE_URL", "SERVICE_DATABASE_URL_FILE", ...READ_URL_VARIABLES],
  what: "database",
  parse(env, { cwd }) {
    // The replay store is the database's: the setting takes no other value.
    oneOf(env, "SERVICE_REPLAY_STORE", ["postgres"], "postgres");
    return { kind: "postgres", database: databaseConfig(env, cwd), readUrl: readDatabaseUrl(env, cwd) };
  },
  auditRefusal: () => null,
  processesRefusal: () => null,
};
