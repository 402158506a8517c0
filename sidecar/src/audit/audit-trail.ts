/**
 * The audit trail's policy, written once over any engine's `AuditStore` (audit-store.ts): security events admitted
 * through one SecurityEventLimiter, API calls counted in memory and saved every `apiCallFlushMs` and on close (a crash
 * loses up to one interval of them: statistics, not acknowledged writes), retention run on its schedule one run at a
 * time, the record log checkpointed, and the closing state: once closing, records are dropped, reads throw and
 * `healthy()` is false. Reads see every write queued before them, once durable. docs/audit.md, "Structure".
 */
import { Checkpointer, DEFAULT_CHECKPOINTS, type CheckpointSchedule } from "./record-log/checkpointer.js";
import { RecordLog } from "./record-log/record-log.js";
import type { AuditStore, TrailName } from "./audit-store.js";
import { AuditHousekeeping } from "./housekeeping.js";
import { DEFAULT_AUDIT_RETENTION, type AuditRetention } from "./retention.js";
import { DEFAULT_SECURITY_EVENT_LIMITS, SecurityEventLimiter, type SecurityEventLimits } from "./security-event-limiter.js";
import type {
  AuditLog,
  AuditStats,
  DecisionDetail,
  DecisionQuery,
  DecisionRow,
  SecurityEventInput,
  SecurityEventRow,
  SecurityQuery,
  VerificationAudit,
} from "./types.js";

export interface AuditTrailOptions {
  /** The clock of security events, of retention and of `stats()` without an argument. */
  readonly now?: () => Date;
  /** How often the in-memory API call count and ended security-event aggregates are saved; default 1,000 ms. */
  readonly apiCallFlushMs?: number;
  /** Aggregation of security events per source and interval; default DEFAULT_SECURITY_EVENT_LIMITS. */
  readonly securityEvents?: SecurityEventLimits;
  /** How long each trail keeps its records; default DEFAULT_AUDIT_RETENTION. */
  readonly retention?: AuditRetention;
  /** How often records past their retention are removed; default 60,000 ms. */
  readonly pruneIntervalMs?: number;
  /** When and with which key the record log is checkpointed; absent: DEFAULT_CHECKPOINTS, no key (logged, not signed). */
  readonly checkpoints?: CheckpointSchedule | undefined;
}

/** The trails in the order retention prunes them. */
const TRAILS: readonly TrailName[] = ["decisions", "verifications", "security"];

export class AuditTrail implements AuditLog {
  /** The tamper-evident log of every record of this trail, for the `/audit/log` routes; null when it is off. */
  readonly recordLog: RecordLog | null;
  readonly #store: AuditStore;
  readonly #checkpointer: Checkpointer | null;
  readonly #now: () => Date;
  readonly #limiter: SecurityEventLimiter;
  readonly #retention: AuditRetention;
  readonly #housekeeping: AuditHousekeeping;
  #unsavedApiCalls = 0;
  #pruning: Promise<number> | null = null;
  #closing: Promise<void> | null = null;

  constructor(store: AuditStore, options: AuditTrailOptions = {}) {
    this.#store = store;
    this.#now = options.now ?? (() => new Date());
    this.#limiter = new SecurityEventLimiter(options.securityEvents ?? DEFAULT_SECURITY_EVENT_LIMITS);
    this.#retention = options.retention ?? DEFAULT_AUDIT_RETENTION;
    const storage = store.logStorage;
    this.#checkpointer =
      storage === null
        ? null
        : new Checkpointer(storage, options.checkpoints ?? { signer: null, ...DEFAULT_CHECKPOINTS }, {
            onError: (error) => store.noteFailure(error),
            writable: () => store.writable(),
          });
    this.recordLog = storage === null ? null : new RecordLog(storage, this.#checkpointer);
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
  }

  healthy(): boolean {
    return this.#closing === null && this.#store.healthy();
  }

  recordVerification(entry: VerificationAudit): void {
    if (this.#closing !== null) return;
    // Copied by name: only the declared fields are stored, whatever else the caller's object carries.
    const record: VerificationAudit = {
      executionId: entry.executionId,
      valid: entry.valid,
      checks: entry.checks,
      errors: entry.errors,
      recordedAt: entry.recordedAt,
    };
    this.#store.putVerification(record, recordInstant(entry.recordedAt, this.#now));
  }

  /** Written at once when it is the first of its type from its source in the interval, else counted (security-event-limiter.ts). */
  recordSecurityEvent(event: SecurityEventInput): void {
    if (this.#closing !== null) return;
    const at = this.#now();
    if (this.#limiter.admit(event, at.getTime())) this.#store.putSecurityEvents(() => [{ event, at }]);
  }

  countApiCall(): void {
    this.#unsavedApiCalls += 1;
  }

  flushed(): Promise<void> {
    return this.#store.flushed();
  }

  async listDecisions(query: DecisionQuery): Promise<DecisionRow[]> {
    await this.#readable();
    return this.#store.listDecisions(query);
  }

  async getDecision(executionId: string): Promise<DecisionDetail | null> {
    // No decision can be stored under an id with a lone surrogate: its fingerprint cannot even be computed.
    if (!executionId.isWellFormed()) return null;
    await this.#readable();
    return this.#store.getDecision(executionId);
  }

  async stats(now: Date = this.#now()): Promise<AuditStats> {
    await this.#readable();
    const [stored, memory] = await this.#store.counts(now, () => ({
      securityEvents: this.#limiter.pending(),
      apiCalls: this.#unsavedApiCalls,
    }));
    return {
      total_decisions: String(stored.decisions),
      decisions_today: String(stored.decisionsToday),
      total_verifications: String(stored.verifications),
      valid_verifications: String(stored.validVerifications),
      invalid_verifications: String(stored.verifications - stored.validVerifications),
      // Stored, and counted into an aggregate row not written yet.
      total_security_events: String(stored.securityEvents + memory.securityEvents),
      total_api_calls: String(stored.apiCalls + memory.apiCalls),
    };
  }

  async listSecurityEvents(query: SecurityQuery): Promise<SecurityEventRow[]> {
    await this.#readable();
    return this.#store.listSecurityEvents(query);
  }

  /**
   * Removes the records past their retention (retention.ts), trail by trail, oldest first; one run at a time, stopped
   * between chunks by `close()`. Returns how many records it removed.
   */
  prune(now: Date = this.#now()): Promise<number> {
    this.#pruning ??= (async () => {
      try {
        let removed = 0;
        for (const trail of TRAILS) {
          const limit = this.#retention[trail];
          if (limit.maxAgeMs === null && limit.maxRecords === null) continue;
          removed += await this.#store.prune(trail, limit, now.getTime(), () => this.#closing !== null);
        }
        return removed;
      } finally {
        this.#pruning = null;
      }
    })();
    return this.#pruning;
  }

  /** Saves the API call count and pending aggregates and waits for every write; the engine's owner closes the engine. */
  close(): Promise<void> {
    if (this.#closing === null) {
      this.#housekeeping.stop();
      const checkpointing = this.#checkpointer?.stop();
      this.#saveApiCalls();
      this.#saveAggregates(true);
      // Set after the save: from here on, records are dropped and reads throw.
      this.#closing = this.#store.close(Promise.all([checkpointing, this.#pruning?.catch(() => 0)]));
    }
    return this.#closing;
  }

  /** Writes the aggregates of ended intervals (with `all`, of the current one too), drained when the write runs. */
  #saveAggregates(all: boolean): void {
    if (this.#limiter.pending() === 0) return;
    this.#store.putSecurityEvents(() => {
      const at = this.#now();
      return this.#limiter.drain(at.getTime(), all).map(({ event, count }) => ({ event, at, count }));
    });
  }

  #saveApiCalls(): void {
    if (this.#unsavedApiCalls === 0) return;
    this.#store.addApiCalls({
      take: () => {
        const delta = this.#unsavedApiCalls;
        this.#unsavedApiCalls = 0;
        return delta;
      },
      giveBack: (count) => (this.#unsavedApiCalls += count),
    });
  }

  async #readable(): Promise<void> {
    if (this.#closing !== null) throw new Error("audit log is closed");
    await this.#store.flushed();
  }
}

/** Where a record sorts in time (Unix ms). A malformed `recordedAt` (never one the runtime signs) files it at arrival. */
export function recordInstant(iso: string, now: () => Date): number {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : now().getTime();
}
