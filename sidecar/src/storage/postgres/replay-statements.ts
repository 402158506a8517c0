/**
 * The replay store's statements that carry a transition's record (replay-store.ts, RECORDS): the transition's own
 * statement inserts the record, and its row in the record log's pending set, for each row the transition returned, so
 * the three commit together or not at all. Also the claims a batch sends as one statement, and their parameters.
 */
import { recordFingerprint, recordJson } from "@writ/runtime/replay-store";
import { LOG_ID_PATTERN, entryLeafHash, type ReplayState, type TransitionRecord } from "@writ/runtime";
import { shapeOf } from "../../audit/record-coding.js";
import type { PostgresRecordTemplates } from "./record-templates.js";
import { COLUMNS, EXPIRED, UPSERT_SET } from "./replay-rows.js";
import { LOG_PENDING_TABLE, RECORDS_TABLE, REPLAY_TABLE } from "./tables.js";

/** A `reserve` or `consume`, waiting for its statement (replay-store.ts `#claimAll`). */
export interface Claim {
  readonly key: Buffer;
  readonly state: ReplayState;
  readonly token: string;
  readonly now: number;
  readonly expiresAt: number | null;
  /** JSON text. */
  readonly context: string | null;
  readonly record: RecordRow | null;
}

/** A transition record as the records table's columns. */
export interface RecordRow {
  readonly executionFp: string;
  readonly kind: TransitionRecord["kind"];
  readonly recordedAt: number;
  readonly policyId: string | null;
  readonly status: string | null;
  /** JSON text, or its coding against its shape's template. */
  readonly body: string;
  /** The record's leaf hash in the record log; null when records are not logged. */
  readonly leaf: Buffer | null;
}

/** The parameters of a claim statement: one array per column, the records' keyed by the claim's token. */
export function claimValues(claims: readonly Claim[]): unknown[][] {
  const values: unknown[][] = Array.from({ length: 14 }, () => []);
  for (const c of claims) {
    values[0]!.push(c.key);
    values[1]!.push(c.state);
    values[2]!.push(c.token);
    values[3]!.push(c.now);
    values[4]!.push(c.expiresAt);
    values[5]!.push(c.context);
    if (c.record === null) continue;
    values[6]!.push(c.token);
    values[7]!.push(c.record.executionFp);
    values[8]!.push(c.record.kind);
    values[9]!.push(c.record.recordedAt);
    values[10]!.push(c.record.policyId);
    values[11]!.push(c.record.status);
    values[12]!.push(c.record.body);
    values[13]!.push(c.record.leaf);
  }
  return values[6]!.length === 0 ? values.slice(0, 6) : values;
}

/** What a store keeps of its transitions' records (PostgresReplayStoreOptions). */
export interface RecordKeeping {
  /** Whether transition records are kept in RECORDS_TABLE (default true); false: the audit trail is off. */
  readonly keepRecords?: boolean;
  /**
   * The sidecar's tamper-evident record log (the sidecar's docs/audit.md, "Serving the log"): each record also enters the
   * log's pending set, BY THE SAME STATEMENT, as a row `(log_id, kind, ref, leaf, pended_at)` of LOG_PENDING_TABLE:
   * `logId`, the record's kind, its
   * execution fingerprint, its leaf hash (audit-log/entry.ts `entryLeafHash` of the record's JSON text, which is what
   * the inserted body reads back as, coded or not) and its time. Absent or null: records are not logged. Needs the
   * records table.
   */
  readonly recordLog?: { readonly logId: string } | null;
  /**
   * The templates decision records are coded against (record-templates.ts, docs/audit.md "Coded decision records"):
   * a decision's body is inserted coded once its shape has a template. Absent or null: bodies are JSON.
   */
  readonly templates?: PostgresRecordTemplates | null;
}

export class ReplayStatements {
  readonly #records: string | null;
  readonly #templates: PostgresRecordTemplates | null;
  /** The record log's pending table and this sidecar's log id; null: records are not logged. */
  readonly #log: { readonly pending: string; readonly logId: string } | null;

  /** @throws RangeError for a record log without records, or a log id the statements cannot hold */
  constructor(options: RecordKeeping) {
    this.#records = options.keepRecords === false ? null : RECORDS_TABLE;
    this.#templates = options.templates ?? null;
    const log = options.recordLog ?? null;
    if (log !== null && this.#records === null)
      throw new RangeError("recordLog needs keepRecords: records that are not kept cannot be logged");
    // The log id goes into the statement text as a literal (it is fixed per store): the pattern admits no quote.
    if (log !== null && !LOG_ID_PATTERN.test(log.logId))
      throw new RangeError(`recordLog.logId \`${log.logId}\` does not match ${LOG_ID_PATTERN.source}`);
    this.#log = log === null ? null : { pending: LOG_PENDING_TABLE, logId: log.logId };
  }

  /**
   * The statement of a batch of claims (replay-store.ts `#claimAll`), its parameters `claimValues`: each claim's
   * conditional upsert, and with `withRecords`, the record of each claim that won.
   */
  claimStatement(withRecords: boolean): string {
    const transition = `WITH input AS (
        SELECT DISTINCT ON (fingerprint) * FROM unnest($1::bytea[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::text[])
          WITH ORDINALITY AS i (fingerprint, state, token, now, expires_at, context, ordinal)
        ORDER BY fingerprint, ordinal
      ),
      transitioned AS (
        INSERT INTO ${REPLAY_TABLE} AS r (fingerprint, state, token, created_at, updated_at, expires_at, context, resolution)
        SELECT fingerprint, state, token, now, now, expires_at, context, NULL FROM input
        ON CONFLICT (fingerprint) DO UPDATE SET ${UPSERT_SET}
        WHERE ${EXPIRED("r", "EXCLUDED.created_at")}
        RETURNING ${COLUMNS}
      )`;
    if (!withRecords || this.#records === null) return `${transition} SELECT ${COLUMNS} FROM transitioned`;
    return `${transition},
      records AS (
        SELECT c.* FROM transitioned t
        JOIN unnest($7::text[], $8::text[], $9::text[], $10::bigint[], $11::text[], $12::text[], $13::text[], $14::bytea[])
          AS c (token, execution_fp, kind, recorded_at, policy_id, status, body, leaf) ON c.token = t.token
      ),
      recorded AS (
        INSERT INTO ${this.#records} (execution_fp, kind, recorded_at, policy_id, status, body)
        SELECT execution_fp, kind, recorded_at, policy_id, status, body FROM records
      )${this.#logged("SELECT kind, execution_fp, leaf, recorded_at FROM records")}
      SELECT ${COLUMNS} FROM transitioned`;
  }

  /**
   * `transition` (a statement ending in `RETURNING` the entry's columns) with the record `row` inserted by the same
   * statement for each row it returns: a data-modifying CTE, so both commit together or not at all. Appends the
   * record's values to `values`.
   */
  withRecord(transition: string, row: RecordRow | null, values: unknown[]): string {
    if (row === null) return transition;
    const first = values.length + 1;
    values.push(row.executionFp, row.kind, row.recordedAt, row.policyId, row.status, row.body);
    if (this.#log !== null) values.push(row.leaf);
    const params = Array.from({ length: 7 }, (_, i) => `$${first + i}`);
    return `WITH transitioned AS (${transition}),
      recorded AS (
        INSERT INTO ${this.#records} (execution_fp, kind, recorded_at, policy_id, status, body)
        SELECT ${params[0]}, ${params[1]}, ${params[2]}::bigint, ${params[3]}, ${params[4]}, ${params[5]} FROM transitioned
      )${this.#logged(`SELECT ${params[1]}::text, ${params[0]}::text, ${params[6]}::bytea, ${params[2]}::bigint FROM transitioned`)}
      SELECT ${COLUMNS} FROM transitioned`;
  }

  /**
   * `, logged AS (INSERT INTO <pending> …)` inserting the rows `select` gives (kind, execution fingerprint, leaf, time) into
   * the record log's pending set under this sidecar's log id (a literal, checked in the constructor); nothing when
   * records are not logged.
   */
  #logged(select: string): string {
    if (this.#log === null) return "";
    return `,
      logged AS (
        INSERT INTO ${this.#log.pending} (kind, ref, leaf, pended_at, log_id)
        SELECT *, '${this.#log.logId}' FROM (${select}) AS r
      )`;
  }

  /** The records table's columns of `record`; null when there is none or the store keeps no records. */
  recordRow(record: TransitionRecord | undefined): RecordRow | null {
    if (record === undefined || this.#records === null) return null;
    const { body } = record;
    const text = recordJson(record);
    const decision = record.kind === "decision" ? record.body : null;
    const coded = decision === null ? null : (this.#templates?.encode(shapeOf(decision), text) ?? null);
    return {
      executionFp: recordFingerprint(record),
      kind: record.kind,
      recordedAt: Date.parse(body.recordedAt),
      policyId: decision?.attestation.policyId ?? null,
      status: decision?.status ?? null,
      body: coded ?? text,
      leaf: this.#log === null ? null : Buffer.from(entryLeafHash({ kind: record.kind, record: text })),
    };
  }
}
