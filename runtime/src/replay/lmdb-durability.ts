/**
 * Write failures of one LMDB environment, watched in one place: every store that writes to the environment (replay,
 * audit, Surface B) hands its write promises here and waits for durability through `flushed()`, never `root.flushed`:
 * when a commit fails (a full disk), lmdb-js rejects the batch's writes with a second promise (`commitError`) that,
 * unhandled, ends the process, and never resolves that batch's flush (docs/sidecar.md, "A full disk, a failing data dir").
 *
 * INVARIANT (acknowledged means durable, under failure too): `flushed()` resolves only once `root.flushed` did, and
 * rejects with StoreUnavailableError when any commit of the environment fails while it waits, or when the flush takes
 * longer than `flushTimeoutMs` (a 503 for a write that did land is safe). HEALTH: failed until a write committed and
 * none failed for `recoveryHoldMs`; `probe()` writes one small key meanwhile. HOLD: the owner may hold every write
 * before it is queued (the sidecar, below its free-space reserve); `admit()` then throws StoreUnavailableError.
 */
import type { Database, RootDatabase } from "lmdb";
import { StoreUnavailableError } from "./errors.js";
import type { StoreHealth } from "./store.js";

/** Past this, a flush that has not completed is taken as a failure of the data dir (default of `flushTimeoutMs`). */
export const DEFAULT_FLUSH_TIMEOUT_MS = 10_000;
/**
 * Health turns `ok` again only once no write failed for this long (default of `recoveryHoldMs`): on a nearly full
 * disk small writes succeed between failing large ones, and `/health` must not flap between the two.
 */
export const DEFAULT_RECOVERY_HOLD_MS = 5_000;
const PROBE_DB = "writ-health";
/** How often the flush watchdog looks at the oldest waiter (at most; less when the timeout is shorter). */
const WATCHDOG_INTERVAL_MS = 1_000;

export interface LmdbDurabilityOptions {
  readonly flushTimeoutMs?: number;
  readonly recoveryHoldMs?: number;
  /** Told of each change of health (with the error that caused a failure), for the operator's log. */
  readonly onChange?: (health: StoreHealth, error?: unknown) => void;
}

interface Failure {
  readonly message: string;
  readonly since: string;
  /** Unix ms of the latest failure. */
  readonly last: number;
}

const durabilities = new WeakMap<RootDatabase, LmdbDurability>();

export class LmdbDurability {
  readonly #root: RootDatabase;
  readonly #flushTimeoutMs: number;
  readonly #recoveryHoldMs: number;
  #onChange: (health: StoreHealth, error?: unknown) => void;
  /** Waiters of `flushed()`, oldest first, with when they began: each is failed when a commit fails while it waits. */
  readonly #waiters = new Map<(error?: StoreUnavailableError) => void, number>();
  #watchdog: NodeJS.Timeout | null = null;
  /** What `/health` reports: kept until writes have succeeded for `recoveryHoldMs`. */
  #failure: Failure | null = null;
  /**
   * A commit failed and no flush has completed since: `root.flushed` may be the failed batch's promise, which never
   * resolves, so `flushed()` writes a probe first.
   */
  #stale = false;
  /** Incremented by every failure: a flush that saw none since it began proves the environment writes again. */
  #epoch = 0;
  readonly #probeDb: Database<number, string>;
  #probing: Promise<void> | null = null;
  /** Why writes are held (`hold`), and since when; null while they are admitted. */
  #held: { readonly reason: string; readonly since: string } | null = null;

  /** The one watcher of `root`: every store of an environment shares it (the first caller's options hold). */
  static of(root: RootDatabase, options: LmdbDurabilityOptions = {}): LmdbDurability {
    let durability = durabilities.get(root);
    if (durability === undefined) {
      durability = new LmdbDurability(root, options);
      durabilities.set(root, durability);
    } else if (options.onChange) {
      durability.#onChange = options.onChange;
    }
    return durability;
  }

  /** The watcher of `root` if one was made (`of`), without making one. */
  static existing(root: RootDatabase): LmdbDurability | undefined {
    return durabilities.get(root);
  }

  private constructor(root: RootDatabase, options: LmdbDurabilityOptions) {
    this.#root = root;
    this.#flushTimeoutMs = options.flushTimeoutMs ?? DEFAULT_FLUSH_TIMEOUT_MS;
    this.#recoveryHoldMs = options.recoveryHoldMs ?? DEFAULT_RECOVERY_HOLD_MS;
    this.#onChange = options.onChange ?? (() => undefined);
    // Opened now, while writes work: opening a database that does not exist yet is a synchronous write transaction,
    // which lmdb-js cannot run in the middle of a failed batch (its write thread aborts the process).
    this.#probeDb = root.openDB<number, string>(PROBE_DB, { encoding: "json" });
  }

  health(now: number = Date.now()): StoreHealth {
    if (this.#failure !== null && !this.#stale && now - this.#failure.last >= this.#recoveryHoldMs) {
      this.#failure = null;
      if (this.#held === null) this.#onChange({ ok: true, problem: null, since: null });
    }
    if (this.#held !== null) return { ok: false, problem: this.#held.reason, since: this.#held.since };
    return this.#failure === null
      ? { ok: true, problem: null, since: null }
      : { ok: false, problem: this.#failure.message, since: this.#failure.since };
  }

  /**
   * Holds every write from now on, `reason` saying why (the header's HOLD); null lets them through again. A change is
   * told to `onChange` as a change of health.
   */
  hold(reason: string | null): void {
    const before = this.#held;
    if (reason === null) {
      if (before === null) return;
      this.#held = null;
      this.#onChange(this.health());
      return;
    }
    this.#held = { reason, since: before?.since ?? new Date().toISOString() };
    if (before === null) this.#onChange(this.health());
  }

  /**
   * Before a store queues a write: refused while writes are held (the header's HOLD).
   * @throws StoreUnavailableError with the reason of the hold
   */
  admit(): void {
    if (this.#held !== null) throw new StoreUnavailableError(this.#held.reason);
  }

  /** Whether a write would be admitted now: for a write that is skipped rather than refused while held. */
  admits(): boolean {
    return this.#held === null;
  }

  /**
   * `write`, with its failure as a StoreUnavailableError (and recorded): for a write whose outcome the caller awaits.
   * @throws StoreUnavailableError
   */
  async commit<T>(write: Promise<T>): Promise<T> {
    try {
      return await write;
    } catch (error) {
      throw this.fail(error);
    }
  }

  /**
   * `write`'s value once it is committed AND on disk: what a store awaits before it answers (acknowledged means
   * durable). `commit` alone only means committed and visible.
   * @throws StoreUnavailableError
   */
  async durable<T>(write: Promise<T>): Promise<T> {
    const value = await this.commit(write);
    await this.flushed();
    return value;
  }

  /** A write nobody awaits (it commits with others): its failure is recorded, never an unhandled rejection. */
  settle(write: Promise<unknown>): void {
    write.then(
      () => undefined,
      (error: unknown) => void this.fail(error),
    );
  }

  /**
   * Resolves once every write committed so far is on disk. After a failed commit, first writes a probe and waits for
   * it (see `#stale`).
   * @throws StoreUnavailableError when a commit fails while waiting, or when the flush takes longer than the timeout
   */
  async flushed(): Promise<void> {
    if (this.#stale) {
      await this.probe();
      if (this.#stale) throw new StoreUnavailableError(this.#failure?.message ?? "data dir write failed");
    }
    await this.#waitForFlush();
  }

  /**
   * Records `error` as a failed write of the environment: health turns failed, every waiter of `flushed()` is failed.
   * Returns the StoreUnavailableError to throw.
   */
  fail(error: unknown): StoreUnavailableError {
    // lmdb-js's second promise of a failed commit (see the header): handled here, so it is never an unhandled
    // rejection, and its cause (ENOSPC) names the failure better than `Commit failed`.
    const commitError = (error as { commitError?: unknown } | null)?.commitError;
    if (commitError instanceof Promise) {
      commitError.catch((cause: unknown) => {
        if (this.#failure !== null) this.#failure = { ...this.#failure, message: `data dir write failed: ${describe(cause)}` };
      });
    }
    const unavailable =
      error instanceof StoreUnavailableError
        ? error
        : new StoreUnavailableError(`data dir write failed: ${describe(error)}`, { cause: error });
    const first = this.#failure === null;
    const now = Date.now();
    this.#failure = { message: unavailable.message, since: this.#failure?.since ?? new Date(now).toISOString(), last: now };
    this.#stale = true;
    this.#epoch += 1;
    // While writes are held, health says so already (and says the failure once they are let through).
    if (first && this.#held === null) this.#onChange(this.health(now), error);
    for (const waiter of [...this.#waiters.keys()]) waiter(unavailable);
    return unavailable;
  }

  /**
   * After a failure, writes one small key and waits for it to be flushed, so the environment is known to write again
   * (and health recovers) without traffic. One probe at a time (callers share it); the owner calls it on a timer.
   * Never throws.
   */
  probe(): Promise<void> {
    if (this.#failure === null || this.#held !== null) return Promise.resolve();
    this.health();
    this.#probing ??= (async () => {
      try {
        await this.commit(this.#probeDb.put("probe", Date.now()));
        await this.#waitForFlush();
      } catch {
        // Still failing: recorded by commit / #waitForFlush.
      } finally {
        this.#probing = null;
      }
    })();
    return this.#probing;
  }

  /**
   * `root.flushed`, failed by any commit failure meanwhile or by the timeout. `root.flushed` is one thenable whose
   * `then` waits for the batch current at the call, so each caller waits through a `then` of its own, made after its
   * write committed. The timeout is one watchdog for all waiters (the oldest decides), not a timer per request.
   */
  #waitForFlush(): Promise<void> {
    const epoch = this.#epoch;
    return new Promise<void>((resolve, reject) => {
      const done = (error?: StoreUnavailableError) => {
        this.#waiters.delete(done);
        if (error) reject(error);
        else resolve();
      };
      this.#waiters.set(done, Date.now());
      this.#startWatchdog();
      (this.#root.flushed as PromiseLike<unknown>).then(
        () => {
          // Only a flush with no failure since it began proves the environment writes again.
          if (this.#epoch === epoch) this.#stale = false;
          done();
        },
        (error: unknown) => done(this.fail(error)),
      );
    });
  }

  /** Fails every waiter once the oldest has waited `flushTimeoutMs`; runs only while there are waiters. */
  #startWatchdog(): void {
    if (this.#watchdog !== null) return;
    this.#watchdog = setInterval(
      () => {
        const oldest = this.#waiters.values().next();
        if (oldest.done === true) {
          clearInterval(this.#watchdog!);
          this.#watchdog = null;
        } else if (Date.now() - oldest.value >= this.#flushTimeoutMs) {
          this.fail(new Error(`the data dir did not confirm a write within ${this.#flushTimeoutMs} ms`));
        }
      },
      Math.min(WATCHDOG_INTERVAL_MS, this.#flushTimeoutMs),
    );
    // A pending flush alone does not keep the process alive.
    this.#watchdog.unref();
  }
}

/** The cause of a failed commit: lmdb-js carries the ENOSPC message in `commitError`'s rejection, not in its own. */
function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  return code === 28 || /no space left/i.test(message) ? `no space left on device (${message})` : message;
}
