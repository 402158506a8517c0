/**
 * Where each kind of record the record log names is stored on PostgreSQL, as SQL: a log entry, pending row or outside
 * candidate names its record by `(kind, ref)`.
 *
 * - `decision`, `override`, `confirmation`: the records table (runtime RECORDS_TABLE, the one the migrations
 *   create), `ref` its `execution_fp`, with `kind`;
 * - `verification`, `security`, `prune`: `writ_audit_verifications`, `writ_audit_security`, `writ_audit_log_prunes`,
 *   `ref` their `seq` as text.
 */
import { RECORDS_TABLE } from "./tables.js";

export interface RecordSource {
  /** The kinds of record stored in it. */
  readonly kinds: readonly [string, ...string[]];
  readonly table: string;
  /** The SQL expression of a row's kind, over the row alias `i`. */
  readonly kindOf: string;
  /** The SQL expression of a row's `ref`, over the row alias `i`. */
  readonly refOf: string;
}

export const RECORD_SOURCES: readonly RecordSource[] = [
  { kinds: ["decision", "override", "confirmation"], table: RECORDS_TABLE, kindOf: "i.kind", refOf: "i.execution_fp" },
  { kinds: ["verification"], table: "writ_audit_verifications", kindOf: "'verification'::text", refOf: "i.seq::text" },
  { kinds: ["security"], table: "writ_audit_security", kindOf: "'security'::text", refOf: "i.seq::text" },
  { kinds: ["prune"], table: "writ_audit_log_prunes", kindOf: "'prune'::text", refOf: "i.seq::text" },
];

/**
 * The stored JSON text of the record that the row aliased `named` (columns `kind`, `ref`) names; null when it is not
 * stored. One scalar subquery per kind, of which only the row's own runs: a probe of one table's key, never a join
 * the planner could turn into a scan, and `ref` is cast to bigint only for the kinds whose `ref` is a `seq`.
 */
export function recordBody(named: string): string {
  const branches = RECORD_SOURCES.map((source) => {
    const kinds = source.kinds.map((k) => `'${k}'`).join(", ");
    const key =
      source.table === RECORDS_TABLE ? `s.execution_fp = ${named}.ref AND s.kind = ${named}.kind` : `s.seq = ${named}.ref::bigint`;
    return `WHEN ${named}.kind IN (${kinds}) THEN (SELECT s.body FROM ${source.table} s WHERE ${key})`;
  });
  return `(CASE ${branches.join(" ")} END)`;
}

/** The kinds of the records table (`transitionRecord`), as an SQL list. */
export const TRANSITION_KINDS = RECORD_SOURCES[0]!.kinds.map((k) => `'${k}'`).join(", ");

/**
 * The transition record (decision, override, confirmation) the row aliased `named` names, for a `LEFT JOIN LATERAL`:
 * `body`, and for a decision `indexed`, the `status` and `policy_id` columns it is kept with, as JSON `{status,
 * policyId}`, when they are not what its body states (its `status`, its attestation's `policyId`), else null. Filtered
 * queries find decisions through these columns, which the record log's proof does not cover, so an export names any
 * that disagree and verification fails the entry (runtime decision-agreement.ts).
 *
 * One probe of the records table's key per row, only for those kinds (`OFFSET 0` keeps the planner from flattening it
 * into a join it could turn into a scan); the body is read as jsonb, parsed once (`OFFSET 0` again: the cast is not
 * inlined into each use). The stored text is unchanged.
 */
export function transitionRecord(named: string): string {
  const indexed = `(SELECT json_build_object('status', s.status, 'policyId', s.policy_id)
      FROM (SELECT s.body::jsonb AS j OFFSET 0) AS b
      WHERE s.status IS DISTINCT FROM b.j->>'status' OR s.policy_id IS DISTINCT FROM b.j->'attestation'->>'policyId')`;
  // A coded body (record-coding.ts: its first character U+0001) is not JSON: its columns are answered, and compared with
  // the decoded record by the reader (record-log-reads.ts).
  const coded = `left(s.body, 1) = chr(1)`;
  return `SELECT s.body, CASE WHEN s.kind = 'decision' AND NOT ${coded} THEN ${indexed} END AS indexed,
      CASE WHEN s.kind = 'decision' AND ${coded} THEN json_build_object('status', s.status, 'policyId', s.policy_id) END AS columns
    FROM ${RECORDS_TABLE} s
    WHERE ${named}.kind IN (${TRANSITION_KINDS}) AND s.execution_fp = ${named}.ref AND s.kind = ${named}.kind
    OFFSET 0`;
}
