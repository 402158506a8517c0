/**
 * The audit trail on LMDB (docs/audit.md), in named databases of the environment the sidecar shares with the
 * replay store and Surface B. Its owner opens and closes that environment; this log only opens its databases.
 *
 * LAYOUT (values JSON-encoded, readable by any LMDB client, but for the decision records):
 * - `audit-decision-records`: key = [recordedAt ms, fingerprint], value = the decision's JSON, written LZ4-compressed
 *   with the data dir's dictionary while SERVICE_AUDIT_COMPRESSION is on (storage/lmdb/decision-records.ts; records
 *   stored as JSON are read as they are), which `audit-record-compression` keeps: every opener opens it through
 *   `openDecisionRecords`. Keyed by time, not by the fingerprint alone: a new decision lands beside the previous one
 *   instead of on a random B-tree page of its own, which cost about 30% of the sidecar's throughput under load
 *   (docs/benchmarks.md, "Sidecar"). A decision is found by executionId through `decisionInstant` (the replay entry's
 *   `createdAt`), see `getDecision`.
 * - `audit-decision-times`: key = [recordedAt ms, fingerprint], value = {fingerprint, policyId, status}; read in
 *   reverse for newest-first pages, and filtered on its value without decoding the attestations it skips.
 * - `audit-decisions`: key = execution fingerprint (fixed-length hex, whatever the length of the executionId; LMDB
 *   keys are limited to 1,978 bytes) + suffix: `<fp>/override` the override and `<fp>/confirmation` the
 *   confirmation, beside the decision they follow (an override never replaces the decision, spec 1.8). Each key is
 *   written once, inside the replay transition that resolves the override or consumes the confirmation key.
 * - `audit-decision-filters`: the filter index of `listDecisions` (storage/lmdb/decision-filters.ts), written with the record.
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
 * HEALTH. Commits are watched by the environment's one `LmdbDurability` (runtime/src/replay/lmdb-durability.ts), never
 * by awaiting `root.flushed` directly (which can wait forever after a failed commit). The log is unhealthy (`audit_db`
 * false in `GET /health`) while the environment's writes fail or are held (below the data dir's free-space reserve:
 * `#write` skips them), and for `DEFAULT_RECOVERY_HOLD_MS` after any failed
 * write, commit or read of its own; it turns healthy again by itself once writes succeed (space freed). A record whose
 * write failed is missing; the answers that depend on a record (decisions, overrides, confirmations) are written in the
 * replay store's transition, whose failure answers 503. Failed reads also throw.
 *
 * BOUNDS. Security events are aggregated per source and interval (security-event-limiter.ts), and every trail is pruned
 * by age and count (retention.ts) once a minute, through its time index, in transactions of at most PRUNE_SLICE records
 * with the event loop served between them.
 *
 * VOLUME. Nothing here reads in proportion to the trail on the event loop: walks are read in pages and sliced
 * (slices.ts), counts are LMDB's O(1) entry counts, `decisions_today` is counted as the day goes (storage/lmdb/day-count.ts), and the
 * record log finds records outside it by its accounting (storage/lmdb/record-log-storage.ts, ACCOUNTING), not by a scan.
 *
 * API CALLS are counted in memory and added to the stored counter every `apiCallFlushMs` (1 s) and on close, so a
 * crash loses up to one interval of them: they are statistics, not acknowledged writes.
 */
import { entryLeafHash, executionFingerprint, type LogEntryKind, type TransitionRecord } from "@writ/runtime";
import { DEFAULT_RECOVERY_HOLD_MS, LmdbDurability } from "@writ/runtime/lmdb";
import type { Database, Key, RootDatabase } from "lmdb";
import { DayCount } from "./day-count.js";
import { DECISION_RECORDS_DATABASE, RECORD_COMPRESSION_DATABASE, openDecisionRecords } from "./decision-records.js";
import { hasDatabase } from "./named-databases.js";
import { prefetched } from "./prefetch.js";
import { RecordTemplates } from "./record-templates.js";
import { shapeOf } from "../../audit/record-coding.js";
import { backfillFilters, filterKey, matchingRecordKeys, type FilterKey } from "./decision-filters.js";
import { Checkpointer, DEFAULT_CHECKPOINTS, type CheckpointSchedule } from "../../audit/record-log/checkpointer.js";
import { LmdbLogStorage, type PrunedRecord, type StoredRecord } from "./record-log-storage.js";
import { locators, parseLocator, type LogKind } from "../../audit/record-log/locator.js";
import { RecordLog } from "../../audit/record-log/record-log.js";
import { decisionDetail, decisionRow } from "../../audit/decision-row.js";
import { AuditHousekeeping } from "../../audit/housekeeping.js";
import { DEFAULT_AUDIT_RETENTION, dueCount, type AuditRetention, type RetentionLimit } from "../../audit/retention.js";
import { securityEventRow } from "../../audit/security-event.js";
import { Slicer } from "../../audit/slices.js";
import { keyPages, keysAfter } from "./pages.js";
import { asStored, encoded } from "./stored-bytes.js";
import { timeRange } from "../../audit/time-range.js";
import { DEFAULT_SECURITY_EVENT_LIMITS, SecurityEventLimiter, type SecurityEventLimits } from "../../audit/security-event-limiter.js";
import type {
  AuditLog,
  AuditStats,
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

/** The named databases of the log: the environment's `maxDbs` (lmdb-js default 12) must leave room for them. */
export const AUDIT_DATABASES = {
  decisions: "audit-decisions",
  decisionRecords: DECISION_RECORDS_DATABASE,
  recordCompression: RECORD_COMPRESSION_DATABASE,
  decisionFilters: "audit-decision-filters",
  verifications: "audit-verifications",
  security: "audit-security",
  counters: "audit-counters",
} as const;

const COUNTERS = {
  prunes: "prunes",
  verifications: "verifications",
  validVerifications: "verifications_valid",
  securityEvents: "security_events",
  apiCalls: "api_calls",
} as const;

type Counter = (typeof COUNTERS)[keyof typeof COUNTERS];

/** Records removed per prune transaction: each costs a few B-tree writes in the callback, on the event loop. */
const PRUNE_SLICE = 128;
type TimeKey = [ms: number, ordinal: number];
/** Decisions are indexed by time and fingerprint: unique without a counter, so a decision needs no read to be written. */
type DecisionTimeKey = [ms: number, fingerprint: string];

/**
 * The time index of decisions before records were coded: each record's key, again, with its policy and status. The
 * records' own keys serve as the time index now, and a data dir that has it drops it at open.
 */
export const FORMER_DECISION_TIMES = "audit-decision-times";

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
  /** Whether decision records are coded against templates (audit/record-coding.ts); default true (SERVICE_AUDIT_RECORD_CODING). */
  readonly codeRecords?: boolean;
  /** Whether the decision records written from now on are compressed (decision-records.ts); default false. */
  readonly compressRecords?: boolean;
  /** Aggregation of security events per source and interval; default DEFAULT_SECURITY_EVENT_LIMITS. */
  readonly securityEvents?: SecurityEventLimits;
  /** How long each trail keeps its records; default DEFAULT_AUDIT_RETENTION. */
  readonly retention?: AuditRetention;
  /** How often records past their retention are removed; default 60,000 ms. */
  readonly pruneIntervalMs?: number;
  /** Told of long work done at open (indexing an older trail), for the operator's log. */
  readonly onNotice?: (message: string) => void;
  /** The tamper-evident record log (docs/audit.md, "Tamper evidence"); default true. */
  readonly recordLog?: boolean;
  /** When and with which key the record log is checkpointed; absent: DEFAULT_CHECKPOINTS, no key (records are logged, not checkpointed). */
  readonly checkpoints?: CheckpointSchedule;
  /** The record log's id when the data dir has none yet (SERVICE_INSTANCE_ID); absent: a random UUID. */
  readonly instanceId?: string | null;
}

const OVERRIDE_SUFFIX = "/override";
const CONFIRMATION_SUFFIX = "/confirmation";

export class LmdbAuditLog implements AuditLog {
  readonly #root: RootDatabase;
  readonly #durability: LmdbDurability;
  // One database holds three record types under three key shapes; the typed getters below read each shape.
  readonly #decisions: Database<unknown, string>;
  readonly #decisionRecords: Database<DecisionAudit, DecisionTimeKey>;
  /** Whether decision records are coded against templates (audit/record-coding.ts), else stored as JSON. */
  readonly #templates: RecordTemplates | null;
  readonly #decisionFilters: Database<number, FilterKey>;
  /** Settles once every decision of the trail is in the filter index (older environments are indexed at open). */
  readonly #filtersReady: Promise<void>;
  /** Settles once the record log has taken in what it lacked at open (storage/lmdb/record-log-storage.ts `adoptUnlogged`). */
  readonly #adopted: Promise<void>;
  readonly #today: DayCount;
  readonly #limiter: SecurityEventLimiter;
  readonly #retention: AuditRetention;
  #pruning: Promise<number> | null = null;
  readonly #decisionInstant: ((fingerprint: string) => Promise<number | undefined>) | null;
  readonly #verifications: Database<VerificationAudit, TimeKey>;
  readonly #security: Database<SecurityEventRow, TimeKey>;
  readonly #counters: Database<number, Counter>;
  readonly #now: () => Date;
  readonly #onError: (error: unknown) => void;
  readonly #housekeeping: AuditHousekeeping;
  #unsavedApiCalls = 0;
  /** Unix ms of the latest failure of the log's own (a throwing write body, a failed read); null when none. */
  #failedAt: number | null = null;
  #closing: Promise<void> | null = null;
  /** The tamper-evident record log's store; null when it is off (`recordLog: false`). */
  readonly #log: LmdbLogStorage | null;
  readonly #checkpointer: Checkpointer | null;
  /** The tamper-evident log of every record of this trail, for the `/audit/log` routes; null when it is off. */
  readonly recordLog: RecordLog | null;

  /** Opens the log's databases in `root`; throws when they cannot be opened (e.g. `maxDbs` is exhausted). */
  constructor(root: RootDatabase, options: LmdbAuditLogOptions = {}) {
    this.#root = root;
    this.#durability = LmdbDurability.of(root);
    this.#decisions = root.openDB<unknown, string>(AUDIT_DATABASES.decisions, { encoding: "json" });
    this.#decisionRecords = openDecisionRecords<DecisionAudit, DecisionTimeKey>(root, {
      compress: options.compressRecords ?? false,
    });
    this.#templates = options.codeRecords === false ? null : RecordTemplates.of(root);
    this.#decisionFilters = root.openDB<number, FilterKey>(AUDIT_DATABASES.decisionFilters, { encoding: "json" });
    this.#decisionInstant = options.decisionInstant ?? null;
    this.#verifications = root.openDB<VerificationAudit, TimeKey>(AUDIT_DATABASES.verifications, { encoding: "json" });
    this.#security = root.openDB<SecurityEventRow, TimeKey>(AUDIT_DATABASES.security, { encoding: "json" });
    this.#counters = root.openDB<number, Counter>(AUDIT_DATABASES.counters, { encoding: "json" });
    this.#now = options.now ?? (() => new Date());
    this.#onError = options.onError ?? (() => undefined);
    this.#limiter = new SecurityEventLimiter(options.securityEvents ?? DEFAULT_SECURITY_EVENT_LIMITS);
    this.#retention = options.retention ?? DEFAULT_AUDIT_RETENTION;
    const log =
      options.recordLog === false
        ? null
        : new LmdbLogStorage(
            root,
            {
              raw: (locator) => this.#raw(locator),
              prefetch: (locators) => this.#prefetch(locators),
              storedCount: () => this.#storedCount(),
              stored: () => this.#stored(),
              decisionLocator: (executionId) => this.#decisionLocator(executionId),
            },
            options.instanceId ?? null,
          );
    this.#log = log;
    this.#today = new DayCount(this.#decisionRecords);
    dropFormerTimes(root, (error) => this.#fail(error));
    if (log === null) LmdbLogStorage.markIncomplete(root);
    // In the background, in slices: the sidecar answers meanwhile, and what it writes is logged as usual.
    const adopting = Date.now();
    this.#adopted = (log?.adoptUnlogged() ?? Promise.resolve(0)).then(
      (adopted) => {
        if (adopted > 0)
          options.onNotice?.(
            `audit: ${adopted} records the record log lacked (written while it was off, or held by a process that crashed) are taken into it in ${Date.now() - adopting} ms`,
          );
      },
      (error: unknown) => this.#fail(error),
    );
    this.#checkpointer =
      log === null
        ? null
        : new Checkpointer(log, options.checkpoints ?? { key: null, ...DEFAULT_CHECKPOINTS }, {
            onError: (error) => this.#fail(error),
            writable: () => this.#durability.health().ok,
          });
    this.recordLog = log === null ? null : new RecordLog(log, this.#checkpointer);
    this.#housekeeping = new AuditHousekeeping(
      {
        save: () => {
          this.#saveApiCalls();
          this.#saveAggregates(false);
        },
        prune: () => this.prune(),
      },
      { saveMs: options.apiCallFlushMs, pruneMs: options.pruneIntervalMs },
    );
    const onNotice = options.onNotice ?? (() => undefined);
    const started = Date.now();
    this.#filtersReady = backfillFilters(
      root,
      this.#decisionRecords,
      (record) => ({ policyId: record.attestation.policyId, status: record.status }),
      this.#decisionFilters,
      this.#counters as unknown as Database<number, string>,
    ).then(
      (indexed) => {
        if (indexed > 0)
          onNotice(`audit: indexed ${indexed} decisions of an older trail for filtered queries in ${Date.now() - started} ms`);
      },
      (error: unknown) => this.#fail(error),
    );
  }

  healthy(): boolean {
    if (this.#closing !== null || !this.#durability.health().ok) return false;
    return this.#failedAt === null || Date.now() - this.#failedAt >= DEFAULT_RECOVERY_HOLD_MS;
  }

  /**
   * The record and its time index entry are queued with the environment's asynchronous `put`, not in a transaction
   * of their own: called from the replay store's conditional write (`writeRecord`), they are part of it,
   * written only when the execution is consumed and flushed with it, with no round trip through a JavaScript
   * transaction callback (docs/benchmarks.md).
   */
  /**
   * The replay store's record writer (runtime `RecordWriter`): called inside the write transaction of the transition the
   * record comes with, so what it queues commits and flushes with that transition or not at all.
   */
  readonly writeRecord = (record: TransitionRecord, written: Promise<boolean | null>): void => {
    if (record.kind === "decision") this.recordDecision(record.body, written, record.json);
    else if (record.kind === "override") this.recordOverride(record.body, written);
    else this.recordConfirmation(record.body, written);
  };

  /**
   * `written`: the outcome of the replay transition this record is written with (runtime `RecordWriter`). `json`: the
   * entry's JSON text when the runtime made it with the record (runtime `TransitionRecord`), stored as it is.
   */
  recordDecision(entry: DecisionAudit, written?: Promise<boolean | null>, json?: string): void {
    if (this.#closing !== null) return;
    this.#queue(() => {
      // The attestation's own fingerprint of its executionId, not hashed a second time (runtime `recordFingerprint`).
      const fingerprint = entry.attestation.execution_fingerprint;
      const at: DecisionTimeKey = [this.#instant(entry.recordedAt), fingerprint];
      // A decision is final and recorded once: the replay store's conditional write that consumes its executionId
      // runs this (`writeRecord`), and only one such write succeeds per fingerprint.
      const text = json ?? JSON.stringify(declaredDecision(entry));
      const bytes = Buffer.from(text, "utf8");
      const coded = this.#templates?.encode(shapeOf(entry), text) ?? null;
      this.#watch(this.#decisionRecords.put(at, asStored(coded === null ? bytes : Buffer.from(coded, "utf8"))));
      this.#watch(this.#decisionFilters.put(filterKey(entry.attestation.policyId, entry.status, at[0], fingerprint), 0));
      this.#logRecord(written, at[0], locators.decision(at[0], fingerprint), "decision", bytes);
    });
  }

  recordOverride(entry: OverrideAudit, written?: Promise<boolean | null>): void {
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
    this.#putBeside(entry.executionId, OVERRIDE_SUFFIX, record, written);
  }

  recordConfirmation(entry: ConfirmationAudit, written?: Promise<boolean | null>): void {
    const record: ConfirmationAudit = {
      executionId: entry.executionId,
      match: entry.match,
      proof: entry.proof,
      recordedAt: entry.recordedAt,
    };
    this.#putBeside(entry.executionId, CONFIRMATION_SUFFIX, record, written);
  }

  /**
   * Into the record log, from the bytes just queued: held in memory once `written` (the replay transition's outcome)
   * says they committed, else with a pending entry written beside them (storage/lmdb/record-log-storage.ts, PENDING RECORDS).
   */
  #logRecord(written: Promise<boolean | null> | undefined, ms: number, locator: string, kind: LogEntryKind, bytes: Uint8Array): void {
    const log = this.#log;
    if (log === null) return;
    const leaf = entryLeafHash({ kind, record: bytes });
    if (written === undefined) this.#watch(log.pend(ms, locator, leaf));
    else log.pendOnCommit(written, locator, leaf);
  }

  recordVerification(entry: VerificationAudit): void {
    const record: VerificationAudit = {
      executionId: entry.executionId,
      valid: entry.valid,
      checks: entry.checks,
      errors: entry.errors,
      recordedAt: entry.recordedAt,
    };
    const ms = this.#instant(entry.recordedAt);
    this.#write(() => {
      this.#appendCounted(COUNTERS.verifications, (ordinal) => {
        const bytes = encoded(record);
        this.#verifications.putSync([ms, ordinal], asStored(bytes));
        this.#log?.pendSync(ms, locators.verification(ms, ordinal), entryLeafHash({ kind: "verification", record: bytes }));
      });
      if (entry.valid) this.#counters.putSync(COUNTERS.validVerifications, this.#count(COUNTERS.validVerifications) + 1);
    });
  }

  /** Written at once when it is the first of its type from its source in the interval, else counted (see BOUNDS). */
  recordSecurityEvent(event: SecurityEventInput): void {
    if (this.#closing !== null) return;
    const at = this.#now();
    if (this.#limiter.admit(event, at.getTime())) this.#writeSecurityEvent(event, at);
  }

  countApiCall(): void {
    this.#unsavedApiCalls += 1;
  }

  async flushed(): Promise<void> {
    try {
      await this.#durability.flushed();
    } catch {
      // Recorded by the environment's durability watcher: `audit_db` and `store` in /health say so.
    }
  }

  async listDecisions(query: DecisionQuery): Promise<DecisionRow[]> {
    await this.#readable();
    const { policyId, decision, offset, limit } = query;
    if (policyId !== undefined || decision !== undefined) await this.#filtersReady;
    return this.#read(async () => {
      // The time index skips `offset` natively; the filter index's walk (a merge of ranges) reads pages (slices.ts).
      // Either way the event loop is served between slices, and a walk left early, or one that throws, holds no cursor.
      const filtered = policyId !== undefined || decision !== undefined;
      const keys: Iterable<DecisionTimeKey> = filtered
        ? matchingRecordKeys(this.#decisionFilters, query)
        : await keysAfter(this.#decisionRecords, timeRange(query.from, query.to), offset, limit);
      const skip = filtered ? offset : 0;
      const slicer = new Slicer();
      const wanted: DecisionTimeKey[] = [];
      let skipped = 0;
      for (const key of keys) {
        if (wanted.length === limit) break;
        await slicer.pause();
        if (skipped < skip) skipped += 1;
        else wanted.push(key);
      }
      await this.#prefetchRows(wanted);
      const rows: DecisionRow[] = [];
      for (const key of wanted) {
        await slicer.pause();
        const stored = this.#decisionRecords.get(key);
        if (stored === undefined) throw new Error(`audit index entry without a decision record: ${key[1]}`);
        rows.push(decisionRow(stored, this.#override(key[1]), this.#confirmation(key[1])));
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
    if (instant !== undefined) await this.#prefetchRows([[instant, fingerprint]]);
    return this.#read(async () => {
      const key =
        this.#decisionInstant === null
          ? await this.#walkForDecision(fingerprint)
          : instant === undefined
            ? undefined
            : ([instant, fingerprint] as DecisionTimeKey);
      const stored = key === undefined ? undefined : this.#decisionRecords.get(key);
      return stored === undefined ? null : decisionDetail(stored, this.#override(fingerprint), this.#confirmation(fingerprint));
    });
  }

  /**
   * The counters are read inside a write transaction, queued behind every record so far: the stored API call count and
   * the one still in memory are then read at one instant (a save runs in the same sequence of callbacks), so none is
   * counted twice or missed. `decisions_today` is counted before, as the day goes (storage/lmdb/day-count.ts). Answered once that
   * batch is flushed, like every read.
   */
  async stats(now: Date = this.#now()): Promise<AuditStats> {
    await this.#readable();
    const today = await this.#read(() => this.#today.count(now.getTime()));
    const stats = await this.#read(() =>
      this.#root.transaction((): AuditStats => {
        const verifications = this.#count(COUNTERS.verifications);
        const valid = this.#count(COUNTERS.validVerifications);
        return {
          total_decisions: String(entryCount(this.#decisionRecords)),
          decisions_today: String(today),
          total_verifications: String(verifications),
          valid_verifications: String(valid),
          invalid_verifications: String(verifications - valid),
          // Stored, and counted into an aggregate row not written yet (see BOUNDS).
          total_security_events: String(this.#count(COUNTERS.securityEvents) + this.#limiter.pending()),
          total_api_calls: String(this.#count(COUNTERS.apiCalls) + this.#unsavedApiCalls),
        };
      }),
    );
    await this.flushed();
    return stats;
  }

  async listSecurityEvents(query: SecurityQuery): Promise<SecurityEventRow[]> {
    await this.#readable();
    return this.#read(() =>
      Array.from(this.#security.getRange({ ...timeRange(query.from, query.to), limit: query.limit }), ({ value }) => value),
    );
  }

  /** Saves the API call count and waits for every write to be flushed. The environment stays open: its owner closes it. */
  close(): Promise<void> {
    if (this.#closing === null) {
      this.#housekeeping.stop();
      const checkpointing = this.#checkpointer?.stop();
      this.#saveApiCalls();
      this.#saveAggregates(true);
      // Set after the save: from here on, records are dropped and reads throw.
      this.#closing = Promise.all([this.flushed(), this.#filtersReady, this.#adopted, this.#pruning?.catch(() => 0), checkpointing]).then(
        async () => {
          // What the record log holds in memory goes into it before the environment closes (storage/lmdb/record-log-storage.ts).
          await this.#log?.close().catch((error: unknown) => this.#onError(error));
        },
      );
    }
    return this.#closing;
  }

  /**
   * Removes the records past their retention (retention.ts), oldest first, in transactions of at most PRUNE_CHUNK
   * records; a decision goes with its time index and filter entries, its override and its confirmation. Runs once a
   * minute; one run at a time. Returns how many records it removed.
   */
  prune(now: Date = this.#now()): Promise<number> {
    this.#pruning ??= (async () => {
      try {
        const removed =
          (await this.#pruneTrail(this.#decisionRecords, this.#retention.decisions, now, {
            prefetch: (keys) => this.#prefetchDecisions(keys),
            remove: (key) => this.#removeDecision(key),
          })) +
          (await this.#pruneTrail(this.#verifications, this.#retention.verifications, now, {
            prefetch: (keys) => this.#prefetchTimed(this.#verifications, keys, locators.verification),
            remove: (key) => {
              this.#verifications.removeSync(key);
              return [{ locator: locators.verification(key[0], key[1]), ms: key[0] }];
            },
          })) +
          (await this.#pruneTrail(this.#security, this.#retention.security, now, {
            prefetch: (keys) => this.#prefetchTimed(this.#security, keys, locators.security),
            remove: (key) => {
              this.#security.removeSync(key);
              return [{ locator: locators.security(key[0], key[1]), ms: key[0] }];
            },
          }));
        return removed;
      } finally {
        this.#pruning = null;
      }
    })();
    return this.#pruning;
  }

  /**
   * `remove` deletes one record (inside the chunk's transaction) and answers what it deleted: the chunk's prune note in
   * the record log lists their positions, in the same transaction. The oldest keys are read from the trail's time index
   * and its O(1) entry count (retention.ts `dueCount`): a run reads what it removes, PRUNE_SLICE records a transaction,
   * and the event loop is served between transactions. Before each transaction, `prefetch` reads into memory, off the
   * event loop, every page its callback will touch: the records retention removes are the oldest, which in a store
   * larger than memory the OS no longer holds, and a disk read inside the callback would stall the loop.
   */
  async #pruneTrail<K extends [number, ...(string | number)[]]>(
    db: Database<unknown, K>,
    limit: RetentionLimit,
    now: Date,
    chunk: { readonly prefetch: (keys: readonly K[]) => Promise<void>; readonly remove: (key: K) => PrunedRecord[] },
  ): Promise<number> {
    if (limit.maxAgeMs === null && limit.maxRecords === null) return 0;
    let removed = 0;
    for (;;) {
      if (this.#closing !== null) return removed;
      const oldest = Array.from(db.getKeys({ limit: PRUNE_SLICE }));
      const due = oldest.slice(0, dueCount(oldest, entryCount(db), limit, now.getTime()));
      if (due.length === 0) return removed;
      await chunk.prefetch(due);
      const log = this.#log;
      const commit = () =>
        this.#durability.commit(
          this.#root.transaction(() => {
            const removed = due.flatMap(chunk.remove);
            if (log) this.#appendCounted(COUNTERS.prunes, (ordinal) => log.notePruned(removed, now.getTime(), ordinal));
          }),
        );
      // Alone with the log's sequencing (storage/lmdb/record-log-storage.ts, WRITTEN AS DATA): its note removes pending entries.
      await (log === null ? commit() : log.exclusively(commit));
      if (db === (this.#decisionRecords as unknown)) for (const key of due) this.#today.removed(key);
      removed += due.length;
      if (due.length < PRUNE_SLICE) return removed;
    }
  }

  /** What `#removeDecision` reads and removes for `keys`, and their entries in the record log's index, brought into memory. */
  async #prefetchDecisions(keys: readonly DecisionTimeKey[]): Promise<void> {
    await this.#prefetchRows(keys);
    const filters: FilterKey[] = [];
    for (const key of keys) {
      const record = this.#decisionRecords.get(key);
      if (record !== undefined) filters.push(filterKey(record.attestation.policyId, record.status, key[0], key[1]));
    }
    await Promise.all([
      prefetched(this.#root, this.#decisionFilters, filters),
      this.#log?.prefetchIndex(keys.map((key) => locators.decision(key[0], key[1]))),
    ]);
  }

  /**
   * What a decision's row reads (its record, its override and its confirmation), brought into memory off the event loop:
   * the decisions a query pages through may be old ones, which in a store larger than memory the OS no longer holds.
   */
  async #prefetchRows(keys: readonly DecisionTimeKey[]): Promise<void> {
    await Promise.all([
      prefetched(this.#root, this.#decisionRecords, keys),
      prefetched(
        this.#root,
        this.#decisions,
        keys.flatMap((key) => [key[1] + OVERRIDE_SUFFIX, key[1] + CONFIRMATION_SUFFIX]),
      ),
    ]);
  }

  /** A time-keyed trail's records `keys` and their entries in the record log's index, brought into memory. */
  async #prefetchTimed(
    db: Database<unknown, TimeKey>,
    keys: readonly TimeKey[],
    locatorOf: (ms: number, ordinal: number) => string,
  ): Promise<void> {
    await Promise.all([prefetched(this.#root, db, keys), this.#log?.prefetchIndex(keys.map((key) => locatorOf(key[0], key[1])))]);
  }

  /** Inside a write transaction: a decision, its index entries, its override and its confirmation; answers what it removed. */
  #removeDecision(key: DecisionTimeKey): PrunedRecord[] {
    const record = this.#decisionRecords.get(key);
    if (record !== undefined) this.#decisionFilters.removeSync(filterKey(record.attestation.policyId, record.status, key[0], key[1]));
    this.#decisionRecords.removeSync(key);
    const removed: PrunedRecord[] = [{ locator: locators.decision(key[0], key[1]), ms: key[0] }];
    // An override or confirmation is pending (if it is) under its own time: read before it goes.
    const override = this.#override(key[1]);
    if (override !== undefined && this.#decisions.removeSync(key[1] + OVERRIDE_SUFFIX))
      removed.push({ locator: locators.override(key[1]), ms: this.#instant(override.recordedAt) });
    const confirmation = this.#confirmation(key[1]);
    if (confirmation !== undefined && this.#decisions.removeSync(key[1] + CONFIRMATION_SUFFIX)) {
      removed.push({ locator: locators.confirmation(key[1]), ms: this.#instant(confirmation.recordedAt) });
    }
    return removed;
  }

  /** The exact stored bytes of the record `locator` names (record-log/locator.ts); undefined when it is gone. */
  #raw(locator: string): Buffer | undefined {
    const { kind, fields } = parseLocator(locator);
    if (kind === "prune") return this.#log?.readPrune(Number(fields[0]), Number(fields[1]));
    const { db, key } = this.#placeOf(kind, fields);
    const raw = db.getBinary(key) ?? undefined;
    return raw !== undefined && kind === "decision" ? this.#recordBytes(raw) : raw;
  }

  /**
   * Brings the pages of the records `locators` name into memory on a thread of libuv's pool (lmdb-js `prefetch`), so
   * that reading them next on the event loop costs no disk read: a record the OS has evicted (an old one, in a store
   * larger than memory) would otherwise stall the loop for as long as the disk takes. Prune notes are not prefetched.
   */
  async #prefetch(locators: readonly string[]): Promise<void> {
    const keys = new Map<Database<unknown, Key>, Key[]>();
    for (const locator of locators) {
      const { kind, fields } = parseLocator(locator);
      if (kind === "prune") continue;
      const { db, key } = this.#placeOf(kind, fields);
      const list = keys.get(db);
      if (list === undefined) keys.set(db, [key]);
      else list.push(key);
    }
    await Promise.all(Array.from(keys, ([db, list]) => prefetched(this.#root, db, list)));
  }

  /** The database and key of a record other than a prune note (record-log/locator.ts). */
  #placeOf(kind: Exclude<LogKind, "prune">, fields: readonly string[]): { readonly db: Database<unknown, Key>; readonly key: Key } {
    const ms = Number(fields[0]);
    const second = fields[1] ?? "";
    switch (kind) {
      case "decision":
        return { db: this.#decisionRecords as Database<unknown, Key>, key: [ms, second] };
      case "override":
        return { db: this.#decisions as Database<unknown, Key>, key: fields[0] + OVERRIDE_SUFFIX };
      case "confirmation":
        return { db: this.#decisions as Database<unknown, Key>, key: fields[0] + CONFIRMATION_SUFFIX };
      case "verification":
        return { db: this.#verifications as Database<unknown, Key>, key: [ms, Number(second)] };
      case "security":
        return { db: this.#security as Database<unknown, Key>, key: [ms, Number(second)] };
    }
  }

  /**
   * Every record the trail stores, with its locator (the record log's accounting), newest first where keyed by time, in
   * pages (slices.ts): the log walks it in slices when its counts do not add up.
   */
  *#stored(): Generator<StoredRecord> {
    for (const key of keyPages(this.#decisionRecords, { reverse: true }))
      yield* present(locators.decision(key[0], key[1]), this.#recordBytes(this.#decisionRecords.getBinary(key)));
    for (const key of keyPages(this.#decisions)) {
      const fingerprint = key.slice(0, key.indexOf("/"));
      yield* present(
        key.endsWith(OVERRIDE_SUFFIX) ? locators.override(fingerprint) : locators.confirmation(fingerprint),
        this.#decisions.getBinary(key),
      );
    }
    for (const key of keyPages(this.#verifications, { reverse: true }))
      yield* present(locators.verification(key[0], key[1]), this.#verifications.getBinary(key));
    for (const key of keyPages(this.#security, { reverse: true }))
      yield* present(locators.security(key[0], key[1]), this.#security.getBinary(key));
  }

  /** How many records the trail stores, in O(1) (LMDB's entry counts): the record log's accounting. */
  #storedCount(): number {
    return entryCount(this.#decisionRecords) + entryCount(this.#decisions) + entryCount(this.#verifications) + entryCount(this.#security);
  }

  /** The locator of the decision of `executionId` in this trail; undefined when there is none. */
  async #decisionLocator(executionId: string): Promise<string | undefined> {
    if (!executionId.isWellFormed()) return undefined;
    const fingerprint = executionFingerprint(executionId);
    await this.#readable();
    const instant =
      this.#decisionInstant === null ? (await this.#walkForDecision(fingerprint))?.[0] : await this.#decisionInstant(fingerprint);
    return instant === undefined ? undefined : locators.decision(instant, fingerprint);
  }

  #writeSecurityEvent(event: SecurityEventInput, at: Date): void {
    this.#write(() => this.#putSecurityEvent(event, at));
  }

  /** Inside a write transaction: a row (`count` for an aggregate); the counter moves past the events it stands for. */
  #putSecurityEvent(event: SecurityEventInput, at: Date, count?: number): void {
    this.#appendCounted(
      COUNTERS.securityEvents,
      (ordinal) => {
        const bytes = encoded(securityEventRow(event, `${at.getTime()}-${ordinal}`, at.toISOString(), count));
        this.#security.putSync([at.getTime(), ordinal], asStored(bytes));
        this.#log?.pendSync(at.getTime(), locators.security(at.getTime(), ordinal), entryLeafHash({ kind: "security", record: bytes }));
      },
      count,
    );
  }

  /**
   * Writes the aggregates of ended intervals (with `all`, of the current one too). Drained when the transaction runs,
   * like the API call count: `stats()`, a callback of the same sequence, sees each event either pending or stored.
   */
  #saveAggregates(all: boolean): void {
    if (this.#limiter.pending() === 0) return;
    this.#write(() => {
      const at = this.#now();
      for (const aggregate of this.#limiter.drain(at.getTime(), all)) this.#putSecurityEvent(aggregate.event, at, aggregate.count);
    });
  }

  /**
   * Queued with the environment's asynchronous `put`, like a decision: called from the replay store's conditional
   * write that resolves the override or consumes the confirmation key (`writeRecord`), the record is part of that write, committed and flushed with it or not at all.
   * Written once: only one such write succeeds per execution.
   */
  #putBeside(
    executionId: string,
    suffix: string,
    record: OverrideAudit | ConfirmationAudit,
    written: Promise<boolean | null> | undefined,
  ): void {
    this.#queue(() => {
      const fingerprint = executionFingerprint(executionId);
      const bytes = encoded(record);
      this.#watch(this.#decisions.put(fingerprint + suffix, asStored(bytes)));
      const kind: LogEntryKind = suffix === OVERRIDE_SUFFIX ? "override" : "confirmation";
      const locator = kind === "override" ? locators.override(fingerprint) : locators.confirmation(fingerprint);
      this.#logRecord(written, this.#instant(record.recordedAt), locator, kind, bytes);
    });
  }

  /**
   * Runs `puts`, which queue writes with the environment's asynchronous `put` (into the caller's conditional write),
   * unless the log is closing; every failure ends in `#fail`, never in an exception to the caller.
   */
  #queue(puts: () => void): void {
    if (this.#closing !== null) return;
    try {
      // lmdb-js fails a queued write on a closed environment later, from a setImmediate, as an uncaught exception.
      if ((this.#root as { status?: string }).status !== "open") throw new Error("the LMDB environment is closed");
      puts();
    } catch (error) {
      this.#fail(error);
    }
  }

  /** `write(ordinal)` stores the record (and its index entry), then the counter moves past the `events` it stands for. */
  #appendCounted(counter: Counter, write: (ordinal: number) => void, events = 1): void {
    const ordinal = this.#count(counter);
    write(ordinal);
    this.#counters.putSync(counter, ordinal + events);
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

  /** A queued write's failure is recorded by the durability watcher, never an unhandled rejection. */
  #watch(written: Promise<boolean>): void {
    this.#durability.settle(written);
  }

  /**
   * Queues `body` in the current write batch; every failure ends in `#fail`, never in an unhandled rejection. Skipped
   * while the environment's writes are held (the log is unhealthy meanwhile): an API call count waits for the next
   * flush, a verification or security event is not stored, as when its write fails.
   */
  #write(body: () => void): void {
    if (this.#closing !== null || !this.#durability.admits()) return;
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
    this.#durability.settle(
      committed.then((outcome) => {
        if (outcome !== null) this.#fail(outcome.error);
      }),
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
    this.#failedAt = Date.now();
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

  /**
   * The time key of the decision of `fingerprint`, found by walking the time index in slices: only without
   * `decisionInstant` (the development memory replay store), where the walk is linear in the trail.
   */
  async #walkForDecision(fingerprint: string): Promise<DecisionTimeKey | undefined> {
    const slicer = new Slicer();
    for (const key of keyPages(this.#decisionRecords)) {
      if (key[1] === fingerprint) return key;
      await slicer.pause();
    }
    return undefined;
  }

  /** A decision record's JSON bytes, as the record log hashes them, from its stored bytes (coded or not). */
  #recordBytes(raw: Buffer): Buffer;
  #recordBytes(raw: Buffer | undefined): Buffer | undefined;
  #recordBytes(raw: Buffer | undefined): Buffer | undefined {
    return raw === undefined ? undefined : RecordTemplates.of(this.#root).jsonBytes(raw);
  }

  #override(fingerprint: string): OverrideAudit | undefined {
    return this.#decisions.get(fingerprint + OVERRIDE_SUFFIX) as OverrideAudit | undefined;
  }

  #confirmation(fingerprint: string): ConfirmationAudit | undefined {
    return this.#decisions.get(fingerprint + CONFIRMATION_SUFFIX) as ConfirmationAudit | undefined;
  }
}

/** The record at `locator`, when its bytes were read. */
function* present(locator: string, raw: Buffer | undefined): Generator<StoredRecord> {
  if (raw !== undefined) yield { locator, raw };
}

/** The entries of `db`, counted by LMDB in O(1). */
function entryCount(db: { getStats(): unknown }): number {
  return (db.getStats() as { entryCount: number }).entryCount;
}

/**
 * Drops the former time index (FORMER_DECISION_TIMES) of a data dir written before records were coded: one write
 * transaction, which frees its pages without reading its leaves. Nothing reads it any more.
 */
function dropFormerTimes(root: RootDatabase, onError: (error: unknown) => void): void {
  if ((root as { readOnly?: boolean }).readOnly === true || !hasDatabase(root, FORMER_DECISION_TIMES)) return;
  LmdbDurability.of(root)
    .commit(root.openDB({ name: FORMER_DECISION_TIMES }).drop())
    .catch(onError);
}

/** Copied by name: only the declared fields are stored, whatever else the caller's object carries. */
function declaredDecision(entry: DecisionAudit): DecisionAudit {
  return {
    executionId: entry.executionId,
    endpoint: entry.endpoint,
    status: entry.status,
    ruleMatched: entry.ruleMatched,
    attestation: entry.attestation,
    ...(entry.signalProvenance === undefined ? {} : { signalProvenance: entry.signalProvenance }),
    recordedAt: entry.recordedAt,
  };
}
