/**
 * `total_decisions` and `decisions_today` of `/audit/stats` on PostgreSQL without counting the trail (migration 5;
 * docs/audit.md, "Counting decisions"). A stored decision is at any instant in exactly one of three places: in a log
 * (counted per log in `writ_audit_log_state.decisions`, per log and UTC day in `writ_audit_log_days`, both kept by
 * triggers on the entries and on the records table's DELETEs), pending (counted from its few rows), or outside every
 * log (counted from its candidates, re-checked: outside-log.ts).
 *
 * The triggers run in the transaction that holds the log's state row: sequencing locks it first, and retention locks
 * the state rows of the logs its chunk touches before deleting, so no append slips between a removal and its count.
 * The totals are the three sums, read in one statement (one snapshot): exact, as `count(*)` would be. A record
 * inserted again by hand under a logged key is not counted again.
 */
import { LOG_PENDING_TABLE, RECORDS_TABLE } from "./tables.js";
import { DAY_MS } from "../../audit/retention.js";
import { OUTSIDE_TABLE } from "./outside-log.js";

const RECORDS = RECORDS_TABLE;
const PENDING = LOG_PENDING_TABLE;
const DAY_OF = (time: string): string => `floor(${time} / ${DAY_MS}.0)::bigint`;

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
