/**
 * The sidecar's replay store on LMDB: the runtime's LmdbReplayStore, with the audit trail's records. The authorizer
 * hands a transition's record AS DATA (`ConsumeOptions.record`, `ResolveOverrideOptions.record`), as it does to the
 * PostgreSQL store; here it is encoded into the puts that store it (transition-records.ts: the record and its index
 * entry) and those are handed, as data, with the call to the runtime store, which writes them in the transition's own
 * write transaction: committed exactly when the transition is, flushed in its fsync, answered after it (INVARIANT (a
 * transition is kept with its record), runtime records.ts). The answer then tells the record log whether the record
 * exists (held in memory until sequenced, record-log-storage.ts). One way: the runtime calls nothing of the sidecar back.
 */
import type { ConsumeOptions, ReplayEntry, ReplayResult, ReplayStore, ReserveOptions, ResolveOverrideOptions } from "@writ/runtime";
import type { LmdbReplayStore } from "@writ/runtime/lmdb";
import type { EncodedRecord, LmdbTransitionRecords } from "./transition-records.js";

export class LmdbRecordedReplayStore implements ReplayStore {
  /** The runtime store, which this one closes. */
  readonly replay: LmdbReplayStore;
  readonly #records: LmdbTransitionRecords;

  constructor(replay: LmdbReplayStore, records: LmdbTransitionRecords) {
    this.replay = replay;
    this.#records = records;
  }

  reserve(fingerprint: string, options?: ReserveOptions): Promise<ReplayResult> {
    return this.replay.reserve(fingerprint, options);
  }

  consume(fingerprint: string, options: ConsumeOptions = {}): Promise<ReplayResult> {
    const encoded = options.record === undefined ? undefined : this.#records.encode(options.record);
    if (encoded === undefined) return this.replay.consume(fingerprint, options);
    return this.#logged(encoded, this.replay.consume(fingerprint, { ...options, puts: encoded.puts }));
  }

  startExecution(fingerprint: string, token: string, now?: number): Promise<ReplayResult> {
    return this.replay.startExecution(fingerprint, token, now);
  }

  confirm(fingerprint: string, token: string, now?: number): Promise<ReplayResult> {
    return this.replay.confirm(fingerprint, token, now);
  }

  fail(fingerprint: string, token: string, options?: { readonly ttlMs?: number; readonly now?: number }): Promise<ReplayResult> {
    return this.replay.fail(fingerprint, token, options);
  }

  markPendingOverride(fingerprint: string, token: string, context: unknown, now?: number): Promise<ReplayResult> {
    return this.replay.markPendingOverride(fingerprint, token, context, now);
  }

  resolveOverride(fingerprint: string, token: string, approved: boolean, options: ResolveOverrideOptions = {}): Promise<ReplayResult> {
    const encoded = options.record === undefined ? undefined : this.#records.encode(options.record);
    if (encoded === undefined) return this.replay.resolveOverride(fingerprint, token, approved, options);
    return this.#logged(encoded, this.replay.resolveOverride(fingerprint, token, approved, { ...options, puts: encoded.puts }));
  }

  expire(fingerprint: string, now?: number): Promise<boolean> {
    return this.replay.expire(fingerprint, now);
  }

  sweep(now?: number): Promise<number> {
    return this.replay.sweep(now);
  }

  read(fingerprint: string): Promise<ReplayEntry | null> {
    return this.replay.read(fingerprint);
  }

  close(): Promise<void> {
    return this.replay.close();
  }

  /** `transition`, whose outcome says whether `encoded` was written: it was exactly when it succeeded; unknown when it failed. */
  #logged(encoded: EncodedRecord, transition: Promise<ReplayResult>): Promise<ReplayResult> {
    this.#records.logOnCommit(
      encoded,
      transition.then(
        (result) => result.ok,
        () => null,
      ),
    );
    return transition;
  }
}
