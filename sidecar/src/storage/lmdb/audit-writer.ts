/**
 * How the LMDB audit store writes and reads, and its health. Every record is one `root.transaction(callback)`, queued
 * and not awaited: lmdb-js runs the callbacks of one event turn in one write transaction, so a record, its index entry
 * and its counter commit together. Writes go through the root: once it is closing its `transaction` throws at once,
 * where a write queued on a child database of a closed environment fails later outside any promise. A callback never
 * throws after its first write (a batch shares the transaction): the record, the only value whose encoding can fail,
 * goes first.
 *
 * HEALTH. Commits are watched by the environment's one `LmdbDurability`, never by awaiting `root.flushed`. Unhealthy
 * while the environment's writes fail or are held (below the free-space reserve: `write` skips them), and for
 * DEFAULT_RECOVERY_HOLD_MS after any failed write, commit or read of its own; healthy again once writes succeed.
 */
import { DEFAULT_RECOVERY_HOLD_MS, type LmdbDurability } from "@writ/runtime/lmdb";
import type { RootDatabase } from "lmdb";

export class LmdbAuditWriter {
  readonly #root: RootDatabase;
  readonly #durability: LmdbDurability;
  readonly #onError: (error: unknown) => void;
  /** Unix ms of the latest failure of the log's own (a throwing write body, a failed read); null when none. */
  #failedAt: number | null = null;
  #closed = false;

  constructor(root: RootDatabase, durability: LmdbDurability, onError: (error: unknown) => void) {
    this.#root = root;
    this.#durability = durability;
    this.#onError = onError;
  }

  healthy(): boolean {
    if (!this.#durability.health().ok) return false;
    return this.#failedAt === null || Date.now() - this.#failedAt >= DEFAULT_RECOVERY_HOLD_MS;
  }

  writable(): boolean {
    return this.#durability.health().ok;
  }

  /** From now on writes are dropped and reads throw. */
  close(): void {
    this.#closed = true;
  }

  fail(error: unknown): void {
    this.#failedAt = Date.now();
    this.#onError(error);
  }

  /**
   * Queues `body` in the current write batch; every failure ends in `fail`, never in an unhandled rejection. Skipped
   * while the environment's writes are held (the log is unhealthy meanwhile): an API call count waits for the next
   * save, a verification or security event is not stored, as when its write fails.
   */
  write(body: () => void): void {
    if (this.#closed || !this.#durability.admits()) return;
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
      this.fail(error);
      return;
    }
    this.#durability.settle(
      committed.then((outcome) => {
        if (outcome !== null) this.fail(outcome.error);
      }),
    );
  }

  /**
   * Whether a record is to be written now: not once the log is closed, nor on an environment that is closing, which
   * counts as a failure (lmdb-js fails a queued write on a closed environment later, from a setImmediate, as an uncaught
   * exception).
   */
  accepting(): boolean {
    if (this.#closed) return false;
    if ((this.#root as { status?: string }).status === "open") return true;
    this.fail(new Error("the LMDB environment is closed"));
    return false;
  }

  /**
   * Runs `puts`, which queue writes with the environment's asynchronous `put` (into the next write batch), unless the log
   * is closed; every failure ends in `fail`, never in an exception to the caller.
   */
  queue(puts: () => void): void {
    if (!this.accepting()) return;
    try {
      puts();
    } catch (error) {
      this.fail(error);
    }
  }

  /** A queued write's failure is recorded by the durability watcher, never an unhandled rejection. */
  watch(written: Promise<boolean>): void {
    this.#durability.settle(written);
  }

  async flushed(): Promise<void> {
    try {
      await this.#durability.flushed();
    } catch {
      // Recorded by the environment's durability watcher: `audit_db` and `store` in /health say so.
    }
  }

  /** Reads see the writes queued before them, once durable (a read never reports what a crash could still undo). */
  async readable(): Promise<void> {
    if (this.#closed) throw new Error("audit log is closed");
    await this.flushed();
  }

  /** `body`'s answer; a failure counts against the health, and throws. */
  async read<T>(body: () => T | Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (error) {
      this.fail(error);
      throw error;
    }
  }
}
