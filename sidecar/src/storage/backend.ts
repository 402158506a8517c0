/**
 * A storage backend owns the state a sidecar keeps: the replay store, the audit trail, Surface B's Trust Records and
 * the bundle pins, opened together from the configuration (`SERVICE_STORE`) and closed together. Each engine's module
 * (engine.ts) is registered in `ENGINES` (registry.ts); each interface has one contract suite that every backend passes.
 *
 * - `lmdb` (embedded default): one LMDB environment in the data dir; a decision's record commits in the replay
 *   store's write transaction.
 * - `postgres`: one database shared by every sidecar of a fleet; a decision's record is inserted by the same SQL
 *   statement that consumes the execution.
 */
import type { BundlePins, ReplayStore, StoreHealth } from "@writ/runtime";
import type { CheckpointSigner } from "../audit/record-log/log-storage.js";
import type { AuditRetention } from "../audit/retention.js";
import type { SecurityEventLimits } from "../audit/security-event-limiter.js";
import type { AuditLog } from "../audit/types.js";
import type { TrustRecordStore } from "../trust-records/record-store.js";

export type { StoreHealth };

/**
 * While the data dir fails writes (a full disk), a probe write checks this often whether it recovered; on PostgreSQL,
 * the audit log's own probe runs as often (the store's: postgres/connection/instance-session.ts,
 * DATABASE_PROBE_INTERVAL_MS).
 */
export const STORE_PROBE_INTERVAL_MS = 1_000;

/** How often the periodic upkeep of the store runs (docs/sidecar.md): shorter in a soak benchmark, never on a request's path. */
export interface MaintenanceIntervals {
  /** `SERVICE_REPLAY_SWEEP_INTERVAL_MS`: expired replay reservations and failed entries are removed this often (they stop blocking at their TTL anyway). */
  readonly replaySweepMs: number;
  /** `SERVICE_AUDIT_PRUNE_INTERVAL_MS`: audit records past their retention are removed this often. */
  readonly auditPruneMs: number;
}

export const DEFAULT_MAINTENANCE_INTERVALS: MaintenanceIntervals = { replaySweepMs: 60_000, auditPruneMs: 60_000 };

/** The settings every engine's opener reads besides its own (config.ts reads them into the SidecarConfig). */
export interface BackendSettings {
  /** The directory of generated keys and, with the `lmdb` store, of the LMDB environment (replay, audit, Surface B). */
  readonly dataDir: string | null;
  readonly audit: boolean;
  /** Aggregation of security events per source and interval (docs/audit.md, "Bounds"). */
  readonly securityEvents: SecurityEventLimits;
  /** How long the audit trail keeps each kind of record. */
  readonly auditRetention: AuditRetention;
  /** The tamper-evident audit record log (docs/audit.md, "Serving the log"): on by default, `SERVICE_AUDIT_LOG=off` turns it off. */
  readonly auditLog: boolean;
  /** When the audit record log is checkpointed. */
  readonly auditCheckpoints: { readonly intervalMs: number; readonly everyRecords: number };
  /** How often expired replay entries are swept and audit records past their retention pruned. */
  readonly maintenance: MaintenanceIntervals;
  /**
   * `SERVICE_INSTANCE_ID`: this sidecar's instance id, which names its audit record log (docs/audit.md, "One log per
   * sidecar instance"); null: the one kept in the data dir, or on the PostgreSQL store without one, the host name.
   */
  readonly instanceId: string | null;
  /**
   * `SERVICE_PROCESSES` (processes/settings.ts): how many processes serve this configuration, and which of them this
   * one is (null for a sidecar of one process; on PostgreSQL process i > 0 names its log `<instance id>-p<i>`).
   */
  readonly processes: { readonly count: number; readonly index: number | null };
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
 * Opens an engine's backend: `storage` is its own part of the configuration (storage-config.ts), `config` what every
 * engine reads; `checkpointSigner`: the sidecar's signing key and engine, which sign the audit record log's checkpoints;
 * null: none are signed. `B`: the backend with what the engine's own series of `/metrics` read (engine.ts `metrics`).
 */
export type BackendOpener<S, B extends StorageBackend = StorageBackend> = (
  config: BackendSettings,
  storage: S,
  reporters: BackendReporters,
  notices: string[],
  checkpointSigner: CheckpointSigner | null,
) => Promise<B>;
