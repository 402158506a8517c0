/**
 * When the record log is checkpointed (docs/audit.md, "Tamper evidence"): every `intervalMs`, and as soon as
 * `everyRecords` records were written since the last checkpoint, whichever comes first; never on a request's path,
 * one at a time, and not while the store fails writes (a full disk: sequencing would only add failing transactions).
 * A failure is reported (the trail turns unhealthy for a while) and the next round tries again: nothing pending is
 * lost, it stays pending.
 */
import type { SignedCheckpoint, SigningKey } from "@writ/runtime";

export interface CheckpointSchedule {
  /** The key checkpoints are signed with: the sidecar's signing key (the trust root of attestations vouches for it). */
  readonly key: SigningKey;
  readonly intervalMs: number;
  readonly everyRecords: number;
}

export const DEFAULT_CHECKPOINTS = { intervalMs: 10_000, everyRecords: 1_000 } as const;

export class Checkpointer {
  readonly #schedule: CheckpointSchedule;
  readonly #checkpoint: (key: SigningKey) => Promise<SignedCheckpoint | null>;
  readonly #onError: (error: unknown) => void;
  readonly #timer: NodeJS.Timeout;
  #recorded = 0;
  #running: Promise<SignedCheckpoint | null> | null = null;
  #stopped = false;

  readonly #writable: () => boolean;

  /** `writable`: whether the store takes writes now; while it fails them (a full disk), no checkpoint is attempted. */
  constructor(
    schedule: CheckpointSchedule,
    checkpoint: (key: SigningKey) => Promise<SignedCheckpoint | null>,
    onError: (error: unknown) => void,
    writable: () => boolean = () => true,
  ) {
    this.#schedule = schedule;
    this.#checkpoint = checkpoint;
    this.#onError = onError;
    this.#writable = writable;
    this.#timer = setInterval(() => void this.now().catch(() => undefined), schedule.intervalMs);
    this.#timer.unref();
  }

  /** A record was written: checkpoints once `everyRecords` have been. */
  recorded(): void {
    this.#recorded += 1;
    if (this.#recorded >= this.#schedule.everyRecords && this.#running === null) setImmediate(() => void this.now().catch(() => undefined));
  }

  /** Checkpoints now, or joins the checkpoint under way; nothing while the store fails writes (it is tried again later). */
  now(): Promise<SignedCheckpoint | null> {
    if (this.#stopped || !this.#writable()) return Promise.resolve(null);
    this.#running ??= (async () => {
      this.#recorded = 0;
      try {
        return await this.#checkpoint(this.#schedule.key);
      } catch (error) {
        this.#onError(error);
        throw error;
      } finally {
        this.#running = null;
      }
    })();
    return this.#running;
  }

  /** No more checkpoints; resolves once the one under way (if any) has finished. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#running?.catch(() => undefined);
  }
}
