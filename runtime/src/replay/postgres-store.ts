/**
 * The replay store on PostgreSQL (issue 13, first step): one table that every sidecar of a fleet shares, so an
 * executionId is consumed once per application, not once per host.
 *
 * ATOMICITY. Every transition is ONE conditional SQL statement, committed on its own (autocommit) before the promise
 * resolves: an `INSERT … ON CONFLICT DO UPDATE … WHERE <the fingerprint is free>` for `reserve` and `consume`, an
 * `UPDATE … WHERE token = … AND state = ANY(…) AND <not expired>` for the token-gated transitions, a conditional
 * `DELETE` for `expire` and `sweep`. PostgreSQL locks the row for the statement, so of racing writers exactly one
 * succeeds, whichever sidecar they run in; no caller reads, decides in JavaScript and writes back. The conditions are
 * lifecycle.ts's, written in SQL; `decide*` stays the reference (the contract suite runs against both).
 * A refusal is classified afterwards by reading the row (`not_found`, `token_mismatch`, `wrong_state`, or the
 * `conflict` entry): that read changes nothing, and the refusal stands whatever it finds.
 *
 * DURABILITY. Autocommit statements resolve after COMMIT, which PostgreSQL acknowledges once the WAL is flushed
 * (`synchronous_commit` on, its default: never set it off for this database). A connection lost before the answer
 * arrives rejects: the caller answers 503, never 200.
 *
 * RECORDS. A transition's record (`ConsumeOptions.record`, `ResolveOverrideOptions.record`: the decision, override or
 * confirmation, records.ts) is inserted into the records table BY THE SAME STATEMENT, a data-modifying CTE that inserts
 * a row for each row the transition returned: the record commits exactly when the transition does, and a refused
 * transition inserts nothing (INVARIANT (a transition is kept with its record)). The records table is the audit
 * trail's: `(execution_fp, kind)` is its key, one decision, override and confirmation per execution.
 *
 * The fingerprint is the key, as its UTF-8 bytes (`keyOf`). Times are bigint Unix milliseconds; `context` and `resolution` are JSON text (`text`, not `jsonb`, which would
 * reorder keys and rewrite numbers of a signed attestation held in a pending context).
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { executionFingerprint } from "../attest/attestation.js";
import { ReplayStoreClosedError, StoreUnavailableError } from "./errors.js";
import {
  checkApproved,
  checkFailedTtl,
  checkFingerprint,
  checkNow,
  checkReserveTtl,
  checkToken,
  isExpired,
  normalizeContext,
  parseStoredEntry,
} from "./lifecycle.js";
import type { TransitionRecord } from "./records.js";
import type { ConsumeOptions, ReplayEntry, ReplayResult, ReplayState, ReplayStore, ReserveOptions, ResolveOverrideOptions } from "./store.js";

export const DEFAULT_REPLAY_TABLE = "writ_replay";
export const DEFAULT_RECORDS_TABLE = "writ_audit_records";

export interface PostgresReplayStoreOptions {
  /** Table name (lowercase letters, digits, `_`); default `writ_replay`. */
  readonly table?: string;
  /** The records table (same rule); default `writ_audit_records`; null: records are not kept. */
  readonly recordsTable?: string | null;
}

function identifier(name: string, what: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new RangeError(`${what} must be a lowercase SQL identifier, not \`${name}\``);
  return name;
}

/**
 * The statements that create the store's tables and indexes, idempotent (IF NOT EXISTS), for a migration to run in
 * one transaction: the replay table, and the records table with the audit trail's indexes (oldest first by time,
 * and by policy or status for the decision filters).
 */
export function replaySchema(options: PostgresReplayStoreOptions = {}): string[] {
  const table = identifier(options.table ?? DEFAULT_REPLAY_TABLE, "table");
  const statements = [
    `CREATE TABLE IF NOT EXISTS ${table} (
      fingerprint bytea PRIMARY KEY,
      state text NOT NULL CHECK (state IN ('reserved', 'executing', 'consumed', 'failed', 'pending_override', 'rejected')),
      token text NOT NULL,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      expires_at bigint,
      context text,
      resolution text
    )`,
    `CREATE INDEX IF NOT EXISTS ${table}_expiring ON ${table} (expires_at) WHERE expires_at IS NOT NULL`,
  ];
  const recordsOption = options.recordsTable === undefined ? DEFAULT_RECORDS_TABLE : options.recordsTable;
  if (recordsOption === null) return statements;
  const records = identifier(recordsOption, "recordsTable");
  return [
    ...statements,
    `CREATE TABLE IF NOT EXISTS ${records} (
      execution_fp text COLLATE "C" NOT NULL,
      kind text NOT NULL CHECK (kind IN ('decision', 'override', 'confirmation')),
      recorded_at bigint NOT NULL,
      policy_id text,
      status text,
      body text NOT NULL,
      PRIMARY KEY (execution_fp, kind)
    )`,
    `CREATE INDEX IF NOT EXISTS ${records}_decisions ON ${records} (recorded_at, execution_fp) WHERE kind = 'decision'`,
    `CREATE INDEX IF NOT EXISTS ${records}_by_policy ON ${records} (policy_id, recorded_at, execution_fp) WHERE kind = 'decision'`,
    `CREATE INDEX IF NOT EXISTS ${records}_by_status ON ${records} (status, recorded_at, execution_fp) WHERE kind = 'decision'`,
  ];
}

interface Row {
  readonly fingerprint: Buffer;
  readonly state: string;
  readonly token: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly expires_at: string | null;
  readonly context: string | null;
  readonly resolution: string | null;
}

/** A `reserved` or `failed` row whose TTL has passed at `$now` counts as absent (lifecycle.ts `isExpired`). */
const EXPIRED = (row: string, now: string) => `(${row}.state IN ('reserved', 'failed') AND ${row}.expires_at IS NOT NULL AND ${now} >= ${row}.expires_at)`;

export class PostgresReplayStore implements ReplayStore {
  readonly #pool: pg.Pool;
  readonly #table: string;
  readonly #records: string | null;
  #closed = false;

  /** Uses `pool` (the caller owns it: `close()` does not end it). Run `migrate` (or `replaySchema`) once before use. */
  constructor(pool: pg.Pool, options: PostgresReplayStoreOptions = {}) {
    this.#pool = pool;
    this.#table = identifier(options.table ?? DEFAULT_REPLAY_TABLE, "table");
    const records = options.recordsTable === undefined ? DEFAULT_RECORDS_TABLE : options.recordsTable;
    this.#records = records === null ? null : identifier(records, "recordsTable");
  }

  /**
   * Creates the store's tables if they do not exist (`replaySchema`), in one transaction under an advisory lock: safe
   * from several processes at once. The sidecar runs the same statements within its versioned migrations instead.
   */
  static async migrate(pool: pg.Pool, options: PostgresReplayStoreOptions = {}): Promise<void> {
    const statements = replaySchema(options);
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      // One migration at a time across the fleet: CREATE TABLE IF NOT EXISTS alone can still race on the catalog.
      await client.query("SELECT pg_advisory_xact_lock(hashtext('writ.migrate'))");
      for (const statement of statements) await client.query(statement);
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async reserve(fingerprint: string, options: ReserveOptions = {}): Promise<ReplayResult> {
    const fp = checkFingerprint(fingerprint);
    const ttlMs = checkReserveTtl(options.ttlMs);
    const now = checkNow(options.now);
    return this.#claim(fp, "reserved", randomUUID(), now, now + ttlMs, undefined, undefined);
  }

  async consume(fingerprint: string, options: ConsumeOptions = {}): Promise<ReplayResult> {
    const fp = checkFingerprint(fingerprint);
    const now = checkNow(options.now);
    const context = options.context === undefined ? undefined : normalizeContext(options.context);
    return this.#claim(fp, context === undefined ? "consumed" : "pending_override", randomUUID(), now, null, context, options.record);
  }

  async startExecution(fingerprint: string, token: string, now?: number): Promise<ReplayResult> {
    return this.#gated(checkFingerprint(fingerprint), checkToken(token), checkNow(now), ["reserved"], { state: "executing", expiresAt: null });
  }

  async confirm(fingerprint: string, token: string, now?: number): Promise<ReplayResult> {
    return this.#gated(checkFingerprint(fingerprint), checkToken(token), checkNow(now), ["reserved", "executing"], { state: "consumed", expiresAt: null });
  }

  async fail(fingerprint: string, token: string, options: { readonly ttlMs?: number; readonly now?: number } = {}): Promise<ReplayResult> {
    const fp = checkFingerprint(fingerprint);
    const tok = checkToken(token);
    const ttlMs = checkFailedTtl(options.ttlMs);
    const now = checkNow(options.now);
    return this.#gated(fp, tok, now, ["reserved", "executing"], { state: "failed", expiresAt: now + ttlMs });
  }

  async markPendingOverride(fingerprint: string, token: string, context: unknown, now?: number): Promise<ReplayResult> {
    const fp = checkFingerprint(fingerprint);
    const tok = checkToken(token);
    const at = checkNow(now);
    return this.#gated(fp, tok, at, ["reserved", "executing"], { state: "pending_override", expiresAt: null, context: normalizeContext(context) });
  }

  async resolveOverride(fingerprint: string, token: string, approved: boolean, options: ResolveOverrideOptions = {}): Promise<ReplayResult> {
    const fp = checkFingerprint(fingerprint);
    const tok = checkToken(token);
    const ok = checkApproved(approved);
    const at = checkNow(options.now);
    const resolution = normalizeContext(options.resolution);
    return this.#gated(fp, tok, at, ["pending_override"], { state: ok ? "consumed" : "rejected", expiresAt: null, resolution }, options.record);
  }

  async expire(fingerprint: string, now?: number): Promise<boolean> {
    const fp = checkFingerprint(fingerprint);
    const at = checkNow(now);
    const { rowCount } = await this.#query(`DELETE FROM ${this.#table} AS r WHERE r.fingerprint = $1 AND ${EXPIRED("r", "$2")}`, [keyOf(fp), at]);
    return (rowCount ?? 0) > 0;
  }

  async sweep(now?: number): Promise<number> {
    const at = checkNow(now);
    const { rowCount } = await this.#query(`DELETE FROM ${this.#table} AS r WHERE ${EXPIRED("r", "$1")}`, [at]);
    return rowCount ?? 0;
  }

  async read(fingerprint: string): Promise<ReplayEntry | null> {
    const fp = checkFingerprint(fingerprint);
    const { rows } = await this.#query(`SELECT * FROM ${this.#table} WHERE fingerprint = $1`, [keyOf(fp)]);
    return rows[0] === undefined ? null : entryOf(rows[0]);
  }

  /** Stops using the pool; the pool's owner ends it. */
  async close(): Promise<void> {
    this.#closed = true;
  }

  /** (none) or an expired reservation/failure -> `state`, in one conditional upsert; `conflict` otherwise. */
  async #claim(
    fp: string,
    state: ReplayState,
    token: string,
    now: number,
    expiresAt: number | null,
    context: unknown,
    record: TransitionRecord | undefined,
  ): Promise<ReplayResult> {
    const contextText = context === undefined ? null : JSON.stringify(context);
    const values: unknown[] = [keyOf(fp), state, token, now, expiresAt, contextText];
    const { rows } = await this.#query(
      this.#withRecord(
        `INSERT INTO ${this.#table} AS r (fingerprint, state, token, created_at, updated_at, expires_at, context, resolution)
       VALUES ($1, $2, $3, $4, $4, $5, $6, NULL)
       ON CONFLICT (fingerprint) DO UPDATE SET state = EXCLUDED.state, token = EXCLUDED.token, created_at = EXCLUDED.created_at,
         updated_at = EXCLUDED.updated_at, expires_at = EXCLUDED.expires_at, context = EXCLUDED.context, resolution = NULL
       WHERE ${EXPIRED("r", "$4")}
       RETURNING *`,
        record,
        values,
      ),
      values,
    );
    if (rows[0] !== undefined) return { ok: true, entry: entryOf(rows[0]) };
    const current = await this.read(fp);
    return current === null ? { ok: false, reason: "conflict" } : { ok: false, reason: "conflict", entry: current };
  }

  /** A token-gated transition from one of `from`, in one conditional UPDATE; the refusal is classified after. */
  async #gated(
    fp: string,
    token: string,
    now: number,
    from: readonly ReplayState[],
    change: { readonly state: ReplayState; readonly expiresAt: number | null; readonly context?: unknown; readonly resolution?: unknown },
    record?: TransitionRecord,
  ): Promise<ReplayResult> {
    const sets = ["state = $4", "updated_at = $3", "expires_at = $5"];
    const values: unknown[] = [keyOf(fp), token, now, change.state, change.expiresAt, from];
    if ("context" in change) {
      values.push(change.context === undefined ? null : JSON.stringify(change.context));
      sets.push(`context = $${values.length}`);
    }
    if ("resolution" in change) {
      values.push(change.resolution === undefined ? null : JSON.stringify(change.resolution));
      sets.push(`resolution = $${values.length}`);
    }
    const { rows } = await this.#query(
      this.#withRecord(
        `UPDATE ${this.#table} AS r SET ${sets.join(", ")}
       WHERE r.fingerprint = $1 AND r.token = $2 AND r.state = ANY($6::text[]) AND NOT ${EXPIRED("r", "$3")}
       RETURNING *`,
        record,
        values,
      ),
      values,
    );
    if (rows[0] !== undefined) return { ok: true, entry: entryOf(rows[0]) };
    const current = await this.read(fp);
    if (current === null || isExpired(current, now)) return { ok: false, reason: "not_found" };
    if (current.token !== token) return { ok: false, reason: "token_mismatch", entry: current };
    return { ok: false, reason: "wrong_state", entry: current };
  }

  /**
   * `transition` (a statement ending in `RETURNING *`) with `record` inserted by the same statement for each row it
   * returns: a data-modifying CTE, so both commit together or not at all. Appends the record's values to `values`.
   */
  #withRecord(transition: string, record: TransitionRecord | undefined, values: unknown[]): string {
    if (record === undefined || this.#records === null) return transition;
    const { body } = record;
    const decision = record.kind === "decision" ? record.body : null;
    const first = values.length + 1;
    values.push(
      executionFingerprint(body.executionId),
      record.kind,
      Date.parse(body.recordedAt),
      decision?.attestation.policyId ?? null,
      decision?.status ?? null,
      JSON.stringify(body),
    );
    const params = Array.from({ length: 6 }, (_, i) => `$${first + i}`);
    return `WITH transitioned AS (${transition}),
      recorded AS (
        INSERT INTO ${this.#records} (execution_fp, kind, recorded_at, policy_id, status, body)
        SELECT ${params[0]}, ${params[1]}, ${params[2]}::bigint, ${params[3]}, ${params[4]}, ${params[5]} FROM transitioned
      )
      SELECT * FROM transitioned`;
  }

  /** Every statement: refused once closed; a database failure is StoreUnavailableError (503 at the HTTP edge). */
  async #query(text: string, values: readonly unknown[]): Promise<pg.QueryResult<Row>> {
    if (this.#closed) throw new ReplayStoreClosedError();
    try {
      return await this.#pool.query<Row>(text, values as unknown[]);
    } catch (error) {
      throw new StoreUnavailableError(`replay database failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
}

/**
 * The key of a fingerprint: its UTF-8 bytes, as `bytea`. A `text` column cannot hold U+0000, which a fingerprint may
 * contain (lifecycle.ts accepts any string up to MAX_FINGERPRINT_BYTES); LMDB keys are the same UTF-8 bytes.
 */
function keyOf(fingerprint: string): Buffer {
  return Buffer.from(fingerprint, "utf8");
}

function entryOf(row: Row): ReplayEntry {
  const fingerprint = row.fingerprint.toString("utf8");
  return parseStoredEntry(
    {
      fingerprint,
      state: row.state,
      token: row.token,
      createdAt: Number(row.created_at),
      updatedAt: Number(row.updated_at),
      expiresAt: row.expires_at === null ? null : Number(row.expires_at),
      ...(row.context === null ? {} : { context: JSON.parse(row.context) as unknown }),
      ...(row.resolution === null ? {} : { resolution: JSON.parse(row.resolution) as unknown }),
    },
    fingerprint,
  );
}
