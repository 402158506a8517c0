/**
 * The audit trail on LMDB: the engine-neutral policy (audit/audit-trail.ts) over the LMDB store (audit-store.ts).
 * What only this engine has: the replay store's record writer (`writeRecord`), through which a decision, override or
 * confirmation commits in the write transaction of its replay transition, one fsync for both.
 */
import type { RecordWriter } from "@writ/runtime";
import type { RootDatabase } from "lmdb";
import { AuditTrail, type AuditTrailOptions } from "../../audit/audit-trail.js";
import type { ConfirmationAudit, DecisionAudit, OverrideAudit } from "../../audit/types.js";
import { LmdbAuditStore, type LmdbAuditStoreOptions } from "./audit-store.js";
import type { LmdbTransitionRecords } from "./transition-records.js";

/** The databases, for the tools and tests that read them directly. */
export { AUDIT_DATABASES, FORMER_DECISION_TIMES } from "./audit-databases.js";

export type LmdbAuditLogOptions = AuditTrailOptions & LmdbAuditStoreOptions;

export class LmdbAuditLog extends AuditTrail {
  /**
   * The replay store's record writer (runtime `RecordWriter`): called inside the write transaction of the transition the
   * record comes with, so what it queues commits and flushes with that transition or not at all.
   */
  readonly writeRecord: RecordWriter;
  readonly #records: LmdbTransitionRecords;

  /** Opens the log's databases in `root`; throws when they cannot be opened (e.g. `maxDbs` is exhausted). */
  constructor(root: RootDatabase, options: LmdbAuditLogOptions = {}) {
    const store = new LmdbAuditStore(root, options);
    super(store, options);
    this.#records = store.records;
    this.writeRecord = store.records.write;
  }

  /** `written`: the outcome of the replay transition this record is written with; `json`: its text, stored as it is. */
  recordDecision(entry: DecisionAudit, written?: Promise<boolean | null>, json?: string): void {
    this.#records.decision(entry, written, json);
  }

  recordOverride(entry: OverrideAudit, written?: Promise<boolean | null>): void {
    this.#records.override(entry, written);
  }

  recordConfirmation(entry: ConfirmationAudit, written?: Promise<boolean | null>): void {
    this.#records.confirmation(entry, written);
  }
}
