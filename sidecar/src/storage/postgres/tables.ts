/**
 * The tables the replay store and the audit trail share, by name, as the migrations create them (migrations/*.sql):
 * the statements that read and write them name them from here.
 */
/** A replay entry per execution fingerprint (replay-store.ts). */
export const REPLAY_TABLE = "writ_replay";
/** Decisions, overrides and confirmations: inserted by the statement of the replay transition they record. */
export const RECORDS_TABLE = "writ_audit_records";
/** The record log's pending set: a row per record written and not yet in its log (record-log-storage.ts). */
export const LOG_PENDING_TABLE = "writ_audit_log_pending";
