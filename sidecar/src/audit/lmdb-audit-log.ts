/**
 * The audit trail on LMDB (DESIGN.md section 7), in named databases of the environment the sidecar shares with the
 * replay store and Surface B. Its owner opens and closes that environment; this log only opens its databases.
 *
 * LAYOUT (values JSON-encoded, readable by any LMDB client):
 * - `audit-decision-records`: key = [recordedAt ms, fingerprint], value = the decision. Keyed by time, not by the
 *   fingerprint alone: a new decision lands beside the previous one instead of on a random B-tree page of its own,
 *   which cost about 30% of the sidecar's throughput under load (docs/benchmarks.md, "Sidecar"). A decision is found
 *   by executionId through `decisionInstant` (the replay entry's `createdAt`), see `getDecision`.
 * - `audit-decision-times`: key = [recordedAt ms, fingerprint], value = {fingerprint, policyId, status}; read in
 *   reverse for newest-first pages, and filtered on its value without decoding the attestations it skips.
 * - `audit-decisions`: key = execution fingerprint (fixed-length hex, whatever the length of the executionId; LMDB
 *   keys are limited to 1,978 bytes) + suffix: `<fp>/override` the override and `<fp>/confirmation` the
 *   confirmation, beside the decision they follow (an override never replaces the decision, spec 1.8). Each key is
 *   written once: the first record wins.
 * - `audit-verifications`: key = [recordedAt ms, ordinal]. `audit-security`: key = [at ms, ordinal], value = the row.
 * - `audit-counters`: decisions, verifications, verifications_valid, security_events, api_calls.
 * The ordinal of a record is its counter's value before the record, read in the same transaction: keys are unique
 * and order records of the same millisecond by arrival, even with several processes writing the environment.
 *
 * WRITES. Every record is one `root.transaction(callback)`, queued and not awaited: lmdb-js runs the callbacks of
 * one event turn in one LMDB write transaction, so a record, its index entry and its counter commit together, and
 * a request that awaits `flushed()` (or a replay transition queued after the record) has them fsynced. Writes go
 * through the root on purpose: once the root is closing, its `transaction` throws at once, while a write queued on
 * a child database of a closed environment fails later outside any promise (an uncaught exception in lmdb-js
 * 3.5.6). A callback never throws after its first write (callbacks of a batch share the transaction, so a throw
 * could not undo that write): the record, the only value whose JSON encoding can fail, is always written first.
 *
 * HEALTH. A failed write, commit or read marks the log unhealthy for good (`audit_db` false in `GET /health`): some
 * record may be missing, and only a restart, which starts a fresh log, clears it. Failed reads also throw.
 *
 * API CALLS are counted in memory and added to the stored counter every `apiCallFlushMs` (1 s) and on close, so a
 * crash loses up to one interval of them: they are statistics, not acknowledged writes.
 */
import { executionFingerprint } from "@writ/runtime";
import type { Database, RootDatabase } from "lmdb";
import { decisionDetail, decisionRow } from "./decision-row.js";
import { securityEventRow } from "./security-event.js";
import type {
  AuditLog,
  AuditStats,
  ConfirmationAudit,
  DecisionAudit,
  DecisionDetail,
  DecisionQuery,
  DecisionRow,
  DecisionStatus,
  OverrideAudit,
  SecurityEventInput,
  SecurityEventRow,
  SecurityQuery,
  VerificationAudit,
} from "./types.js";

/** The named databases of the log: the environment's `maxDbs` (lmdb-js default 12) must leave room for them. */
export const AUDIT_DATABASES = {
  decisions: "audit-decisions",
  decisionRecords: "audit-decision-records",
  decisionTimes: "audit-decision-times",
  verifications: "audit-verifications",
  security: "audit-security",
  counters: "audit-counters",
} as const;

const COUNTERS = {
  verifications: "verifications",
  validVerifications: "verifications_valid",
  securityEvents: "security_events",
  apiCalls: "api_calls",
} as const;

type Counter = (typeof COUNTERS)[keyof typeof COUNTERS];
type TimeKey = [ms: number, ordinal: number];
/** Decisions are indexed by time and fingerprint: unique without a counter, so a decision needs no read to be written. */
type DecisionTimeKey = [ms: number, fingerprint: string];

interface DecisionIndexEntry {
  readonly fingerprint: string;
  readonly policyId: string;
  readonly status: DecisionStatus;
}

export interface LmdbAuditLogOptions {
  /** The clock of security events and of `stats()` without an argument. */
  readonly now?: () => Date;
  /** How often the in-memory API call count is added to the database; default 1,000 ms. */
  readonly apiCallFlushMs?: number;
  /** Told about the failure that made the log unhealthy (and any later one), for the operator's log. */
  readonly onError?: (error: unknown) => void;
  /**
   * When the decision of an execution fingerprint was recorded (Unix ms), or undefined when there is none: the
   * sidecar answers from the replay entry that consumed it, whose `createdAt` is the attestation's `issuedAt`
   * (INVARIANT (a decision's replay entry is created at its issuedAt), runtime `Authorizer`). Without it, a lookup
   * by executionId walks the time index: fine for tests and the development memory store, linear in the trail.
   */
  readonly decisionInstant?: (fingerprint: string) => Promise<number | undefined>;
}

const DAY_MS = 86_400_000;
const OVERRIDE_SUFFIX = "/override";
const CONFIRMATION_SUFFIX = "/confirmation";

export class LmdbAuditLog implements AuditLog {
  readonly #root: RootDatabase;
  // One database holds three record types under three key shapes; the typed getters below read each shape.
  readonly #decisions: Database<unknown, string>;
  readonly #decisionRecords: Database<DecisionAudit, DecisionTimeKey>;
  readonly #decisionTimes: Database<DecisionIndexEntry, DecisionTimeKey>;
  readonly #decisionInstant: ((fingerprint: string) => Promise<number | undefined>) | null;
  readonly #verifications: Database<VerificationAudit, TimeKey>;
  readonly #security: Database<SecurityEventRow, TimeKey>;
  readonly #counters: Database<number, Counter>;
  readonly #now: () => Date;
  readonly #onError: (error: unknown) => void;
  readonly #timer: NodeJS.Timeout;
  #unsavedApiCalls = 0;
  #healthy = true;
  #closing: Promise<void> | null = null;

  /** Opens the log's databases in `root`; throws when they cannot be opened (e.g. `maxDbs` is exhausted). */
  constructor(root: RootDatabase, options: LmdbAuditLogOptions = {}) {
    this.#root = root;
    this.#decisions = root.openDB<unknown, string>(AUDIT_DATABASES.decisions, { encoding: "json" });
    this.#decisionRecords = root.openDB<DecisionAudit, DecisionTimeKey>(AUDIT_DATABASES.decisionRecords, { encoding: "json" });
    this.#decisionTimes = root.openDB<DecisionIndexEntry, DecisionTimeKey>(AUDIT_DATABASES.decisionTimes, { encoding: "json" });
    this.#decisionInstant = options.decisionInstant ?? null;
    this.#verifications = root.openDB<VerificationAudit, TimeKey>(AUDIT_DATABASES.verifications, { encoding: "json" });
    this.#security = root.openDB<SecurityEventRow, TimeKey>(AUDIT_DATABASES.security, { encoding: "json" });
    this.#counters = root.openDB<number, Counter>(AUDIT_DATABASES.counters, { encoding: "json" });
    this.#now = options.now ?? (() => new Date());
    this.#onError = options.onError ?? (() => undefined);
    // unref: a pending count must not keep the process alive; close() saves what the timer has not.
    this.#timer = setInterval(() => this.#saveApiCalls(), options.apiCallFlushMs ?? 1_000);
    this.#timer.unref();
  }

  healthy(): boolean {
    return this.#healthy && this.#closing === null;
  }

  /**
   * The record and its time index entry are queued with the environment's asynchronous `put`, not in a transaction
   * of their own: called from the replay store's conditional write (ConsumeOptions.alongside), they are part of it,
   * written only when the execution is consumed and flushed with it, with no round trip through a JavaScript
   * transaction callback (docs/benchmarks.md).
   */
  recordDecision(entry: DecisionAudit): void {
    if (this.#closing !== null) return;
    // Copied by name: only the declared fields are stored, whatever else the caller's object carries.
    const record: DecisionAudit = {
      executionId: entry.executionId,
      endpoint: entry.endpoint,
      status: entry.status,
      ruleMatched: entry.ruleMatched,
      attestation: entry.attestation,
      ...(entry.signalProvenance === undefined ? {} : { signalProvenance: entry.signalProvenance }),
      recordedAt: entry.recordedAt,
    };
    try {
      // lmdb-js fails a queued write on a closed environment later, from a setImmediate, as an uncaught exception.
      if ((this.#root as { status?: string }).status !== "open") throw new Error("the LMDB environment is closed");
      const fingerprint = executionFingerprint(entry.executionId);
      const at: DecisionTimeKey = [this.#instant(entry.recordedAt), fingerprint];
      // A decision is final and recorded once: the replay store's conditional write that consumes its executionId
      // runs this (ConsumeOptions.alongside), and only one such write succeeds per fingerprint.
      this.#watch(this.#decisionRecords.put(at, record));
      this.#watch(this.#decisionTimes.put(at, { fingerprint, policyId: entry.attestation.policyId, status: entry.status }));
    } catch (error) {
      this.#fail(error);
    }
  }

  recordOverride(entry: OverrideAudit): void {
    const record: OverrideAudit = {
      executionId: entry.executionId,
      approved: entry.approved,
      approvedBy: entry.approvedBy,
      approverRole: entry.approverRole,
      reason: entry.reason,
      overrideId: entry.overrideId,
      record: entry.record,
      recordedAt: entry.recordedAt,
    };
    this.#writeOnce(entry.executionId, OVERRIDE_SUFFIX, record);
  }

  recordConfirmation(entry: ConfirmationAudit): void {
    const record: ConfirmationAudit = { executionId: entry.executionId, match: entry.match, proof: entry.proof, recordedAt: entry.recordedAt };
    this.#writeOnce(entry.executionId, CONFIRMATION_SUFFIX, record);
  }

  recordVerification(entry: VerificationAudit): void {
    const record: VerificationAudit = { executionId: entry.executionId, valid: entry.valid, checks: entry.checks, errors: entry.errors, recordedAt: entry.recordedAt };
    const ms = this.#instant(entry.recordedAt);
    this.#write(() => {
      this.#appendCounted(COUNTERS.verifications, (ordinal) => this.#verifications.putSync([ms, ordinal], record));
      if (entry.valid) this.#counters.putSync(COUNTERS.validVerifications, this.#count(COUNTERS.validVerifications) + 1);
    });
  }

  recordSecurityEvent(event: SecurityEventInput): void {
    const at = this.#now();
    this.#write(() => {
      this.#appendCounted(COUNTERS.securityEvents, (ordinal) => {
        this.#security.putSync([at.getTime(), ordinal], securityEventRow(event, `${at.getTime()}-${ordinal}`, at.toISOString()));
      });
    });
  }

  countApiCall(): void {
    this.#unsavedApiCalls += 1;
  }

  async flushed(): Promise<void> {
    try {
      await this.#root.flushed;
    } catch (error) {
      this.#fail(error);
    }
  }

  async listDecisions(query: DecisionQuery): Promise<DecisionRow[]> {
    await this.#readable();
    return this.#read(() => {
      const { policyId, decision, offset, limit } = query;
      const filtered = policyId !== undefined || decision !== undefined;
      // Unfiltered, LMDB skips and stops by itself; filtered, the walk stops after offset + limit matches.
      const range = this.#decisionTimes.getRange({ ...timeRange(query.from, query.to), ...(filtered ? {} : { offset, limit }) });
      const rows: DecisionRow[] = [];
      let skipped = filtered ? 0 : offset;
      for (const { key, value } of range) {
        if (rows.length >= limit) break;
        if ((policyId !== undefined && value.policyId !== policyId) || (decision !== undefined && value.status !== decision)) continue;
        if (skipped < offset) {
          skipped += 1;
          continue;
        }
        const stored = this.#decisionRecords.get(key);
        if (stored === undefined) throw new Error(`audit index entry without a decision record: ${value.fingerprint}`);
        rows.push(decisionRow(stored, this.#override(value.fingerprint), this.#confirmation(value.fingerprint)));
      }
      return rows;
    });
  }

  async getDecision(executionId: string): Promise<DecisionDetail | null> {
    // No decision can be stored under an id with a lone surrogate: its fingerprint cannot even be computed.
    if (!executionId.isWellFormed()) return null;
    const fingerprint = executionFingerprint(executionId);
    await this.#readable();
    const instant = this.#decisionInstant === null ? undefined : await this.#decisionInstant(fingerprint);
    return this.#read(() => {
      const key = this.#decisionInstant === null ? this.#walkForDecision(fingerprint) : instant === undefined ? undefined : ([instant, fingerprint] as DecisionTimeKey);
      const stored = key === undefined ? undefined : this.#decisionRecords.get(key);
      return stored === undefined ? null : decisionDetail(stored, this.#override(fingerprint), this.#confirmation(fingerprint));
    });
  }

  /**
   * Read inside a write transaction, queued behind every record so far: the stored API call count and the one still
   * in memory are then read at one instant (a save runs in the same sequence of callbacks), so none is counted
   * twice or missed. Answered once that batch is flushed, like every read.
   */
  async stats(now: Date = this.#now()): Promise<AuditStats> {
    this.#assertOpen();
    const dayStart = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
    const stats = await this.#read(() =>
      this.#root.transaction((): AuditStats => {
        const verifications = this.#count(COUNTERS.verifications);
        const valid = this.#count(COUNTERS.validVerifications);
        return {
          total_decisions: String((this.#decisionTimes.getStats() as { entryCount: number }).entryCount),
          decisions_today: String(this.#decisionTimes.getKeysCount({ start: [dayStart], end: [dayStart + DAY_MS] })),
          total_verifications: String(verifications),
          valid_verifications: String(valid),
          invalid_verifications: String(verifications - valid),
          total_security_events: String(this.#count(COUNTERS.securityEvents)),
          total_api_calls: String(this.#count(COUNTERS.apiCalls) + this.#unsavedApiCalls),
        };
      }),
    );
    await this.flushed();
    return stats;
  }

  async listSecurityEvents(query: SecurityQuery): Promise<SecurityEventRow[]> {
    await this.#readable();
    return this.#read(() => Array.from(this.#security.getRange({ ...timeRange(query.from, query.to), limit: query.limit }), ({ value }) => value));
  }

  /** Saves the API call count and waits for every write to be flushed. The environment stays open: its owner closes it. */
  close(): Promise<void> {
    if (this.#closing === null) {
      clearInterval(this.#timer);
      this.#saveApiCalls();
      // Set after the save: from here on, records are dropped and reads throw.
      this.#closing = this.flushed();
    }
    return this.#closing;
  }

  /** Writes `record` under `<fp><suffix>` unless a record is already there. */
  #writeOnce(executionId: string, suffix: string, record: OverrideAudit | ConfirmationAudit): void {
    this.#write(() => {
      const key = executionFingerprint(executionId) + suffix;
      if (!this.#decisions.doesExist(key)) this.#decisions.putSync(key, record);
    });
  }

  /** `write(ordinal)` stores the record (and its index entry), then the counter moves past it. */
  #appendCounted(counter: Counter, write: (ordinal: number) => void): void {
    const ordinal = this.#count(counter);
    write(ordinal);
    this.#counters.putSync(counter, ordinal + 1);
  }

  #saveApiCalls(): void {
    if (this.#unsavedApiCalls === 0) return;
    this.#write(() => {
      // Taken when the transaction runs, not when it is queued: calls counted in between are included, and stats()
      // (a callback of the same sequence) never sees a count both in memory and stored.
      const delta = this.#unsavedApiCalls;
      if (delta === 0) return;
      this.#counters.putSync(COUNTERS.apiCalls, this.#count(COUNTERS.apiCalls) + delta);
      this.#unsavedApiCalls -= delta;
    });
  }

  /** A queued write's failure ends in `#fail`, never in an unhandled rejection. */
  #watch(written: Promise<boolean>): void {
    written.then(
      () => undefined,
      (error: unknown) => this.#fail(error),
    );
  }

  /** Queues `body` in the current write batch; every failure ends in `#fail`, never in an unhandled rejection. */
  #write(body: () => void): void {
    if (this.#closing !== null) return;
    let committed: Promise<{ readonly error: unknown } | null>;
    try {
      committed = this.#root.transaction(() => {
        try {
          body();
          return null;
        } catch (error) {
          return { error };
        }
      });
    } catch (error) {
      this.#fail(error);
      return;
    }
    committed.then(
      (outcome) => {
        if (outcome !== null) this.#fail(outcome.error);
      },
      (error: unknown) => this.#fail(error),
    );
  }

  /** Reads see the writes queued before them, once durable (a read never reports what a crash could still undo). */
  async #readable(): Promise<void> {
    this.#assertOpen();
    await this.flushed();
  }

  async #read<T>(body: () => T | Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (error) {
      this.#fail(error);
      throw error;
    }
  }

  #fail(error: unknown): void {
    this.#healthy = false;
    this.#onError(error);
  }

  #assertOpen(): void {
    if (this.#closing !== null) throw new Error("audit log is closed");
  }

  #count(counter: Counter): number {
    return this.#counters.get(counter) ?? 0;
  }

  /** Where a record sorts in time. A malformed `recordedAt` (never one the runtime signs) files it at arrival. */
  #instant(iso: string): number {
    const ms = Date.parse(iso);
    return Number.isFinite(ms) ? ms : this.#now().getTime();
  }

  /** The time key of the decision of `fingerprint`, found by walking the time index (no `decisionInstant`). */
  #walkForDecision(fingerprint: string): DecisionTimeKey | undefined {
    for (const { key, value } of this.#decisionTimes.getRange({})) if (value.fingerprint === fingerprint) return key;
    return undefined;
  }

  #override(fingerprint: string): OverrideAudit | undefined {
    return this.#decisions.get(fingerprint + OVERRIDE_SUFFIX) as OverrideAudit | undefined;
  }

  #confirmation(fingerprint: string): ConfirmationAudit | undefined {
    return this.#decisions.get(fingerprint + CONFIRMATION_SUFFIX) as ConfirmationAudit | undefined;
  }
}

/** Range options for a newest-first walk of a [ms, ordinal] index, both bounds inclusive. */
function timeRange(from: number | undefined, to: number | undefined): { reverse: true; start?: [number]; end?: [number] } {
  // Reversed, `start` is the upper bound (inclusive) and `end` the lower one (exclusive). The one-element key [t]
  // sorts before every [t, ordinal]: [floor(to) + 1] keeps every record of millisecond floor(to), [ceil(from)]
  // every record of millisecond ceil(from).
  return {
    reverse: true,
    ...(to === undefined ? {} : { start: [Math.floor(to) + 1] as [number] }),
    ...(from === undefined ? {} : { end: [Math.ceil(from)] as [number] }),
  };
}
