/**
 * The audit trail's store on LMDB (audit/audit-store.ts), in named databases of the environment the sidecar shares
 * with the replay store and Surface B (audit-databases.ts; docs/audit.md, "Storage (LMDB)"). Its owner opens and
 * closes that environment; the store only opens its databases. Writes and health: audit-writer.ts; decisions,
 * overrides and confirmations: transition-records.ts; reads: audit-reads.ts; retention: audit-prune.ts; the record
 * log's view: logged-trail.ts. Counts are O(1): LMDB's entry counts, the counters, and `decisions_today` counted as
 * the day goes (day-count.ts).
 */
import { entryLeafHash } from "@writ/runtime";
import type { Database, RootDatabase } from "lmdb";
import type { AuditStore, SecurityEventWrite, StoredCounts, TrailName, UnsavedCount } from "../../audit/audit-store.js";
import { locators } from "../../audit/record-log/locator.js";
import type { RetentionLimit } from "../../audit/retention.js";
import { securityEventRow } from "../../audit/security-event.js";
import type { DecisionDetail, DecisionQuery, DecisionRow, SecurityEventRow, SecurityQuery, VerificationAudit } from "../../audit/types.js";
import { COUNTERS, appendCounted, count, dropFormerTimes, entryCount, openAuditDatabases, type AuditDatabases } from "./audit-databases.js";
import { LmdbAuditPrune } from "./audit-prune.js";
import { LmdbAuditReads } from "./audit-reads.js";
import { LmdbAuditWriter } from "./audit-writer.js";
import { DayCount } from "./day-count.js";
import { backfillFilters } from "./decision-filters.js";
import { loggedTrail } from "./logged-trail.js";
import { markIncomplete } from "./record-log-open.js";
import { LmdbLogStorage } from "./record-log-storage.js";
import { RecordTemplates } from "./record-templates.js";
import { asStored, encoded } from "./stored-bytes.js";
import { LmdbTransitionRecords } from "./transition-records.js";

export interface LmdbAuditStoreOptions {
  /** The clock of records filed at arrival. */
  readonly now?: () => Date;
  /** Told about the failure that made the store unhealthy (and any later one), for the operator's log. */
  readonly onError?: (error: unknown) => void;
  /** Told of long work done at open (indexing an older trail), for the operator's log. */
  readonly onNotice?: (message: string) => void;
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
  /** The tamper-evident record log (docs/audit.md, "Tamper evidence"); default true. */
  readonly recordLog?: boolean;
  /** The record log's id when the data dir has none yet (SERVICE_INSTANCE_ID); absent: a random UUID. */
  readonly instanceId?: string | null;
  /** An export's disk reads a second at most (SERVICE_EXPORT_DISK_READS, read-pacer.ts); null: unbounded; absent: the default. */
  readonly exportDiskReads?: number | null;
  /**
   * For a process of a sidecar of several on this data dir (SERVICE_PROCESSES), its supervisor (open-marks.ts
   * `groupOf`): the record log is shared (record-log-storage.ts, SHARED); absent or null: one process.
   */
  readonly processGroup?: string | null;
}

export class LmdbAuditStore implements AuditStore {
  readonly logStorage: LmdbLogStorage | null;
  /** Decisions, overrides and confirmations, encoded for the replay store's transitions (transition-records.ts). */
  readonly records: LmdbTransitionRecords;
  readonly #dbs: AuditDatabases;
  readonly #writer: LmdbAuditWriter;
  readonly #reads: LmdbAuditReads;
  readonly #prune: LmdbAuditPrune;
  readonly #today: DayCount;
  /** Settles once every decision of the trail is in the filter index (older environments are indexed at open). */
  readonly #filtersReady: Promise<void>;
  /** Settles once the record log has taken in what it lacked at open (record-log-storage.ts `adoptUnlogged`). */
  readonly #adopted: Promise<void>;
  readonly #onError: (error: unknown) => void;

  /** Opens the store's databases in `root`; throws when they cannot be opened (e.g. `maxDbs` is exhausted). */
  constructor(root: RootDatabase, options: LmdbAuditStoreOptions = {}) {
    const dbs = openAuditDatabases(root, options.compressRecords ?? false);
    const now = options.now ?? (() => new Date());
    const onNotice = options.onNotice ?? (() => undefined);
    this.#dbs = dbs;
    this.#onError = options.onError ?? (() => undefined);
    const writer = new LmdbAuditWriter(root, dbs.durability, this.#onError);
    this.#writer = writer;
    const log =
      options.recordLog === false
        ? null
        : new LmdbLogStorage(
            root,
            loggedTrail(
              dbs,
              (executionId) => this.#reads.decisionKey(executionId),
              (ms, ordinal) => this.logStorage?.readPrune(ms, ordinal),
            ),
            options.instanceId ?? null,
            options.exportDiskReads,
            options.processGroup ?? null,
          );
    this.logStorage = log;
    this.records = new LmdbTransitionRecords(dbs, writer, options.codeRecords === false ? null : RecordTemplates.of(root), log, now);
    this.#today = new DayCount(dbs.decisionRecords);
    dropFormerTimes(root, (error) => writer.fail(error));
    if (log === null) markIncomplete(root);
    // In the background, in slices: the sidecar answers meanwhile, and what it writes is logged as usual.
    const adopting = Date.now();
    this.#adopted = (log?.adoptUnlogged() ?? Promise.resolve(0)).then(
      (adopted) => {
        if (adopted > 0)
          onNotice(
            `audit: ${adopted} records the record log lacked (written while it was off, or held by a process that crashed) are taken into it in ${Date.now() - adopting} ms`,
          );
      },
      (error: unknown) => writer.fail(error),
    );
    const indexing = Date.now();
    this.#filtersReady = backfillFilters(
      root,
      dbs.decisionRecords,
      (record) => ({ policyId: record.attestation.policyId, status: record.status }),
      dbs.decisionFilters,
      dbs.counters as unknown as Database<number, string>,
    ).then(
      (indexed) => {
        if (indexed > 0)
          onNotice(`audit: indexed ${indexed} decisions of an older trail for filtered queries in ${Date.now() - indexing} ms`);
      },
      (error: unknown) => writer.fail(error),
    );
    this.#reads = new LmdbAuditReads(dbs, writer, options.decisionInstant ?? null, this.#filtersReady);
    this.#prune = new LmdbAuditPrune(dbs, log, this.#reads, now);
  }

  healthy(): boolean {
    return this.#writer.healthy();
  }

  writable(): boolean {
    return this.#writer.writable();
  }

  noteFailure(error: unknown): void {
    this.#writer.fail(error);
  }

  putVerification(record: VerificationAudit, ms: number): void {
    const dbs = this.#dbs;
    this.#writer.write(() => {
      appendCounted(dbs, COUNTERS.verifications, (ordinal) => {
        const bytes = encoded(record);
        dbs.verifications.putSync([ms, ordinal], asStored(bytes));
        this.logStorage?.pendSync(ms, locators.verification(ms, ordinal), entryLeafHash({ kind: "verification", record: bytes }));
      });
      if (record.valid) dbs.counters.putSync(COUNTERS.validVerifications, count(dbs, COUNTERS.validVerifications) + 1);
    });
  }

  putSecurityEvents(take: () => readonly SecurityEventWrite[]): void {
    const dbs = this.#dbs;
    this.#writer.write(() => {
      for (const { event, at, count: events } of take()) {
        const ms = at.getTime();
        // The counter moves past the events the row stands for.
        appendCounted(
          dbs,
          COUNTERS.securityEvents,
          (ordinal) => {
            const bytes = encoded(securityEventRow(event, `${ms}-${ordinal}`, at.toISOString(), events));
            dbs.security.putSync([ms, ordinal], asStored(bytes));
            this.logStorage?.pendSync(ms, locators.security(ms, ordinal), entryLeafHash({ kind: "security", record: bytes }));
          },
          events,
        );
      }
    });
  }

  addApiCalls(unsaved: UnsavedCount): void {
    // Taken when the transaction runs: calls counted in between are included, and `counts` (a callback of the same
    // sequence) never sees a count both in memory and stored. A failed commit loses them: statistics.
    this.#writer.write(() => {
      const delta = unsaved.take();
      if (delta > 0) this.#dbs.counters.putSync(COUNTERS.apiCalls, count(this.#dbs, COUNTERS.apiCalls) + delta);
    });
  }

  flushed(): Promise<void> {
    return this.#writer.flushed();
  }

  listDecisions(query: DecisionQuery): Promise<DecisionRow[]> {
    return this.#reads.listDecisions(query);
  }

  getDecision(executionId: string): Promise<DecisionDetail | null> {
    return this.#reads.getDecision(executionId);
  }

  listSecurityEvents(query: SecurityQuery): Promise<SecurityEventRow[]> {
    return this.#reads.listSecurityEvents(query);
  }

  /**
   * The counters are read inside a write transaction, queued behind every record so far, with `alongside`: the stored
   * counts and the trail's in-memory ones are then read at one instant (a save runs in the same sequence of callbacks),
   * so none is counted twice or missed. Answered once that batch is flushed, like every read.
   */
  async counts<T>(now: Date, alongside: () => T): Promise<[StoredCounts, T]> {
    const dbs = this.#dbs;
    const today = await this.#writer.read(() => this.#today.count(now.getTime()));
    const counted = await this.#writer.read(() =>
      dbs.root.transaction((): [StoredCounts, T] => [
        {
          decisions: entryCount(dbs.decisionRecords),
          decisionsToday: today,
          verifications: count(dbs, COUNTERS.verifications),
          validVerifications: count(dbs, COUNTERS.validVerifications),
          securityEvents: count(dbs, COUNTERS.securityEvents),
          apiCalls: count(dbs, COUNTERS.apiCalls),
        },
        alongside(),
      ]),
    );
    await this.flushed();
    return counted;
  }

  /** By the process keeping the record log (record-log-storage.ts, SHARED): its prune notes go into the log it writes. */
  prune(trail: TrailName, limit: RetentionLimit, now: number, stopping: () => boolean): Promise<number> {
    if (this.logStorage !== null && !this.logStorage.owns()) return Promise.resolve(0);
    return this.#prune.prune(trail, limit, now, stopping);
  }

  close(settled: Promise<unknown>): Promise<void> {
    this.#writer.close();
    return Promise.all([this.flushed(), this.#filtersReady, this.#adopted, settled]).then(async () => {
      // The record log's open mark goes before the environment closes (record-log-storage.ts).
      await this.logStorage?.close().catch((error: unknown) => this.#onError(error));
    });
  }
}
