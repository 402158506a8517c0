/**
 * The audit trail on LMDB: the engine-neutral policy (audit/audit-trail.ts) over the LMDB store (audit-store.ts).
 * What only this engine has: the replay store that writes a decision, override or confirmation in the write transaction
 * of its replay transition, one fsync for both (`recording`, replay-store.ts).
 */
import type { TransitionRecord } from "@writ/runtime";
import type { LmdbReplayStore } from "@writ/runtime/lmdb";
import type { RootDatabase } from "lmdb";
import { AuditTrail, type AuditTrailOptions } from "../../audit/audit-trail.js";
import type { ConfirmationAudit, DecisionAudit, OverrideAudit } from "../../audit/types.js";
import { LmdbAuditStore, type LmdbAuditStoreOptions } from "./audit-store.js";
import { LmdbRecordedReplayStore } from "./replay-store.js";
import type { LmdbTransitionRecords } from "./transition-records.js";

/** The databases, for the tools and tests that read them directly. */
export { AUDIT_DATABASES, FORMER_DECISION_TIMES } from "./audit-databases.js";

export type LmdbAuditLogOptions = AuditTrailOptions & LmdbAuditStoreOptions;

export class LmdbAuditLog extends AuditTrail {
  readonly #records: LmdbTransitionRecords;

  /** Opens the log's databases in `root`; throws when they cannot be opened (e.g. `maxDbs` is exhausted). */
  constructor(root: RootDatabase, options: LmdbAuditLogOptions = {}) {
    const store = new LmdbAuditStore(root, options);
    super(store, options);
    this.#records = store.records;
  }

  /** `replay` (on this trail's environment), keeping the record of each transition in this trail, in its write. */
  recording(replay: LmdbReplayStore): LmdbRecordedReplayStore {
    return new LmdbRecordedReplayStore(replay, this.#records);
  }

  /** A transition's record stored on its own, after it: for a store with no write to share (the development memory store). */
  recordTransition(record: TransitionRecord): void {
    this.#records.writeAlone(record);
  }

  /** `json`: its text, stored as it is. */
  recordDecision(entry: DecisionAudit, json?: string): void {
    this.recordTransition({ kind: "decision", body: entry, ...(json === undefined ? {} : { json }) });
  }

  recordOverride(entry: OverrideAudit): void {
    this.recordTransition({ kind: "override", body: entry });
  }

  recordConfirmation(entry: ConfirmationAudit): void {
    this.recordTransition({ kind: "confirmation", body: entry });
  }
}
