/**
 * The settings of every storage engine, by its `SERVICE_STORE` kind: one line per engine (docs/storage-engines.md).
 * The engines' backends are registered by the same kind in registry.ts, which the compiler holds to this table.
 */
import { ConfigError, oneOf, type Env } from "../env.js";
import type { EngineSettings } from "./engine-settings.js";
import { LMDB_SETTINGS } from "./lmdb/config.js";
import { POSTGRES_SETTINGS } from "./postgres/config.js";

const SETTINGS = {
  lmdb: LMDB_SETTINGS,
  postgres: POSTGRES_SETTINGS,
} as const;

export type StorageKind = keyof typeof SETTINGS;
export type StorageConfig = ReturnType<(typeof SETTINGS)[StorageKind]["parse"]>;
/** The settings of the engine of `kind`. */
export type StorageConfigOf<K extends StorageKind> = Extract<StorageConfig, { readonly kind: K }>;

/** The kinds SERVICE_STORE takes, in the order its error lists them. */
export const STORAGE_KINDS = Object.keys(SETTINGS) as StorageKind[];
const settingsOf = (kind: StorageKind) => SETTINGS[kind] as EngineSettings<StorageConfig>;

/**
 * SERVICE_STORE (default `lmdb`) and the chosen engine's settings; a variable only another engine reads is refused.
 * @throws ConfigError
 */
export function storageConfig(env: Env, context: { readonly cwd: string; readonly dataDir: string | null }): StorageConfig {
  const kind = oneOf(env, "SERVICE_STORE", STORAGE_KINDS, "lmdb");
  for (const other of STORAGE_KINDS.filter((k) => k !== kind)) {
    const variable = SETTINGS[other].variables.find((name) => env[name] !== undefined);
    if (variable !== undefined) {
      throw new ConfigError(
        `${variable} is set but SERVICE_STORE is not \`${other}\`: set SERVICE_STORE=${other} to use the ${SETTINGS[other].what}`,
      );
    }
  }
  return settingsOf(kind).parse(env, context);
}

/** null: `storage` can keep the audit trail; else why not. */
export const auditRefusal = (storage: StorageConfig): string | null => settingsOf(storage.kind).auditRefusal(storage);

/** Where `storage` keeps its state, for messages: "database", "data dir". */
export const storageWhat = (storage: StorageConfig): string => settingsOf(storage.kind).what;
