/**
 * `@writ/runtime/lmdb`: the durable replay store, apart from the main entry because it needs the native `lmdb`
 * module, an optional peer dependency of this package. Installing the runtime for clients, offline verification or
 * an in-memory authorizer (the SDK) neither installs nor loads lmdb; the sidecar and embedded authorizers that
 * persist install it and import this entry.
 */
export { LmdbReplayStore, DEFAULT_REPLAY_DB_NAME, type LmdbReplayStoreOptions } from "./replay/lmdb-store.js";
export type { RebuildProgress } from "./replay/lmdb-entries.js";
export type { LmdbConsumeOptions, LmdbPut, LmdbResolveOverrideOptions } from "./replay/lmdb-puts.js";
export {
  LmdbDurability,
  DEFAULT_FLUSH_TIMEOUT_MS,
  DEFAULT_RECOVERY_HOLD_MS,
  type LmdbDurabilityOptions,
} from "./replay/lmdb-durability.js";
export { REPLAY_ENTRY_ENCODER, decodeEntry as decodeReplayEntry } from "./replay/lmdb-entry-encoding.js";
export { loggedEntries as loggedReplayEntries } from "./replay/lmdb-replay-log.js";
