/**
 * A storage backend owns the state a sidecar keeps: the replay store, the audit trail, Surface B's Trust Records and
 * the bundle pins, opened together from the configuration (`SERVICE_STORE`) and closed together. Backends register
 * themselves in `BACKENDS` (registry.ts); each interface has one contract suite that every backend passes.
 *
 * - `lmdb` (embedded default): one LMDB environment in the data dir; a decision's record commits in the replay
 *   store's write transaction.
 * - `postgres`: one database shared by every sidecar of a fleet; a decision's record is inserted by the same SQL
 *   statement that consumes the execution.
 */
import type { BundlePins, ReplayStore, SigningKey, StoreHealth } from "@writ/runtime";
import type { AuditLog } from "../audit/types.js";
import type { PoolStats } from "./pool-stats.js";
import type { SidecarConfig } from "../config.js";
import type { TrustRecordStore } from "../trust-records/record-store.js";

export type { PoolStats, StoreHealth };

/**
 * While the data dir fails writes (a full disk), a probe write checks this often whether it recovered; on PostgreSQL,
 * the audit log's own probe runs as often (the store's: postgres/instance-session.ts, DATABASE_PROBE_INTERVAL_MS).
 */
export const STORE_PROBE_INTERVAL_MS = 1_000;

/** How much of an engine's data file holds data, for `/metrics`: a file that grew far beyond it wants compaction. */
export interface StoreSpace {
  /** The file's size in bytes, as far as the engine has written it. */
  readonly fileBytes: number;
  /** The bytes of its pages that hold data. */
  readonly usedBytes: number;
}

export interface StorageBackend {
  /** null: executions fail closed (INV-REPLAY-001). */
  readonly replay: ReplayStore | null;
  readonly audit: AuditLog;
  /** null: Surface B's record routes answer 503. */
  readonly trustRecords: TrustRecordStore | null;
  /** Where each policy version's bundle_hash is pinned (docs/bundles.md); null: in memory, for the process's life. */
  readonly bundlePins: BundlePins | null;
  /** Whether the store takes writes: `store` in `GET /health`; null when there is no durable store. */
  health(): StoreHealth | null;
  /** The database connection pool's counts, for `/metrics`; null without a pool (LMDB). */
  pool(): PoolStats | null;
  /** The read database's pool's counts (postgres/read-pool.ts), for `/metrics`; null without one. */
  readPool(): PoolStats | null;
  /** How much of its data file holds data (LMDB: storage/lmdb/space.ts); null for an engine without one (a server's). */
  space(): StoreSpace | null;
  /**
   * The longest a request that writes to the store waits for its answer, from its arrival, pool waits and every
   * statement included; past it, 503 `replay store unavailable` (http/register-routes.ts). PostgreSQL: the statement
   * timeout plus 1 s (docs/fleet.md, "Failure behaviour"); null: no bound of the route's own (LMDB's flush timeout).
   */
  readonly answerWithinMs: number | null;
  /** Stops timers, waits for writes under way, closes what the backend opened. */
  close(): Promise<void>;
}

export interface BackendReporters {
  /** Why `audit_db` turned false. */
  readonly onAuditError?: (error: unknown) => void;
  /** The store stopped taking writes (with the error) or takes them again (without). */
  readonly onStoreHealth?: (health: StoreHealth, error?: unknown) => void;
  /** Long work done after start-up, for the operator's log. */
  readonly onNotice?: (message: string) => void;
  /** Something about the store the operator should change (logged at warn). */
  readonly onWarning?: (message: string) => void;
}

/**
 * Opens an engine's backend: `storage` is its own part of the configuration (storage-config.ts), `config` the rest;
 * `signingKey`: the sidecar's signing key, which signs the audit record log's checkpoints; null: none are signed.
 */
export type BackendOpener<S> = (
  config: SidecarConfig,
  storage: S,
  reporters: BackendReporters,
  notices: string[],
  signingKey: SigningKey | null,
) => Promise<StorageBackend>;
