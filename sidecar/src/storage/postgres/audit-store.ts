/**
 * The audit trail's store on PostgreSQL (audit/audit-store.ts; docs/audit.md, "Storage (PostgreSQL)"), one trail for
 * every sidecar of a fleet: any sidecar reads the decisions made through any other, and `/audit/stats` counts the fleet.
 * Decisions, overrides and confirmations are inserted by the replay store in the statement of their transition
 * (replay-store.ts); this store reads them. Verifications and security events are inserted without the caller waiting,
 * each with its counter; `flushed()` waits for those queued so far. Order: newest first, then by execution fingerprint
 * (a "C" collation, the byte order of LMDB's keys) or insertion sequence. Health: failed from any failed statement of its own (a write, a read, the `probe`) until a statement STARTED after
 * that failure succeeds, never by one already under way. Retention: one sidecar at a time (trail-prune.ts); decision
 * counts: the record log's (decision-counts.ts). Reads that scan history go to the read database when there is one
 * (read-pool.ts): a failure there is the read's alone, a 503, and leaves the store's health as it is.
 */
import type { PostgresRecordTemplates } from "./record-templates.js";
import { entryLeafHash, executionFingerprint, type LogEntryKind } from "@writ/runtime";
import { LOG_PENDING_TABLE, RECORDS_TABLE } from "./tables.js";
import type pg from "pg";
import type { AuditStore, SecurityEventWrite, StoredCounts, TrailName, UnsavedCount } from "../../audit/audit-store.js";
import { decisionDetail, decisionRow } from "../../audit/decision-row.js";
import { DAY_MS, type RetentionLimit } from "../../audit/retention.js";
import { securityEventRow } from "../../audit/security-event.js";
import type {
  ConfirmationAudit,
  DecisionAudit,
  DecisionDetail,
  DecisionQuery,
  DecisionRow,
  OverrideAudit,
  SecurityEventInput,
  SecurityEventRow,
  SecurityQuery,
  VerificationAudit,
} from "../../audit/types.js";
import { COUNTED_DECISIONS, SCANNED_DECISIONS } from "./decision-counts.js";
import { query } from "./connection/query.js";
import { ON_READ_DATABASE } from "./connection/read-pool.js";
import type { PostgresLogStorage } from "./record-log-storage.js";
import { PRUNED_TRAILS, pruneTrail } from "./trail-prune.js";

export interface PostgresAuditStoreOptions {
  /** Told about each failure that makes the store unhealthy, for the operator's log. */
  readonly onError?: (error: unknown) => void;
  /** The record log's store (record-log-storage.ts); absent or null: records are not logged. */
  readonly logStorage?: PostgresLogStorage | null;
  /** The read database's pool (read-pool.ts), where the reads that scan history go; absent or null: `pool`. */
  readonly readPool?: pg.Pool | null;
  /** The templates coded decision records are read with (record-templates.ts); absent or null: every body is JSON. */
  readonly templates?: PostgresRecordTemplates | null;
}

/** A decision row with its override and confirmation, as one query returns them. */
interface DecisionJoin {
  readonly decision: string;
  readonly override: string | null;
  readonly confirmation: string | null;
}

export class PostgresAuditStore implements AuditStore {
  readonly logStorage: PostgresLogStorage | null;
  /** This sidecar's log id, with which its records enter the log's pending set; null when the log is off. */
  readonly #logId: string | null;
  readonly #pool: pg.Pool;
  readonly #readPool: pg.Pool | null;
  readonly #templates: PostgresRecordTemplates | null;
  readonly #onError: (error: unknown) => void;
  /** Inserts queued and not yet settled: `flushed()` waits for them. */
  readonly #pending = new Set<Promise<void>>();
  /**
   * The last security-event insert queued. Each starts after the one before it has settled, so events reach the table,
   * and take their `seq`, in the order they were recorded: `seq` orders one millisecond's events. Concurrent inserts on
   * several pooled connections would commit in any order. Security events are rare (SecurityEventLimiter), so one lane
   * costs nothing.
   */
  #securityLane: Promise<void> = Promise.resolve();
  /** Counts failed statements; a statement restores health only if none failed since it started. */
  #failures = 0;
  #failing = false;
  #closed = false;

  /** Uses `pool` (its owner ends it); the schema must be migrated (migrations.ts). */
  constructor(pool: pg.Pool, options: PostgresAuditStoreOptions = {}) {
    this.#pool = pool;
    this.#readPool = options.readPool ?? null;
    this.#templates = options.templates ?? null;
    this.#onError = options.onError ?? (() => undefined);
    this.logStorage = options.logStorage ?? null;
    this.#logId = this.logStorage?.logId ?? null;
  }

  healthy(): boolean {
    return !this.#failing;
  }

  /** The checkpointer tries its rounds whatever the health: a failed one counts as a failure like any statement's. */
  writable(): boolean {
    return true;
  }

  noteFailure(error: unknown): void {
    this.#noteFailure(error);
  }

  /** One `SELECT 1`: a database that cannot be reached makes the log unhealthy without any traffic. */
  async probe(): Promise<void> {
    await this.#run("probing the audit database", "SELECT 1").catch(() => undefined);
  }

  putVerification(record: VerificationAudit, at: number): void {
    const body = JSON.stringify(record);
    this.#queue(
      "recording a verification",
      `WITH recorded AS (INSERT INTO writ_audit_verifications (recorded_at, body) VALUES ($1, $2) RETURNING seq)${this.#logged("verification", "$1")}
       ${COUNT_INTO} VALUES ('verifications', 1), ('verifications_valid', $3) ${ADD_COUNT}`,
      [at, body, record.valid ? 1 : 0, ...this.#leaf("verification", body)],
    );
  }

  putSecurityEvents(take: () => readonly SecurityEventWrite[]): void {
    if (this.#closed) return;
    for (const { event, at, count } of take()) this.#insertSecurityEvent(event, at, count);
  }

  addApiCalls(unsaved: UnsavedCount): void {
    if (this.#closed) return;
    const delta = unsaved.take();
    if (delta === 0) return;
    this.#queue("counting API calls", `${COUNT_INTO} VALUES ('api_calls', $1) ${ADD_COUNT}`, [delta], () => unsaved.giveBack(delta));
  }

  async flushed(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all(this.#pending);
  }

  async listDecisions(q: DecisionQuery): Promise<DecisionRow[]> {
    const values: unknown[] = [];
    const where = ["d.kind = 'decision'"];
    const bind = (value: unknown): string => `$${values.push(value)}`;
    if (q.policyId !== undefined) where.push(`d.policy_id = ${bind(q.policyId)}`);
    if (q.decision !== undefined) where.push(`d.status = ${bind(q.decision)}`);
    if (q.from !== undefined) where.push(`d.recorded_at >= ${bind(Math.ceil(q.from))}`);
    if (q.to !== undefined) where.push(`d.recorded_at <= ${bind(Math.floor(q.to))}`);
    const limit = bind(q.limit);
    const offset = bind(q.offset);
    const rows = await this.#readHistory<DecisionJoin>(
      "listing decisions",
      `${this.#decisionSelect()} WHERE ${where.join(" AND ")} ORDER BY d.recorded_at DESC, d.execution_fp DESC LIMIT ${limit} OFFSET ${offset}`,
      values,
    );
    return (await this.#decoded(rows)).map((row) => decisionRow(...parsed(row)));
  }

  async getDecision(executionId: string): Promise<DecisionDetail | null> {
    const rows = await this.#read<DecisionJoin>(
      "reading a decision",
      `${this.#decisionSelect()} WHERE d.kind = 'decision' AND d.execution_fp = $1`,
      [executionFingerprint(executionId)],
    );
    const [row] = await this.#decoded(rows);
    return row === undefined ? null : decisionDetail(...parsed(row));
  }

  async counts<T>(now: Date, alongside: () => T): Promise<[StoredCounts, T]> {
    const dayStart = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
    // Counters are a few rows read by key, on the primary; counting the records table is a scan of history.
    const read = this.#logId === null ? this.#readHistory.bind(this) : this.#read.bind(this);
    const [row] = await read<Record<"decisions" | "today" | "verifications" | "valid" | "security" | "api", string>>(
      "reading the audit stats",
      `SELECT d.decisions, d.today,
         ${COUNTER("verifications")} AS verifications, ${COUNTER("verifications_valid")} AS valid,
         ${COUNTER("security_events")} AS security, ${COUNTER("api_calls")} AS api
       FROM (${this.#logId === null ? SCANNED_DECISIONS : COUNTED_DECISIONS}) AS d`,
      [dayStart, dayStart + DAY_MS],
    );
    const stored: StoredCounts = {
      decisions: Number(row!.decisions),
      decisionsToday: Number(row!.today),
      verifications: Number(row!.verifications),
      validVerifications: Number(row!.valid),
      securityEvents: Number(row!.security),
      apiCalls: Number(row!.api),
    };
    return [stored, alongside()];
  }

  async listSecurityEvents(q: SecurityQuery): Promise<SecurityEventRow[]> {
    const values: unknown[] = [q.limit];
    const where: string[] = ["TRUE"];
    if (q.from !== undefined) where.push(`at >= $${values.push(Math.ceil(q.from))}`);
    if (q.to !== undefined) where.push(`at <= $${values.push(Math.floor(q.to))}`);
    const rows = await this.#readHistory<{ seq: string; at: string; body: string }>(
      "listing security events",
      `SELECT seq, at, body FROM writ_audit_security WHERE ${where.join(" AND ")} ORDER BY at DESC, seq DESC LIMIT $1`,
      values,
    );
    return rows.map(({ seq, at, body }) => {
      const { count, ...event } = JSON.parse(body) as SecurityEventInput & { count?: number };
      return securityEventRow(event, `${at}-${seq}`, new Date(Number(at)).toISOString(), count);
    });
  }

  /** By one sidecar of the fleet at a time (trail-prune.ts): the others skip. */
  prune(trail: TrailName, limit: RetentionLimit, now: number, stopping: () => boolean): Promise<number> {
    return pruneTrail(this.#pool, PRUNED_TRAILS[trail], limit, now, stopping);
  }

  /** Waits for every insert; the pool stays open (its owner ends it). */
  async close(settled: Promise<unknown>): Promise<void> {
    this.#closed = true;
    await Promise.all([this.flushed(), settled]);
  }

  /** `rows` with each decision's JSON text, coded ones decoded. */
  async #decoded(rows: readonly DecisionJoin[]): Promise<DecisionJoin[]> {
    if (this.#templates === null) return [...rows];
    const texts = await this.#templates.texts(rows.map((row) => row.decision));
    return rows.map((row, i) => ({ ...row, decision: texts[i]! }));
  }

  /**
   * The decision with its override and confirmation, each read by its key `(execution_fp, kind)` in a scalar subquery:
   * a probe per decision of the page. (As LEFT JOINs, a trail with no override yet made the planner read the whole
   * key index once for `kind = 'override'`, thinking it would find none.)
   */
  #decisionSelect(): string {
    const beside = (kind: string): string =>
      `(SELECT b.body FROM ${RECORDS_TABLE} b WHERE b.execution_fp = d.execution_fp AND b.kind = '${kind}')`;
    return `SELECT d.body AS decision, ${beside("override")} AS override, ${beside("confirmation")} AS confirmation FROM ${RECORDS_TABLE} d`;
  }

  #insertSecurityEvent(event: SecurityEventInput, at: Date, count?: number): void {
    const row = securityEventRow(event, "", "", count);
    const { id: _id, at: _at, ...stored } = row;
    const body = JSON.stringify(stored);
    this.#securityLane = this.#queue(
      "recording a security event",
      `WITH recorded AS (INSERT INTO writ_audit_security (at, body) VALUES ($1, $2) RETURNING seq)${this.#logged("security", "$1")}
       ${COUNT_INTO} VALUES ('security_events', $3) ${ADD_COUNT}`,
      [at.getTime(), body, count ?? 1, ...this.#leaf("security", body)],
      undefined,
      this.#securityLane,
    );
  }

  /**
   * Runs a write without the caller waiting, once `after` has settled; `flushed()` waits for it. `undo` runs when it
   * fails. Returns the write, settled (never rejected) when it is done.
   */
  #queue(
    what: string,
    text: string,
    values: readonly unknown[],
    undo?: () => void,
    after: Promise<void> = Promise.resolve(),
  ): Promise<void> {
    if (this.#closed) return after;
    const write = after
      .then(() => this.#run(what, text, values))
      .then(
        () => undefined,
        () => undo?.(),
      );
    this.#pending.add(write);
    void write.finally(() => this.#pending.delete(write));
    return write;
  }

  async #read<R extends pg.QueryResultRow>(what: string, text: string, values: readonly unknown[]): Promise<R[]> {
    return (await this.#run<R>(what, text, values)).rows;
  }

  /** A read that scans history: on the read database, outside the log's health (see the header); else `#read`. */
  async #readHistory<R extends pg.QueryResultRow>(what: string, text: string, values: readonly unknown[]): Promise<R[]> {
    if (this.#readPool === null) return this.#read<R>(what, text, values);
    return (await query<R>(this.#readPool, `${what}${ON_READ_DATABASE}`, text, values)).rows;
  }

  /**
   * Every statement of the log: a failure marks it unhealthy and rejects (StoreUnavailableError); a success marks it
   * healthy again when no statement has failed since it started.
   */
  async #run<R extends pg.QueryResultRow>(what: string, text: string, values: readonly unknown[] = []): Promise<pg.QueryResult<R>> {
    const failuresBefore = this.#failures;
    try {
      const result = await query<R>(this.#pool, what, text, values);
      if (this.#failures === failuresBefore) this.#failing = false;
      return result;
    } catch (error) {
      this.#noteFailure(error);
      throw error;
    }
  }

  /** A failed statement of the log's own (or of its record log's checkpointer): unhealthy until one started later succeeds. */
  #noteFailure(error: unknown): void {
    this.#failures += 1;
    this.#failing = true;
    this.#onError(error);
  }

  /**
   * `, logged AS (…)`: the record `recorded` returned (its `seq`) enters this sidecar's record log as pending, with its
   * leaf hash (parameter `$4`, `#leaf`) and log id (`$5`), at `$at`; nothing when the log is off.
   */
  #logged(kind: LogEntryKind, at: string): string {
    if (this.#logId === null) return "";
    return `, logged AS (INSERT INTO ${LOG_PENDING_TABLE} (log_id, kind, ref, leaf, pended_at) SELECT $5, '${kind}', seq::text, $4, ${at} FROM recorded)`;
  }

  /** The parameters `#logged` names: the leaf hash of the record's JSON text and the log id; none when the log is off. */
  #leaf(kind: LogEntryKind, body: string): unknown[] {
    return this.#logId === null ? [] : [Buffer.from(entryLeafHash({ kind, record: body })), this.#logId];
  }
}

/** Adds to counters, creating them at their first use: `${COUNT_INTO} VALUES (name, n), … ${ADD_COUNT}`. */
const COUNT_INTO = "INSERT INTO writ_audit_counters (name, value)";
const ADD_COUNT = "ON CONFLICT (name) DO UPDATE SET value = writ_audit_counters.value + EXCLUDED.value";
const COUNTER = (name: string): string => `coalesce((SELECT value FROM writ_audit_counters WHERE name = '${name}'), 0)`;

function parsed(row: DecisionJoin): [DecisionAudit, OverrideAudit | undefined, ConfirmationAudit | undefined] {
  return [
    JSON.parse(row.decision) as DecisionAudit,
    row.override === null ? undefined : (JSON.parse(row.override) as OverrideAudit),
    row.confirmation === null ? undefined : (JSON.parse(row.confirmation) as ConfirmationAudit),
  ];
}
