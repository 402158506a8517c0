/**
 * The candidates for records stored outside the record log (migration 5; docs/audit.md, "Records outside the log"):
 * `writ_audit_log_outside (kind, ref)`, each a record stored without entering the log's pending set in the statement
 * that stored it. The export's `unlogged` section and the adoption at start read these rows, so both cost what was
 * stored around the log, never the size of the trail.
 *
 * HOW ROWS GET THERE. A statement-level trigger on each table the log's records are stored in (stored-records.ts
 * RECORD_SOURCES), `AFTER INSERT … REFERENCING NEW TABLE … FOR EACH STATEMENT`, adds every row the statement inserted
 * that has no pending row: one probe of the pending set's unique `(kind, ref)` index per inserted row. The trigger runs
 * at the end of the statement, so it sees the pending row that a sibling CTE of the same statement inserted: with the
 * log on (writ's own writes) it adds nothing. Records written with the log off, imported (`import-lmdb`), or inserted
 * by hand land here. Migration 5 fills the table once with the records that were then in no log and not pending.
 *
 * A CANDIDATE, NOT A VERDICT. Readers re-check each row against the log's entries and pending set and join it to its
 * record: a candidate may since have been taken into a log, its record removed, or a row re-inserted under a logged key
 * (that last case is added here and filtered out by the re-check). A record whose key is changed by an UPDATE is not
 * added: its log entry then shows it removed, which the export's verification reports.
 *
 * Rows leave when adopted (record-log-storage.ts `adoptUnlogged`) and when retention removes their record.
 */
import { DEFAULT_LOG_PENDING_TABLE } from "@writ/runtime/postgres";
import { RECORD_SOURCES, type RecordSource } from "./stored-records.js";

export const OUTSIDE_TABLE = "writ_audit_log_outside";
const PENDING = DEFAULT_LOG_PENDING_TABLE;

/** The trigger (and its function) of one source table. */
function triggerOf(source: RecordSource): string {
  return `${source.table}_outside_log`;
}

function triggerStatements(source: RecordSource): string[] {
  const name = triggerOf(source);
  return [
    `CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ${OUTSIDE_TABLE} (kind, ref)
  SELECT ${source.kindOf}, ${source.refOf} FROM inserted i
  WHERE NOT EXISTS (SELECT 1 FROM ${PENDING} p WHERE p.kind = ${source.kindOf} AND p.ref = ${source.refOf} OFFSET 0)
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$`,
    `CREATE TRIGGER ${name} AFTER INSERT ON ${source.table} REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION ${name}()`,
  ];
}

/** Every record of `source` in no log and not pending, once: the anti-join the triggers make unnecessary afterwards. */
function fillStatement(source: RecordSource): string {
  return `INSERT INTO ${OUTSIDE_TABLE} (kind, ref)
    SELECT ${source.kindOf}, ${source.refOf} FROM ${source.table} i
    WHERE NOT EXISTS (SELECT 1 FROM writ_audit_log_entries e WHERE e.kind = ${source.kindOf} AND e.ref = ${source.refOf})
      AND NOT EXISTS (SELECT 1 FROM ${PENDING} p WHERE p.kind = ${source.kindOf} AND p.ref = ${source.refOf})
    ON CONFLICT DO NOTHING`;
}

/**
 * Migration 5's part: the table, then the triggers, then the fill. CREATE TRIGGER locks each table against writes until
 * the migration commits, so no record stored meanwhile escapes both the fill and the trigger.
 */
export const OUTSIDE_LOG_SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS ${OUTSIDE_TABLE} (kind text NOT NULL, ref text COLLATE "C" NOT NULL, PRIMARY KEY (kind, ref))`,
  ...RECORD_SOURCES.flatMap(triggerStatements),
  ...RECORD_SOURCES.map(fillStatement),
];
