/**
 * The storage backends a sidecar can run on, by `SERVICE_STORE` kind: one line per engine (docs/storage-engines.md),
 * each engine's settings being in storage-config.ts. Each backend is loaded only when chosen: an embedded sidecar
 * never loads `pg`, a fleet member never opens LMDB.
 */
import type { SigningKey } from "@writ/runtime";
import type { SidecarConfig } from "../config.js";
import type { BackendOpener, BackendReporters, StorageBackend } from "./backend.js";
import type { StorageConfigOf, StorageKind } from "./storage-config.js";

const BACKENDS: { readonly [K in StorageKind]: () => Promise<BackendOpener<StorageConfigOf<K>>> } = {
  lmdb: async () => (await import("./lmdb/backend.js")).openLmdbBackend,
  postgres: async () => (await import("./postgres/backend.js")).openPostgresBackend,
};

export async function openBackend(
  config: SidecarConfig,
  reporters: BackendReporters,
  notices: string[],
  signingKey: SigningKey | null,
): Promise<StorageBackend> {
  const opener = (await BACKENDS[config.storage.kind]()) as BackendOpener<typeof config.storage>;
  return opener(config, config.storage, reporters, notices, signingKey);
}
