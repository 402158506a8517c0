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
} from "@writ/runtime/replay-store";
import { BatchDeadlineExceeded, Batcher } from "./batcher.js";
import { COLUMNS, EXPIRED, UPSERT_SET, entryOf, keyOf, type Row } from "./replay-rows.js";
import { ReplayStatements, claimValues, type Claim, type RecordKeeping } from "./replay-statements.js";
import { REPLAY_TABLE } from "./tables.js";
import {
  ReplayStoreClosedError,
  StoreUnavailableError,
  type TransitionRecord,
  type ConsumeOptions,
  type ReplayEntry,
  type ReplayResult,
  type ReplayState,
  type ReplayStore,
  type ReserveOptions,
  type ResolveOverrideOptions,
} from "@writ/runtime";

export interface PostgresReplayStoreOptions extends RecordKeeping {
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

/** The server refused a statement for the data in it (SQLSTATE class 22, data exception, or 23, integrity constraint). */
function isDataError(error: unknown): boolean {
  const code = (error as { cause?: { code?: unknown } }).cause?.code;
  return typeof code === "string" && (code.startsWith("22") || code.startsWith("23"));
}

export class PostgresReplayStore implements ReplayStore {
  readonly #pool: pg.Pool;
  readonly #statements: ReplayStatements;
  readonly #claims: Batcher<Claim, Row | undefined | Error>;
  readonly #named: boolean;
  #closed = false;

  /** Uses `pool` (the caller owns it: `close()` does not end it), on a database the sidecar's migrations made (migrations.ts). */
  constructor(pool: pg.Pool, options: PostgresReplayStoreOptions = {}) {
    this.#pool = pool;
    this.#named = options.namedStatements ?? true;
    this.#statements = new ReplayStatements(options);
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
   * the table holds (the EXPLAIN test in the sidecar's storage/postgres/sweep.test.ts).
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
      record: this.#statements.recordRow(record),
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
      const { rows } = await this.#query(this.#statements.claimStatement(claims.some((c) => c.record !== null)), claimValues(claims));
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
      this.#statements.withRecord(
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
      this.#statements.withRecord(
        `UPDATE ${REPLAY_TABLE} AS r SET ${sets.join(", ")}
       WHERE r.fingerprint = $1 AND r.token = $2 AND r.state = ANY($6::text[]) AND NOT ${EXPIRED("r", "$3")}
       RETURNING ${COLUMNS}`,
        this.#statements.recordRow(record),
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
