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
