/**
 * Retention on PostgreSQL (docs/audit.md, "Bounds"): removes the records of one trail past their limits, oldest first,
 * at a cost proportional to what it removes (and, for a count limit, to the records kept), never to the trail's size.
 * The boundary is found once per run (the age cutoff; for the count, the newest record beyond `maxRecords`, by one
 * index scan with OFFSET), so due records are one range of the time index. Chunks of at most PRUNE_CHUNK records, each
 * its own transaction, run only in the sidecar holding the fleet's prune lock (an advisory lock; the others skip).
 * Each chunk keeps the record log whole (log-storage.ts INVARIANT (pending or sequenced, never both, never lost)): the
 * removed records leave the pending set and the outside candidates, and each log that held some gets a prune note. It
 * first locks the state rows of those logs, in log order, as sequencing does: no append of these records runs
 * meanwhile, so the decision counters' trigger (decision-counts.ts) sees every entry it removes, and no lock is ever
 * taken in the opposite order.
 */
import { entryLeafHash } from "@writ/runtime";
import { LOG_PENDING_TABLE, RECORDS_TABLE } from "./tables.js";
import type pg from "pg";
import { PRUNE_CHUNK, type RetentionLimit } from "../../audit/retention.js";
import { OUTSIDE_TABLE } from "./outside-log.js";
import { query, transaction } from "./connection/query.js";

/** Held by the sidecar pruning, chunk by chunk; taken by the adoption of unlogged records too (record-log-storage.ts). */
export const PRUNE_LOCK = "writ.audit.prune";

const WHAT = "pruning the audit trail";
const PENDING = LOG_PENDING_TABLE;

/** One trail: its table, which of its rows are its records, and its time index's columns. */
export interface PrunedTrail {
  readonly table: string;
  /** The condition that selects the trail's records (the records table also holds overrides and confirmations). */
  readonly where: string;
  readonly time: string;
  /** The key a record is removed by, which also orders one time's records: `seq`, or the execution fingerprint. */
  readonly key: "seq" | "execution_fp";
  /** The SQL expression of a removed row's log entry kind. */
  readonly logKind: string;
}

export const PRUNED_TRAILS = {
  decisions: { table: RECORDS_TABLE, where: "kind = 'decision'", time: "recorded_at", key: "execution_fp", logKind: "kind" },
  verifications: { table: "writ_audit_verifications", where: "TRUE", time: "recorded_at", key: "seq", logKind: "'verification'" },
  security: { table: "writ_audit_security", where: "TRUE", time: "at", key: "seq", logKind: "'security'" },
} as const satisfies Record<string, PrunedTrail>;

/** A record's place in its trail's time index. */
type TimeKey = readonly [time: number, key: string];

/** The newest due record: all before `time` (the age cutoff), or all up to `(time, key)` included (the count limit). */
type Boundary = { readonly before: number } | { readonly through: TimeKey };

/**
 * Removes `trail`'s records due under `limit` at `now`; `stopping` is asked between chunks. Answers how many of its
 * records it removed (a decision's override and confirmation go with it, uncounted).
 */
export async function pruneTrail(
  pool: pg.Pool,
  trail: PrunedTrail,
  limit: RetentionLimit,
  now: number,
  stopping: () => boolean,
): Promise<number> {
  if (limit.maxAgeMs === null && limit.maxRecords === null) return 0;
  let boundary: Boundary | null | undefined;
  // Where the previous chunk ended: each chunk starts after it, never walking again over the index entries of the rows
  // removed so far (dead until vacuumed), which would make a long run quadratic.
  let after: TimeKey | null = null;
  let removed = 0;
  for (;;) {
    if (stopping()) return removed;
    const chunk = await transaction(pool, WHAT, async (client) => {
      const { rows } = await query<{ locked: boolean }>(client, WHAT, "SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked", [
        PRUNE_LOCK,
      ]);
      if (rows[0]?.locked !== true) return null;
      if (boundary === undefined) boundary = await boundaryOf(client, trail, limit, now);
      return boundary === null ? null : removeChunk(client, trail, after, boundary, now);
    });
    if (chunk === null) return removed;
    removed += chunk.removed;
    if (chunk.last === null || chunk.removed < PRUNE_CHUNK) return removed;
    after = chunk.last;
  }
}

async function boundaryOf(client: pg.PoolClient, trail: PrunedTrail, limit: RetentionLimit, now: number): Promise<Boundary | null> {
  const cutoff = limit.maxAgeMs === null ? null : now - limit.maxAgeMs;
  let beyondCount: TimeKey | null = null;
  if (limit.maxRecords !== null) {
    const { rows } = await query<{ time: string; key: string }>(
      client,
      WHAT,
      `SELECT ${trail.time} AS time, ${trail.key}::text AS key FROM ${trail.table} WHERE ${trail.where}
       ORDER BY ${trail.time} DESC, ${trail.key} DESC OFFSET $1 LIMIT 1`,
      [limit.maxRecords],
    );
    if (rows[0] !== undefined) beyondCount = [Number(rows[0].time), rows[0].key];
  }
  // Both: the union of two prefixes of one order is the longer one.
  if (beyondCount !== null && (cutoff === null || beyondCount[0] >= cutoff)) return { through: beyondCount };
  return cutoff === null ? null : { before: cutoff };
}

/**
 * One chunk, inside its transaction: the due records after `after`, oldest first. Answers how many of the trail's
 * records it removed and the last one's place.
 */
async function removeChunk(
  client: pg.PoolClient,
  trail: PrunedTrail,
  after: TimeKey | null,
  boundary: Boundary,
  now: number,
): Promise<{ readonly removed: number; readonly last: TimeKey | null }> {
  const keyType = trail.key === "seq" ? "bigint" : "text";
  const values: unknown[] = [];
  const bind = (value: unknown): string => `$${values.push(value)}`;
  const place = (at: TimeKey): string => `(${bind(at[0])}, ${bind(at[1])}::${keyType})`;
  const range = [
    ...(after === null ? [] : [`(${trail.time}, ${trail.key}) > ${place(after)}`]),
    "before" in boundary ? `${trail.time} < ${bind(boundary.before)}` : `(${trail.time}, ${trail.key}) <= ${place(boundary.through)}`,
  ];
  const { rows: doomed } = await query<{ time: string; key: string }>(
    client,
    WHAT,
    `SELECT ${trail.time} AS time, ${trail.key}::text AS key FROM ${trail.table} WHERE ${trail.where} AND ${range.join(" AND ")}
     ORDER BY ${trail.time}, ${trail.key} LIMIT ${PRUNE_CHUNK}`,
    values,
  );
  if (doomed.length === 0) return { removed: 0, last: null };
  const keys = doomed.map((r) => r.key);
  await lockLogsHolding(client, trail, keys);
  const { rows: removed } = await query<{ kind: string; ref: string; counted: boolean }>(
    client,
    WHAT,
    `DELETE FROM ${trail.table} WHERE ${trail.key} = ANY($1::${keyType}[]) RETURNING ${trail.logKind} AS kind, ${trail.key}::text AS ref, ${trail.where} AS counted`,
    [keys],
  );
  await noteRemoved(client, removed, now);
  const last = doomed[doomed.length - 1]!;
  return { removed: removed.filter((r) => r.counted).length, last: [Number(last.time), last.key] };
}

/** The `(kind, ref)` of every record stored under `keys` in `trail`, as a FROM item `r (kind, ref)` over `$1`. */
function refsOf(trail: PrunedTrail): string {
  return trail.key === "seq"
    ? `(SELECT ${trail.logKind}::text AS kind, k::text AS ref FROM unnest($1::bigint[]) AS k) AS r`
    : "(SELECT k.kind, f.ref FROM unnest($1::text[]) AS f (ref) CROSS JOIN (VALUES ('decision'), ('override'), ('confirmation')) AS k (kind)) AS r";
}

/**
 * Locks, in log order, the state rows of the logs holding any record stored under `keys`, pending or sequenced. Each
 * record is looked up by `(kind, ref)` in both (a lateral subquery: probes of the two unique indexes, whatever the
 * planner thinks of the number of keys). A log that has never been sequenced has no state row yet: it is created first
 * (as sequencing creates it), so that a first sequencing of that log running meanwhile is waited for too; otherwise
 * its entries would commit unseen by this chunk, and their records be removed without a prune note.
 */
async function lockLogsHolding(client: pg.PoolClient, trail: PrunedTrail, keys: readonly string[]): Promise<void> {
  const { rows } = await query<{ log_id: string }>(
    client,
    WHAT,
    `SELECT DISTINCT h.log_id FROM ${refsOf(trail)} CROSS JOIN LATERAL (
       SELECT p.log_id FROM ${PENDING} p WHERE p.kind = r.kind AND p.ref = r.ref
       UNION ALL
       SELECT e.log_id FROM writ_audit_log_entries e WHERE e.kind = r.kind AND e.ref = r.ref
     ) AS h ORDER BY h.log_id`,
    [keys],
  );
  if (rows.length === 0) return;
  const logs = rows.map((row) => row.log_id);
  await query(
    client,
    WHAT,
    "INSERT INTO writ_audit_log_state (log_id, size, frontier) SELECT log_id, 0, '[]' FROM unnest($1::text[]) AS l (log_id) ON CONFLICT (log_id) DO NOTHING",
    [logs],
  );
  await query(client, WHAT, "SELECT log_id FROM writ_audit_log_state WHERE log_id = ANY($1::text[]) ORDER BY log_id FOR UPDATE", [logs]);
}

/**
 * The removed records leave the pending set (a record never logged never will be) and the outside candidates; each log
 * that held some of them gets a prune note listing their positions, itself pending in that log.
 */
async function noteRemoved(
  client: pg.PoolClient,
  removed: readonly { readonly kind: string; readonly ref: string }[],
  now: number,
): Promise<void> {
  const what = "noting pruned audit records in the record log";
  const { rows } = await query<{ log_id: string; position: string }>(
    client,
    what,
    `WITH r AS (SELECT * FROM unnest($1::text[], $2::text[]) AS r (kind, ref)),
       unpended AS (DELETE FROM ${PENDING} p USING r WHERE p.kind = r.kind AND p.ref = r.ref),
       dropped AS (DELETE FROM ${OUTSIDE_TABLE} o USING r WHERE o.kind = r.kind AND o.ref = r.ref)
     SELECT e.log_id, e.position FROM r
     CROSS JOIN LATERAL (SELECT log_id, position FROM writ_audit_log_entries WHERE kind = r.kind AND ref = r.ref OFFSET 0) AS e
     ORDER BY e.log_id, e.position`,
    [removed.map((r) => r.kind), removed.map((r) => r.ref)],
  );
  const byLog = new Map<string, number[]>();
  for (const row of rows) byLog.set(row.log_id, [...(byLog.get(row.log_id) ?? []), Number(row.position)]);
  for (const [logId, positions] of byLog) {
    const body = JSON.stringify({ positions, reason: "retention" });
    await query(
      client,
      what,
      `WITH note AS (INSERT INTO writ_audit_log_prunes (recorded_at, body) VALUES ($1, $2) RETURNING seq)
       INSERT INTO ${PENDING} (log_id, kind, ref, leaf, pended_at) SELECT $3, 'prune', seq::text, $4, $1 FROM note`,
      [now, body, logId, Buffer.from(entryLeafHash({ kind: "prune", record: body }))],
    );
  }
}
