/**
 * `total_decisions` and `decisions_today` of `/audit/stats` on PostgreSQL without counting the trail (migration 5;
 * docs/audit.md, "Counting decisions"). A stored decision is, at any instant, in exactly one of three places:
 *
 * - in a log (an entry of `writ_audit_log_entries`): counted per log in `writ_audit_log_state.decisions` and per log
 *   and UTC day of the record's time in `writ_audit_log_days`. Triggers keep both: a statement-level trigger on the
 *   entries adds the decisions each sequencing statement appends (their day read from the record), and one on the
 *   records table takes away the logged decisions each DELETE removes (retention, or anyone's). Both run off the
 *   request path, in the transaction that holds the log's state row: sequencing locks it first; retention locks the
 *   state rows of the logs its chunk touches before deleting (audit-trail-prune.ts), so no append can slip between a
 *   removal and its count.
 * - pending (`writ_audit_log_pending`): counted from its rows, which are few (sequenced every 200 ms);
 * - outside every log (`writ_audit_log_outside`, outside-log.ts): counted from its candidates, re-checked; few once
 *   every sidecar runs with the log on.
 *
 * The totals are the sums of the three, read in one statement (one snapshot): exact, as `count(*)` would be. A record
 * inserted again by hand under a logged key (after its removal) is not counted again.
 */
import { DEFAULT_LOG_PENDING_TABLE, DEFAULT_RECORDS_TABLE } from "@writ/runtime/postgres";
import { DAY_MS } from "../../audit/retention.js";
import { OUTSIDE_TABLE } from "./outside-log.js";

const RECORDS = DEFAULT_RECORDS_TABLE;
const PENDING = DEFAULT_LOG_PENDING_TABLE;
const DAY_OF = (time: string): string => `floor(${time} / ${DAY_MS}.0)::bigint`;

/** Adds `counted` (rows log_id, day, n) to the logs' counters; a CTE list ending in the state UPDATE. */
function addCounts(counted: string, sign: "+" | "-"): string {
  const days =
    sign === "+"
      ? `INSERT INTO writ_audit_log_days (day, log_id, decisions) SELECT day, log_id, n FROM counted
         ON CONFLICT (day, log_id) DO UPDATE SET decisions = writ_audit_log_days.decisions + EXCLUDED.decisions`
      : "UPDATE writ_audit_log_days y SET decisions = y.decisions - c.n FROM counted c WHERE y.day = c.day AND y.log_id = c.log_id";
  return `WITH counted AS (${counted}),
    days AS (${days})
  UPDATE writ_audit_log_state s SET decisions = s.decisions ${sign} t.n
  FROM (SELECT log_id, sum(n) AS n FROM counted GROUP BY log_id) t WHERE s.log_id = t.log_id`;
}

/**
 * The decisions a sequencing statement appended (`appended`), with their record's day: one probe of the records'
 * key each (a lateral subquery that is never turned into a join, so never a scan of the trail).
 */
const COUNT_APPENDED = addCounts(
  `SELECT a.log_id, ${DAY_OF("r.recorded_at")} AS day, count(*) AS n FROM appended a
   CROSS JOIN LATERAL (SELECT recorded_at FROM ${RECORDS} WHERE execution_fp = a.ref AND kind = 'decision' OFFSET 0) r
   WHERE a.kind = 'decision' GROUP BY 1, 2`,
  "+",
);

/** The logged decisions a DELETE removed (`removed`): one probe of the entries' `(kind, ref)` index each. */
const UNCOUNT_REMOVED = addCounts(
  `SELECT e.log_id, ${DAY_OF("d.recorded_at")} AS day, count(*) AS n FROM removed d
   CROSS JOIN LATERAL (SELECT log_id FROM writ_audit_log_entries WHERE kind = 'decision' AND ref = d.execution_fp OFFSET 0) e
   WHERE d.kind = 'decision' GROUP BY 1, 2`,
  "-",
);

function triggerFunction(name: string, body: string): string {
  return `CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  ${body};
  RETURN NULL;
END
$$`;
}

/**
 * Migration 5's part. The triggers come before the counts that start them: creating a trigger locks its table against
 * writes until the migration commits, so the counts see every append and removal made before, and the triggers every
 * one after.
 */
export const DECISION_COUNTS_SCHEMA: readonly string[] = [
  "ALTER TABLE writ_audit_log_state ADD COLUMN IF NOT EXISTS decisions bigint NOT NULL DEFAULT 0",
  "CREATE TABLE IF NOT EXISTS writ_audit_log_days (day bigint NOT NULL, log_id text NOT NULL, decisions bigint NOT NULL, PRIMARY KEY (day, log_id))",
  triggerFunction("writ_audit_log_entries_count", COUNT_APPENDED),
  "CREATE TRIGGER writ_audit_log_entries_count AFTER INSERT ON writ_audit_log_entries REFERENCING NEW TABLE AS appended FOR EACH STATEMENT EXECUTE FUNCTION writ_audit_log_entries_count()",
  triggerFunction(`${RECORDS}_uncount`, UNCOUNT_REMOVED),
  `CREATE TRIGGER ${RECORDS}_uncount AFTER DELETE ON ${RECORDS} REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION ${RECORDS}_uncount()`,
  `UPDATE writ_audit_log_state s SET decisions = c.n
   FROM (SELECT e.log_id, count(*) AS n FROM writ_audit_log_entries e JOIN ${RECORDS} r ON r.execution_fp = e.ref AND r.kind = 'decision'
         WHERE e.kind = 'decision' GROUP BY e.log_id) c
   WHERE s.log_id = c.log_id`,
  `INSERT INTO writ_audit_log_days (day, log_id, decisions)
   SELECT ${DAY_OF("r.recorded_at")}, e.log_id, count(*) FROM writ_audit_log_entries e JOIN ${RECORDS} r ON r.execution_fp = e.ref AND r.kind = 'decision'
   WHERE e.kind = 'decision' GROUP BY 1, 2`,
];

/**
 * One row `(decisions, today)` from the counters, for a statement whose parameters `$1` and `$2` are the day's start and
 * end (Unix ms, a UTC day).
 */
export const COUNTED_DECISIONS = `SELECT (SELECT coalesce(sum(decisions), 0) FROM writ_audit_log_state) + u.total AS decisions,
    (SELECT coalesce(sum(decisions), 0) FROM writ_audit_log_days WHERE day = ${DAY_OF("$1::bigint")}) + u.today AS today
  FROM (
    -- Pending and outside decisions whose record is stored: one probe each, for what is not sequenced yet.
    SELECT count(*) AS total, count(*) FILTER (WHERE r.recorded_at >= $1 AND r.recorded_at < $2) AS today
    FROM (SELECT ref FROM ${PENDING} WHERE kind = 'decision'
          UNION ALL
          SELECT o.ref FROM ${OUTSIDE_TABLE} o WHERE o.kind = 'decision'
            AND NOT EXISTS (SELECT 1 FROM writ_audit_log_entries e WHERE e.kind = o.kind AND e.ref = o.ref)
            AND NOT EXISTS (SELECT 1 FROM ${PENDING} p WHERE p.kind = o.kind AND p.ref = o.ref)) AS c
    CROSS JOIN LATERAL (SELECT recorded_at FROM ${RECORDS} WHERE execution_fp = c.ref AND kind = 'decision' OFFSET 0) r
  ) AS u`;

/** The same row by counting the records table: with the record log off, its candidates may be the whole trail. */
export const SCANNED_DECISIONS = `SELECT (SELECT count(*) FROM ${RECORDS} WHERE kind = 'decision') AS decisions,
    (SELECT count(*) FROM ${RECORDS} WHERE kind = 'decision' AND recorded_at >= $1 AND recorded_at < $2) AS today`;
