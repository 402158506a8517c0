/**
 * The reads of the record log an export makes (log-storage.ts `ExportReads`), on one database handle: the pool of
 * PostgresLogStorage for the routes that read the log, or the one connection an export holds for its whole length
 * (record-log-storage.ts `exportSession`). Tables: record-log-storage.ts.
 */
import type { PostgresRecordTemplates } from "./record-templates.js";
import { isLogEntryKind, type IndexedFields, type LogEntryKind, type SignedCheckpoint } from "@writ/runtime";
import { LOG_PENDING_TABLE } from "./tables.js";
import type pg from "pg";
import type { ExportReads, LogCounts, StoredEntry, UnloggedRecord } from "../../audit/record-log/log-storage.js";
import { OUTSIDE_TABLE } from "./outside-log.js";
import { query } from "./connection/query.js";
import { TRANSITION_KINDS, recordBody, transitionRecord } from "./stored-records.js";

const PENDING = LOG_PENDING_TABLE;

/** Rows read at a time by the export and by `adoptUnlogged`. */
export const PAGE = 1_000;

/**
 * A candidate of `writ_audit_log_outside` with its record: `body` null when the record is not stored any more;
 * `outside` whether it is still in no log and not pending.
 */
export interface Candidate {
  readonly kind: LogEntryKind;
  readonly ref: string;
  readonly body: string | null;
  readonly outside: boolean;
}

export class PostgresLogReads implements ExportReads {
  readonly #db: pg.Pool | pg.PoolClient;
  readonly #templates: PostgresRecordTemplates | null;

  /** `templates`: what coded decision records are read with (record-templates.ts); null: every body is JSON. */
  constructor(db: pg.Pool | pg.PoolClient, templates: PostgresRecordTemplates | null = null) {
    this.#db = db;
    this.#templates = templates;
  }

  async counts(logId: string): Promise<LogCounts | null> {
    const { rows } = await query<{ size: string | null; pending: string; latest: string | null }>(
      this.#db,
      "reading the audit record log",
      `SELECT s.size, (SELECT count(*) FROM ${PENDING} WHERE log_id = $1) AS pending, c.body AS latest
       FROM (SELECT $1::text AS log_id) AS l
       LEFT JOIN writ_audit_log_state s ON s.log_id = l.log_id
       LEFT JOIN writ_audit_log_checkpoints c ON c.log_id = l.log_id AND c.size = s.latest_size`,
      [logId],
    );
    const row = rows[0]!;
    if (row.size === null && row.pending === "0") return null;
    return {
      size: Number(row.size ?? 0),
      pending: Number(row.pending),
      latest: row.latest === null ? null : (JSON.parse(row.latest) as SignedCheckpoint),
    };
  }

  async checkpoints(logId: string, from: number, limit: number): Promise<SignedCheckpoint[]> {
    const { rows } = await query<{ body: string }>(
      this.#db,
      "reading the audit record log",
      "SELECT body FROM writ_audit_log_checkpoints WHERE log_id = $1 AND size >= $2 ORDER BY size LIMIT $3",
      [logId, from, limit],
    );
    return rows.map((r) => JSON.parse(r.body) as SignedCheckpoint);
  }

  checkpointAt(logId: string, size: number): Promise<SignedCheckpoint | null> {
    return checkpointAt(this.#db, logId, size);
  }

  async *entries(logId: string, from: number, to: number): AsyncGenerator<StoredEntry> {
    for (let start = from; start < to; start += PAGE) {
      const { rows } = await query<{
        position: string;
        kind: string;
        leaf: Buffer;
        body: string | null;
        indexed: IndexedFields | null;
        columns: IndexedFields | null;
      }>(
        this.#db,
        "exporting the audit record log",
        `SELECT e.position, e.kind, e.leaf,
           CASE WHEN e.kind IN (${TRANSITION_KINDS}) THEN r.body ELSE ${recordBody("e")} END AS body, r.indexed, r.columns
         FROM writ_audit_log_entries e LEFT JOIN LATERAL (${transitionRecord("e")}) AS r ON TRUE
         WHERE e.log_id = $1 AND e.position >= $2 AND e.position < $3
         ORDER BY e.position`,
        [logId, start, Math.min(start + PAGE, to)],
      );
      // Each record decoded as it is yielded, not the page at once: the export's slices (slices.ts) bound the work per turn.
      const templates = this.#templates;
      await templates?.load(
        rows.map((row) => row.body),
        this.#db,
      );
      for (const row of rows) {
        if (!isLogEntryKind(row.kind))
          throw new Error(`the record log's entry ${row.position} has kind \`${row.kind}\`: its database is damaged`);
        const record = templates === null ? row.body : templates.text(row.body);
        const indexed = row.columns === null ? row.indexed : disagreeing(row.columns, record);
        const entry = { position: Number(row.position), kind: row.kind, leaf: row.leaf, record };
        yield indexed === null ? entry : { ...entry, indexed };
      }
    }
  }

  /** The candidates of `writ_audit_log_outside` that are still outside every log, in pages: what was stored around it. */
  async *unlogged(): AsyncGenerator<UnloggedRecord> {
    for (let after: Candidate | null = null; ;) {
      const page: Candidate[] = await candidates(
        this.#db,
        this.#templates,
        `SELECT kind, ref FROM ${OUTSIDE_TABLE} WHERE (kind, ref) > ($1, $2) ORDER BY kind, ref LIMIT ${PAGE}`,
        [after?.kind ?? "", after?.ref ?? ""],
      );
      for (const row of page) if (row.outside && row.body !== null) yield { kind: row.kind, record: row.body };
      if (page.length < PAGE) return;
      after = page[page.length - 1]!;
    }
  }
}

/**
 * The candidates `page` (a statement over `writ_audit_log_outside` giving `kind, ref`, in their order) with their
 * records, each re-checked against the log's entries and pending set: one probe of each per candidate.
 */
export async function candidates(
  db: pg.Pool | pg.PoolClient,
  templates: PostgresRecordTemplates | null,
  page: string,
  values: readonly unknown[],
): Promise<Candidate[]> {
  const { rows } = await query<Candidate>(
    db,
    "reading unlogged audit records",
    `WITH o AS (${page})
     SELECT o.kind, o.ref, ${recordBody("o")} AS body,
       NOT EXISTS (SELECT 1 FROM writ_audit_log_entries e WHERE e.kind = o.kind AND e.ref = o.ref)
         AND NOT EXISTS (SELECT 1 FROM ${PENDING} p WHERE p.kind = o.kind AND p.ref = o.ref) AS outside
     FROM o
     ORDER BY o.kind, o.ref`,
    values,
  );
  const bodies = await decodedBodies(templates, rows, db);
  return rows.map((row, i) => ({ ...row, body: bodies[i]! }));
}

/** The JSON texts of rows' bodies: coded decisions decoded (a body that does not decode is answered as stored). */
async function decodedBodies(
  templates: PostgresRecordTemplates | null,
  rows: readonly { readonly body: string | null }[],
  db: pg.Pool | pg.PoolClient,
): Promise<(string | null)[]> {
  return templates === null
    ? rows.map((row) => row.body)
    : templates.texts(
        rows.map((row) => row.body),
        db,
      );
}

/**
 * The columns a coded decision is kept with (`status`, `policy_id`) when they are not what its decoded record states,
 * else null: what `transitionRecord` answers for a JSON body in SQL. A record that does not parse is the verifier's to
 * report (its leaf will not match).
 */
function disagreeing(columns: IndexedFields, record: string | null): IndexedFields | null {
  try {
    const body = JSON.parse(record ?? "null") as { status?: unknown; attestation?: { policyId?: unknown } } | null;
    return columns.status === (body?.status ?? null) && columns.policyId === (body?.attestation?.policyId ?? null) ? null : columns;
  } catch {
    return null;
  }
}

export async function checkpointAt(db: pg.Pool | pg.PoolClient, logId: string, size: number): Promise<SignedCheckpoint | null> {
  const { rows } = await query<{ body: string }>(
    db,
    "reading the audit record log",
    "SELECT body FROM writ_audit_log_checkpoints WHERE log_id = $1 AND size = $2",
    [logId, size],
  );
  return rows[0] === undefined ? null : (JSON.parse(rows[0].body) as SignedCheckpoint);
}
