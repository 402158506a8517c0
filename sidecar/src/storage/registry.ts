/**
 * The storage engines a sidecar can run on, by `SERVICE_STORE` kind: one line per engine (docs/storage-engines.md),
 * each its folder's `engine.ts` (engine.ts says what one carries). Everything engine-shaped is reached from here: the
 * settings (storage-config.ts), the backend, the commands of `writ-sidecar` (main.ts) and the series of `/metrics`.
 * Each backend is loaded only when chosen: an embedded sidecar never loads `pg`, a fleet member never opens LMDB.
 */
import type { CheckpointSigner } from "../audit/record-log/log-storage.js";
import type { ScrapedSeries } from "../observability/series.js";
import type { BackendOpener, BackendReporters, BackendSettings, StorageBackend } from "./backend.js";
import type { EngineCommand, StorageEngine } from "./engine.js";
import { LMDB_ENGINE } from "./lmdb/engine.js";
import { POSTGRES_ENGINE } from "./postgres/engine.js";

/** The engines, each under its own kind: the compiler refuses an entry whose key is not its engine's kind. */
const registered = <T extends { readonly [K in keyof T]: { readonly settings: { readonly kind: K } } }>(engines: T): T => engines;

export const ENGINES = registered({
  lmdb: LMDB_ENGINE,
  postgres: POSTGRES_ENGINE,
});

export type StorageKind = keyof typeof ENGINES;
export type StorageConfig = ReturnType<(typeof ENGINES)[StorageKind]["settings"]["parse"]>;

/** The kinds SERVICE_STORE takes, in the order its error lists them. */
export const STORAGE_KINDS = Object.keys(ENGINES) as StorageKind[];
/** The engine of `kind`, over the settings of any: each engine is only ever handed its own. */
export const engineOf = (kind: StorageKind) => ENGINES[kind] as StorageEngine<StorageConfig>;

export async function openBackend(
  config: BackendSettings & { readonly storage: StorageConfig },
  reporters: BackendReporters,
  notices: string[],
  checkpointSigner: CheckpointSigner | null,
): Promise<StorageBackend> {
  const opener: BackendOpener<StorageConfig> = await engineOf(config.storage.kind).open();
  return opener(config, config.storage, reporters, notices, checkpointSigner);
}

/** The series of `/metrics` of `backend`, opened by the engine of `kind`. */
export const engineSeries = (kind: StorageKind, backend: StorageBackend): readonly ScrapedSeries[] =>
  engineOf(kind).metrics?.(backend) ?? [];

/** Whether `error` is the chosen engine's report of a write its stores already answered (StorageEngine `failedWrite`). */
export const isFailedWrite = (storage: StorageConfig, error: unknown): boolean => engineOf(storage.kind).failedWrite?.(error) ?? false;

/** Every engine's commands of `writ-sidecar`, in the registry's order. */
export const ENGINE_COMMANDS: readonly EngineCommand[] = STORAGE_KINDS.flatMap((kind) => ENGINES[kind].commands ?? []);
