/**
 * The storage settings: `SERVICE_STORE` chooses an engine of the registry (registry.ts), which reads its own part of
 * the environment (docs/storage-engines.md).
 */
import { ConfigError, oneOf, type Env } from "../env.js";
import { ENGINES, STORAGE_KINDS, engineOf, type StorageConfig } from "./registry.js";

export type { StorageConfig };

/**
 * SERVICE_STORE (default `lmdb`) and the chosen engine's settings; a variable only another engine reads is refused.
 * @throws ConfigError
 */
export function storageConfig(env: Env, context: { readonly cwd: string; readonly dataDir: string | null }): StorageConfig {
  const kind = oneOf(env, "SERVICE_STORE", STORAGE_KINDS, "lmdb");
  for (const other of STORAGE_KINDS.filter((k) => k !== kind)) {
    const variable = ENGINES[other].settings.variables.find((name) => env[name] !== undefined);
    if (variable !== undefined) {
      throw new ConfigError(
        `${variable} is set but SERVICE_STORE is not \`${other}\`: set SERVICE_STORE=${other} to use the ${ENGINES[other].settings.what}`,
      );
    }
  }
  return engineOf(kind).settings.parse(env, context);
}

/** null: `storage` can keep the audit trail; else why not. */
export const auditRefusal = (storage: StorageConfig): string | null => engineOf(storage.kind).settings.auditRefusal(storage);

/** null: several processes may share `storage`; else why not. */
export const processesRefusal = (storage: StorageConfig): string | null => engineOf(storage.kind).settings.processesRefusal(storage);

/** Where `storage` keeps its state, for messages: "database", "data dir". */
export const storageWhat = (storage: StorageConfig): string => engineOf(storage.kind).settings.what;
