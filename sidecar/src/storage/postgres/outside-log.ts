/**
 * The candidates for records stored outside the record log (migration 5; docs/audit.md, "Records outside the log"):
 * `writ_audit_log_outside (kind, ref)`, read by the export's `unlogged` section and the adoption at start, which so
 * cost what was stored around the log, never the size of the trail. A statement-level trigger on each table the log's
 * records are stored in (stored-records.ts RECORD_SOURCES) adds every row its statement inserted that has no pending
 * row; it runs at the end of the statement, so it sees the pending row a sibling CTE inserted, and with the log on adds
 * nothing. Records written with the log off, imported (`import-lmdb`) or inserted by hand land here.
 *
 * A CANDIDATE, NOT A VERDICT. Readers re-check each row against the log's entries and pending set and join it to its
 * record: a candidate may since have been logged, removed, or re-inserted under a logged key. A record whose key an
 * UPDATE changed is not added: its log entry shows it removed. Rows leave when adopted (`adoptUnlogged`) or pruned.
 */
export const OUTSIDE_TABLE = "writ_audit_log_outside";
