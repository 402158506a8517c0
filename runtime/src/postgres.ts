/**
 * `@writ/runtime/postgres`: the replay store on PostgreSQL, for a fleet of sidecars sharing one database.
 * Apart from the main entry because it needs `pg`, an optional peer dependency of this package, like `lmdb` for
 * `@writ/runtime/lmdb`.
 */
export {
  PostgresReplayStore,
  DEFAULT_CLAIM_STATEMENTS,
  DEFAULT_REPLAY_TABLE,
  DEFAULT_RECORDS_TABLE,
  DEFAULT_LOG_PENDING_TABLE,
  MIGRATION_LOCK,
  replaySchema,
  type PostgresReplayStoreOptions,
} from "./replay/postgres-store.js";
