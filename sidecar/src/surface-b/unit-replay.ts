/**
 * The replay store of Surface B's own authorizer where a decision commits with its record (TrustRecordStore
 * `inOneTransaction`): the authorizer is made once, and each operation on a fingerprint goes to the replay store of
 * the execution unit that runs for that fingerprint (`run`), so the decision is written in that unit's transaction.
 * The authorizer only consumes; every operation is routed the same way all the same.
 *
 * INVARIANT (one unit per fingerprint in this process): the units of one fingerprint run one after another, so an
 * operation never reaches another request's unit. The database would order them the same way (the later one waits on
 * the row lock of the earlier one's uncommitted decision, then finds it consumed, or free again after a rollback).
 */
import type { ConsumeOptions, ReplayEntry, ReplayResult, ReplayStore, ReserveOptions, ResolveOverrideOptions } from "@writ/runtime";

interface Running {
  readonly replay: ReplayStore;
  readonly done: Promise<void>;
}

export class UnitReplayStore implements ReplayStore {
  readonly #running = new Map<string, Running>();

  /** Runs `work` with `replay` as this store for `fingerprint`, once the fingerprint's earlier units have ended. */
  async run<T>(fingerprint: string, replay: ReplayStore, work: () => Promise<T>): Promise<T> {
    for (let earlier = this.#running.get(fingerprint); earlier !== undefined; earlier = this.#running.get(fingerprint)) await earlier.done;
    let ended!: () => void;
    this.#running.set(fingerprint, { replay, done: new Promise<void>((resolve) => (ended = resolve)) });
    try {
      return await work();
    } finally {
      this.#running.delete(fingerprint);
      ended();
    }
  }

  async reserve(fingerprint: string, options?: ReserveOptions): Promise<ReplayResult> {
    return this.#of(fingerprint).reserve(fingerprint, options);
  }

  async consume(fingerprint: string, options?: ConsumeOptions): Promise<ReplayResult> {
    return this.#of(fingerprint).consume(fingerprint, options);
  }

  async startExecution(fingerprint: string, token: string, now?: number): Promise<ReplayResult> {
    return this.#of(fingerprint).startExecution(fingerprint, token, now);
  }

  async confirm(fingerprint: string, token: string, now?: number): Promise<ReplayResult> {
    return this.#of(fingerprint).confirm(fingerprint, token, now);
  }

  async fail(fingerprint: string, token: string, options?: { readonly ttlMs?: number; readonly now?: number }): Promise<ReplayResult> {
    return this.#of(fingerprint).fail(fingerprint, token, options);
  }

  async markPendingOverride(fingerprint: string, token: string, context: unknown, now?: number): Promise<ReplayResult> {
    return this.#of(fingerprint).markPendingOverride(fingerprint, token, context, now);
  }

  async resolveOverride(fingerprint: string, token: string, approved: boolean, options?: ResolveOverrideOptions): Promise<ReplayResult> {
    return this.#of(fingerprint).resolveOverride(fingerprint, token, approved, options);
  }

  async expire(fingerprint: string, now?: number): Promise<boolean> {
    return this.#of(fingerprint).expire(fingerprint, now);
  }

  async read(fingerprint: string): Promise<ReplayEntry | null> {
    return this.#of(fingerprint).read(fingerprint);
  }

  /** Sweeping is the shared replay store's (the backend sweeps it): there is nothing here to sweep. */
  async sweep(): Promise<number> {
    return 0;
  }

  /** Owns nothing: the units' stores end with their transactions. */
  async close(): Promise<void> {}

  #of(fingerprint: string): ReplayStore {
    const running = this.#running.get(fingerprint);
    // A fault of the caller, not of the store (rejected, as a store's failures are): every call comes from within
    // `run` for its fingerprint.
    if (running === undefined) throw new Error(`no execution unit runs for fingerprint \`${fingerprint}\``);
    return running.replay;
  }
}
