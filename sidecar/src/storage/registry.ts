/**
 * The storage backends a sidecar can run on, by `SERVICE_STORE`. Each is loaded only when chosen: an embedded sidecar
 * never loads `pg`, a fleet member never opens LMDB.
 */
import type { SigningKey } from "@writ/runtime";
import type { SidecarConfig } from "../config.js";
import type { BackendOpener, BackendReporters, StorageBackend } from "./backend.js";

const BACKENDS: Readonly<Record<SidecarConfig["store"], () => Promise<BackendOpener>>> = {
  lmdb: async () => (await import("./lmdb-backend.js")).openLmdbBackend,
  postgres: async () => (await import("./postgres/backend.js")).openPostgresBackend,
};

export async function openBackend(
  config: SidecarConfig,
  reporters: BackendReporters,
  notices: string[],
  signingKey: SigningKey | null,
): Promise<StorageBackend> {
  const opener = await BACKENDS[config.store]();
  return opener(config, reporters, notices, signingKey);
}
