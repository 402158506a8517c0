/**
 * The audit trail on PostgreSQL: the engine-neutral policy (audit/audit-trail.ts) over the PostgreSQL store
 * (audit-store.ts). Its answers are the LMDB log's (the same contract suite, sidecar/test/audit/audit-contract.ts).
 */
import type pg from "pg";
import { AuditTrail, type AuditTrailOptions } from "../../audit/audit-trail.js";
import type { CheckpointSchedule } from "../../audit/record-log/checkpointer.js";
import { PostgresAuditStore, type PostgresAuditStoreOptions } from "./audit-store.js";
import type { PostgresLogStorage } from "./record-log-storage.js";

export interface PostgresAuditLogOptions extends Omit<AuditTrailOptions, "checkpoints">, Omit<PostgresAuditStoreOptions, "logStorage"> {
  /**
   * The tamper-evident record log (docs/audit.md, "Serving the log"): its store, this sidecar's log, and when and with
   * which key it is checkpointed. Absent or null: records are not logged.
   */
  readonly recordLog?: { readonly storage: PostgresLogStorage; readonly checkpoints: CheckpointSchedule } | null;
}

export class PostgresAuditLog extends AuditTrail {
  readonly #store: PostgresAuditStore;

  /** Uses `pool` (its owner ends it); the schema must be migrated (migrations.ts). */
  constructor(pool: pg.Pool, options: PostgresAuditLogOptions = {}) {
    const store = new PostgresAuditStore(pool, { ...options, logStorage: options.recordLog?.storage ?? null });
    super(store, { ...options, checkpoints: options.recordLog?.checkpoints });
    this.#store = store;
  }

  /** One `SELECT 1`: a database that cannot be reached makes the log unhealthy without any traffic. */
  probe(): Promise<void> {
    return this.#store.probe();
  }
}
