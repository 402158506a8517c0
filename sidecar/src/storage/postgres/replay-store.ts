/**
 * The replay store on PostgreSQL (docs/replay.md, "PostgresReplayStore", with its statements): one table that every
 * sidecar of a fleet shares, so an executionId is consumed once per application, not once per host. ATOMICITY. Every transition is ONE conditional statement (or one row of a claim statement, batcher.ts), committed on
 * its own before the promise resolves: PostgreSQL locks the row for the statement, so of racing writers exactly one
 * succeeds, whichever sidecar they run in. The conditions are lifecycle.ts's in SQL; `decide*` stays the reference. A
 * refusal is classified afterwards by reading the row, which changes nothing. DURABILITY: COMMIT is acknowledged once
 * the WAL is flushed (`synchronous_commit` on: never set it off here); a connection lost before the answer is a 503.
 * RECORDS: a transition's record is inserted into the audit trail's records table BY THE SAME STATEMENT (a
 * data-modifying CTE), so it commits exactly when the transition does (INVARIANT (a transition is kept with its
 * record)). `context` and `resolution` are JSON `text`, not `jsonb`, which would rewrite a signed attestation.
 */
import { createHash, randomUUID } from "node:crypto";
import type pg from "pg";
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
  recordFingerprint,
  recordJson,
} from "@writ/runtime/replay-store";
import { BatchDeadlineExceeded, Batcher } from "./batcher.js";
import { shapeOf } from "../../audit/record-coding.js";
import type { PostgresRecordTemplates } from "./record-templates.js";
import { LOG_PENDING_TABLE, RECORDS_TABLE, REPLAY_TABLE } from "./tables.js";
import {
  LOG_ID_PATTERN,
  ReplayStoreClosedError,
  StoreUnavailableError,
  entryLeafHash,
  type TransitionRecord,
  type ConsumeOptions,
  type ReplayEntry,
  type ReplayResult,
  type ReplayState,
  type ReplayStore,
  type ReserveOptions,
  type ResolveOverrideOptions,
} from "@writ/runtime";

export interface PostgresReplayStoreOptions {
  /** Whether transition records are kept in RECORDS_TABLE (default true); false: the audit trail is off. */
  readonly keepRecords?: boolean;
  /**
   * How many claim statements (`reserve`, `consume`) may be under way at once; claims made meanwhile wait and go
   * together in the next statement (`#claimAll`). Default DEFAULT_CLAIM_STATEMENTS.
   */
  readonly claimStatements?: number;
  /**
   * The longest a `reserve` or `consume` waits for its answer, queued and then in its statement; past it the claim is
   * StoreUnavailableError (batcher.ts, DEADLINE). The sidecar sets the pool's client timeout (statement timeout + 1 s),
   * so a decision is answered within it even when it waited behind statements that hang. Default: none.
   */
  readonly claimDeadlineMs?: number;
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
  /** Whether statements are named prepared statements (`#query`); default true. */
  readonly namedStatements?: boolean;
}

/** Claim statements under way at once by default (docs/benchmarks.md, "Fleet"). */
export const DEFAULT_CLAIM_STATEMENTS = 4;
/** Expired rows `sweep` removes per statement at most: bounds one statement's time and the rows it locks. */
const SWEEP_BATCH = 500;
/** The advisory lock of a sweeping statement (`sweepRound`); the key is the same in every sidecar of a fleet. */
export const SWEEP_LOCK = "writ.replay.sweep";
/** Claims per statement at most: bounds one statement's size and time. */
const MAX_CLAIMS_PER_STATEMENT = 100;

/** A `reserve` or `consume`, waiting for its statement (`#claimAll`). */
interface Claim {
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
interface RecordRow {
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
function claimValues(claims: readonly Claim[]): unknown[][] {
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

/** The server refused a statement for the data in it (SQLSTATE class 22, data exception, or 23, integrity constraint). */
function isDataError(error: unknown): boolean {
  const code = (error as { cause?: { code?: unknown } }).cause?.code;
  return typeof code === "string" && (code.startsWith("22") || code.startsWith("23"));
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

/** The columns of an entry, named (never `*`: a prepared statement's result must not change with the table). */
const COLUMNS = "fingerprint, state, token, created_at, updated_at, expires_at, context, resolution";

/** A claim that takes over an expired row replaces all of it. */
const UPSERT_SET =
  "state = EXCLUDED.state, token = EXCLUDED.token, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at, expires_at = EXCLUDED.expires_at, context = EXCLUDED.context, resolution = NULL";

/** A `reserved` or `failed` row whose TTL has passed at `$now` counts as absent (lifecycle.ts `isExpired`). */
const EXPIRED = (row: string, now: string) =>
  `(${row}.state IN ('reserved', 'failed') AND ${row}.expires_at IS NOT NULL AND ${now} >= ${row}.expires_at)`;

export class PostgresReplayStore implements ReplayStore {
  readonly #pool: pg.Pool;
  readonly #records: string | null;
  readonly #templates: PostgresRecordTemplates | null;
  /** The record log's pending table and this sidecar's log id; null: records are not logged. */
  readonly #log: { readonly pending: string; readonly logId: string } | null;
  readonly #claims: Batcher<Claim, Row | undefined | Error>;
  readonly #named: boolean;
  #closed = false;

  /** Uses `pool` (the caller owns it: `close()` does not end it), on a database the sidecar's migrations made (migrations.ts). */
  constructor(pool: pg.Pool, options: PostgresReplayStoreOptions = {}) {
    this.#pool = pool;
    this.#named = options.namedStatements ?? true;
    this.#records = options.keepRecords === false ? null : RECORDS_TABLE;
    this.#templates = options.templates ?? null;
    const log = options.recordLog ?? null;
    if (log !== null && this.#records === null)
      throw new RangeError("recordLog needs keepRecords: records that are not kept cannot be logged");
    // The log id goes into the statement text as a literal (it is fixed per store): the pattern admits no quote.
    if (log !== null && !LOG_ID_PATTERN.test(log.logId))
      throw new RangeError(`recordLog.logId \`${log.logId}\` does not match ${LOG_ID_PATTERN.source}`);
    this.#log = log === null ? null : { pending: LOG_PENDING_TABLE, logId: log.logId };
    this.#claims = new Batcher((claims) => this.#claimAll(claims), {
      maxInFlight: options.claimStatements ?? DEFAULT_CLAIM_STATEMENTS,
      maxBatch: MAX_CLAIMS_PER_STATEMENT,
      ...(options.claimDeadlineMs === undefined ? {} : { deadlineMs: options.claimDeadlineMs }),
    });
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
    return this.#gated(checkFingerprint(fingerprint), checkToken(token), checkNow(now), ["reserved"], {
      state: "executing",
      expiresAt: null,
    });
  }

  async confirm(fingerprint: string, token: string, now?: number): Promise<ReplayResult> {
    return this.#gated(checkFingerprint(fingerprint), checkToken(token), checkNow(now), ["reserved", "executing"], {
      state: "consumed",
      expiresAt: null,
    });
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
    return this.#gated(fp, tok, at, ["reserved", "executing"], {
      state: "pending_override",
      expiresAt: null,
      context: normalizeContext(context),
    });
  }

  async resolveOverride(
    fingerprint: string,
    token: string,
    approved: boolean,
    options: ResolveOverrideOptions = {},
  ): Promise<ReplayResult> {
    const fp = checkFingerprint(fingerprint);
    const tok = checkToken(token);
    const ok = checkApproved(approved);
    const at = checkNow(options.now);
    const resolution = normalizeContext(options.resolution);
    return this.#gated(
      fp,
      tok,
      at,
      ["pending_override"],
      { state: ok ? "consumed" : "rejected", expiresAt: null, resolution },
      options.record,
    );
  }

  async expire(fingerprint: string, now?: number): Promise<boolean> {
    const fp = checkFingerprint(fingerprint);
    const at = checkNow(now);
    const { rowCount } = await this.#query(`DELETE FROM ${REPLAY_TABLE} AS r WHERE r.fingerprint = $1 AND ${EXPIRED("r", "$2")}`, [
      keyOf(fp),
      at,
    ]);
    return (rowCount ?? 0) > 0;
  }

  /** Removes what has expired (`sweepRound`, which stops early only when another sidecar of the fleet is sweeping). */
  async sweep(now?: number): Promise<number> {
    return (await this.sweepRound(now)) ?? 0;
  }

  /**
   * Removes what has expired, SWEEP_BATCH rows per statement, each statement on its own (autocommit), until one
   * removes fewer: no transaction, and no lock on a row, lasts longer than one batch. Each statement finds its batch
   * through the partial index `<table>_expiring` (an index scan in expiry order, the subquery) and removes it by
   * primary key (`= ANY(ARRAY(…))`: index lookups, never a join the planner could turn into a scan of the table),
   * checking each row again as it deletes it: a row taken over meanwhile stays. Its cost is what has expired, whatever
   * the table holds (the EXPLAIN test in the sidecar's postgres-sweep.test.ts).
   * One sweeping statement at a time across the fleet: each first takes the transaction-level advisory lock SWEEP_LOCK
   * and deletes nothing without it, and the round stops at the first that finds it held (another sidecar is sweeping:
   * it removes the rest). The lock lives exactly as long as its statement, on the server connection that ran it, so it
   * is never left behind on a connection, whichever a connection pooler hands out (PgBouncer in transaction mode).
   * @returns the number removed, or null when the first statement found the lock held elsewhere
   */
  async sweepRound(now?: number): Promise<number | null> {
    const at = checkNow(now);
    let removed = 0;
    for (;;) {
      const { rows } = await this.#query<{ held: boolean; removed: number }>(
        `WITH lock AS MATERIALIZED (SELECT pg_try_advisory_xact_lock(hashtext($2)) AS held),
         removed AS (
           DELETE FROM ${REPLAY_TABLE} AS r
           WHERE (SELECT held FROM lock) AND r.fingerprint = ANY(ARRAY(
             SELECT e.fingerprint FROM ${REPLAY_TABLE} AS e WHERE e.expires_at <= $1 AND e.state IN ('reserved', 'failed')
             ORDER BY e.expires_at LIMIT ${SWEEP_BATCH}
           ))
           AND ${EXPIRED("r", "$1")}
           RETURNING 1
         )
         SELECT (SELECT held FROM lock) AS held, (SELECT count(*) FROM removed)::int AS removed`,
        [at, SWEEP_LOCK],
      );
      const batch = rows[0]!;
      if (!batch.held) return removed === 0 ? null : removed;
      removed += batch.removed;
      if (batch.removed < SWEEP_BATCH) return removed;
    }
  }

  async read(fingerprint: string): Promise<ReplayEntry | null> {
    const fp = checkFingerprint(fingerprint);
    const { rows } = await this.#query(`SELECT ${COLUMNS} FROM ${REPLAY_TABLE} WHERE fingerprint = $1`, [keyOf(fp)]);
    return rows[0] === undefined ? null : entryOf(rows[0]);
  }

  /** Stops using the pool; the pool's owner ends it. */
  async close(): Promise<void> {
    this.#closed = true;
  }

  /**
   * (none) or an expired reservation/failure -> `state`, in one conditional upsert (batched with the claims submitted
   * meanwhile, `#claimAll`); `conflict` otherwise.
   */
  async #claim(
    fp: string,
    state: ReplayState,
    token: string,
    now: number,
    expiresAt: number | null,
    context: unknown,
    record: TransitionRecord | undefined,
  ): Promise<ReplayResult> {
    if (this.#closed) throw new ReplayStoreClosedError();
    const claim: Claim = {
      key: keyOf(fp),
      state,
      token,
      now,
      expiresAt,
      context: context === undefined ? null : JSON.stringify(context),
      record: this.#recordRow(record),
    };
    const row = await this.#claims.submit(claim).catch((error: unknown) => {
      if (!(error instanceof BatchDeadlineExceeded)) throw error;
      // The claim may still commit once the database answers: the 503 of any write whose outcome is unknown.
      throw new StoreUnavailableError(`deciding did not complete within ${error.deadlineMs} ms: the database does not answer`, {
        cause: error,
      });
    });
    if (row instanceof Error) throw row;
    if (row !== undefined) return { ok: true, entry: entryOf(row) };
    const current = await this.read(fp);
    return current === null ? { ok: false, reason: "conflict" } : { ok: false, reason: "conflict", entry: current };
  }

  /**
   * Claims as ONE statement: each a conditional upsert of its own row (INSERT … SELECT FROM unnest(…) ON CONFLICT DO
   * UPDATE … WHERE <expired>), each record inserted for the row its claim won, all committed together before any
   * answer. A claim won iff a returned row carries its token (tokens are random per claim). Two claims of one
   * fingerprint in one batch: the first submitted takes part (`DISTINCT ON`), the second is refused, as if it had
   * come after. Answers, per claim, the new row, `undefined` (refused), or the error that failed it.
   *
   * A batch refused by the server for one claim's data (SQLSTATE classes 22 and 23) is retried claim by claim, so one
   * bad claim fails alone; any other failure (the connection, a timeout) fails every claim of the batch.
   */
  async #claimAll(claims: readonly Claim[]): Promise<readonly (Row | undefined | Error)[]> {
    if (claims.length === 1) return [await this.#claimOne(claims[0]!)];
    try {
      const { rows } = await this.#query(this.#claimStatement(claims.some((c) => c.record !== null)), claimValues(claims));
      const won = new Map(rows.map((row) => [row.token, row]));
      return claims.map((c) => won.get(c.token));
    } catch (error) {
      if (!isDataError(error)) throw error;
      return Promise.all(claims.map((c) => this.#claimOne(c).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))))));
    }
  }

  /**
   * One claim alone: the same conditional upsert with its values as parameters (no arrays to build, send and unpack),
   * faster than a batch of one: the latency of a sidecar at low load (cost: docs/benchmarks.md, "Fleet").
   */
  async #claimOne(claim: Claim): Promise<Row | undefined> {
    const values: unknown[] = [claim.key, claim.state, claim.token, claim.now, claim.expiresAt, claim.context];
    const { rows } = await this.#query(
      this.#withRecord(
        `INSERT INTO ${REPLAY_TABLE} AS r (fingerprint, state, token, created_at, updated_at, expires_at, context, resolution)
         VALUES ($1, $2, $3, $4, $4, $5, $6, NULL)
         ON CONFLICT (fingerprint) DO UPDATE SET ${UPSERT_SET}
         WHERE ${EXPIRED("r", "$4")}
         RETURNING ${COLUMNS}`,
        claim.record,
        values,
      ),
      values,
    );
    return rows[0];
  }

  #claimStatement(withRecords: boolean): string {
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
        `UPDATE ${REPLAY_TABLE} AS r SET ${sets.join(", ")}
       WHERE r.fingerprint = $1 AND r.token = $2 AND r.state = ANY($6::text[]) AND NOT ${EXPIRED("r", "$3")}
       RETURNING ${COLUMNS}`,
        this.#recordRow(record),
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
   * `transition` (a statement ending in `RETURNING` the entry's columns) with the record `row` inserted by the same
   * statement for each row it returns: a data-modifying CTE, so both commit together or not at all. Appends the
   * record's values to `values`.
   */
  #withRecord(transition: string, row: RecordRow | null, values: unknown[]): string {
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
  #recordRow(record: TransitionRecord | undefined): RecordRow | null {
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

  /**
   * Every statement: refused once closed; a database failure is StoreUnavailableError (503 at the HTTP edge). Each
   * statement text is a named prepared statement, parsed and planned once per connection instead of once per call
   * (about a third of the database's CPU per transition, docs/benchmarks.md); unnamed, parsed and planned at each call,
   * with `namedStatements: false` (a connection pooler that hands a client's statements to server connections which
   * never prepared them: PgBouncer in transaction mode before 1.21).
   */
  async #query<R extends pg.QueryResultRow = Row>(text: string, values: readonly unknown[]): Promise<pg.QueryResult<R>> {
    if (this.#closed) throw new ReplayStoreClosedError();
    const name = this.#named ? statementName(text) : undefined;
    try {
      return await this.#pool.query<R>({ name, text, values: values as unknown[] });
    } catch (error) {
      throw new StoreUnavailableError(`replay database failed: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
  }
}

/** The name of each statement text prepared so far (a handful per table: one per transition shape). */
const STATEMENT_NAMES = new Map<string, string>();

/**
 * A prepared statement's name, derived from its text: stores of different tables on one pool (one connection) never
 * give one name to two texts, which the client refuses.
 */
function statementName(text: string): string {
  let name = STATEMENT_NAMES.get(text);
  if (name === undefined) {
    name = `writ_${createHash("sha256").update(text).digest("hex").slice(0, 32)}`;
    STATEMENT_NAMES.set(text, name);
  }
  return name;
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
