/**
 * Keeps the record log current in the background (docs/audit.md, "Serving the log"): every SEQUENCE_INTERVAL_MS it
 * appends what is pending, in transactions of SEQUENCE_BATCH records, at most ROUND_BATCHES a round, and signs a
 * checkpoint once `everyRecords` entries were appended since the last one, or `intervalMs` has passed and the log
 * grew. Never on a request's path; one round at a time; nothing while the store fails writes. A failure is reported
 * and the next round tries again: nothing pending is lost, it stays pending.
 *
 * On a fleet's database, every `intervalMs` a round also takes over the stale logs (log-storage.ts `stale`: their
 * sidecar is gone) and signs their checkpoints with this sidecar's key. Where processes share one log (log-storage.ts
 * `owns`), the rounds run in the one keeping it, and a forced round in another waits for the keeper's checkpoint.
 */
import type { SignedCheckpoint } from "@writ/runtime";
import type { CheckpointSigner, RecordLogStorage } from "./log-storage.js";

export interface CheckpointSchedule {
  /** What signs checkpoints: the sidecar's signing key (the trust root of attestations vouches for it); null: records are sequenced, never checkpointed. */
  readonly signer: CheckpointSigner | null;
  readonly intervalMs: number;
  readonly everyRecords: number;
}

export const DEFAULT_CHECKPOINTS = { intervalMs: 10_000, everyRecords: 1_000 } as const;

/** How often pending records are appended: short, so each transaction stays small (a few hundred records at full load). */
export const SEQUENCE_INTERVAL_MS = 200;
/** Pending records appended per transaction: a few milliseconds of the event loop each on LMDB. */
export const SEQUENCE_BATCH = 256;
/**
 * Batches a scheduled round appends at most before it looks at its checkpoint (at 200 ms a round, 20,480 records a
 * second): while records arrive faster than a batch a round, a round still ends, and checkpoints are still signed; the
 * next round goes on with the backlog.
 */
export const ROUND_BATCHES = 16;
/** A log whose oldest pending record is this many checkpoint intervals old is taken over by another sidecar. */
export const STALE_AFTER_INTERVALS = 6;

export interface CheckpointerOptions {
  readonly onError: (error: unknown) => void;
  /** Whether the store takes writes now; while it fails them, no round is attempted (it is tried again later). */
  readonly writable?: () => boolean;
  readonly now?: () => Date;
}

export class Checkpointer {
  readonly #storage: RecordLogStorage;
  readonly #schedule: CheckpointSchedule;
  readonly #onError: (error: unknown) => void;
  readonly #writable: () => boolean;
  readonly #now: () => Date;
  readonly #timer: NodeJS.Timeout;
  #running: Promise<SignedCheckpoint | null> | null = null;
  #stopped = false;
  /** Size and time of the latest checkpoint this sidecar knows of; read from the store at the first round. */
  #latest: { size: number; at: number } | null = null;
  /** When stale logs were last looked for. */
  #staleCheckedAt = Date.now();

  constructor(storage: RecordLogStorage, schedule: CheckpointSchedule, options: CheckpointerOptions) {
    this.#storage = storage;
    this.#schedule = schedule;
    this.#onError = options.onError;
    this.#writable = options.writable ?? (() => true);
    this.#now = options.now ?? (() => new Date());
    this.#timer = setInterval(() => void this.#round(false).catch(() => undefined), SEQUENCE_INTERVAL_MS);
    this.#timer.unref();
  }

  /** Appends everything pending and signs a checkpoint when the log grew: what an export or a test waits for. */
  now(): Promise<SignedCheckpoint | null> {
    return this.#round(true);
  }

  /** No more rounds; resolves once the one under way (if any) has finished. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#running?.catch(() => undefined);
  }

  /** One round, or joins the one under way; a forced round after a scheduled one runs too. */
  async #round(force: boolean): Promise<SignedCheckpoint | null> {
    if (this.#running !== null) {
      if (!force) return null;
      await this.#running.catch(() => undefined);
      return this.#round(true);
    }
    if (this.#stopped || !this.#writable()) return null;
    this.#running = this.#work(force).finally(() => (this.#running = null));
    return this.#running;
  }

  async #work(asked: boolean): Promise<SignedCheckpoint | null> {
    try {
      if (!asked && this.#storage.owns?.() === false) return null;
      const force = asked || (this.#storage.checkpointWanted?.() ?? false);
      const own = this.#storage.logId;
      if (!(await this.#sequenceAll(own, force))) return null;
      const signer = this.#schedule.signer;
      if (signer === null) return null;
      if (Date.now() - this.#staleCheckedAt >= this.#schedule.intervalMs) await this.#takeOverStale(signer);
      const counts = await this.#storage.counts(own);
      if (counts === null) return null;
      this.#latest ??= { size: counts.latest?.size ?? 0, at: counts.latest === null ? Date.now() : Date.parse(counts.latest.timestamp) };
      const grown = counts.size - this.#latest.size;
      const due = force || grown >= this.#schedule.everyRecords || (grown > 0 && Date.now() - this.#latest.at >= this.#schedule.intervalMs);
      if (!due) return null;
      const checkpoint = await this.#storage.checkpoint(own, signer, this.#now());
      if (checkpoint !== null) this.#latest = { size: checkpoint.size, at: Date.now() };
      return checkpoint;
    } catch (error) {
      this.#onError(error);
      throw error;
    }
  }

  /**
   * Appends the pending records of `logId`, batch after batch: a forced round what was pending when it began (records
   * keep arriving under load: it would never end), a scheduled one at most ROUND_BATCHES batches. False when stopped
   * meanwhile (a scheduled round).
   */
  async #sequenceAll(logId: string, force: boolean): Promise<boolean> {
    const budget = force ? ((await this.#storage.counts(logId))?.pending ?? 0) : ROUND_BATCHES * SEQUENCE_BATCH;
    for (let appended = 0; ;) {
      const batch = await this.#storage.sequence(logId, SEQUENCE_BATCH);
      appended += batch;
      if (batch < SEQUENCE_BATCH || appended >= budget) return true;
      if (this.#stopped && !force) return false;
    }
  }

  async #takeOverStale(signer: CheckpointSigner): Promise<void> {
    this.#staleCheckedAt = Date.now();
    for (const logId of await this.#storage.stale(Date.now() - STALE_AFTER_INTERVALS * this.#schedule.intervalMs)) {
      if (!(await this.#sequenceAll(logId, false))) return;
      await this.#storage.checkpoint(logId, signer, this.#now());
    }
  }
}
