/**
 * What a transition of the LMDB replay store writes besides its entry, handed to it AS DATA with the call (docs/replay.md,
 * "Records on LMDB"): puts into databases of the same environment, such as the sidecar's audit trail's (a decision's
 * record, its index entry, the record log's pending entry). The store writes them in the transition's own write
 * transaction, only when the transition succeeds: they commit exactly when it does and reach the disk in its fsync, and
 * a refused transition writes none of them. The caller encodes them before the call, so the store calls nothing back
 * and knows nothing of what they hold.
 */
import type { Database, Key } from "lmdb";
import type { ConsumeOptions, ResolveOverrideOptions } from "./store.js";

/** `value` into `db`, a database of the store's environment, under `key`: encoded as `db` encodes. */
export interface LmdbPut {
  readonly db: Database<unknown, Key>;
  readonly key: Key;
  readonly value: unknown;
}

export interface LmdbConsumeOptions extends ConsumeOptions {
  /** Written with the consumption, exactly when it is (above). */
  readonly puts?: readonly LmdbPut[];
}

export interface LmdbResolveOverrideOptions extends ResolveOverrideOptions {
  /** Written with the resolution, exactly when it is (above). */
  readonly puts?: readonly LmdbPut[];
}

/** Inside a conditional block (lmdb-replay-log.ts `ifHead`): queued with the asynchronous put, committed with the block. */
export function queuePuts(puts: readonly LmdbPut[], settle: (written: Promise<boolean>) => void): void {
  for (const put of puts) settle(put.db.put(put.key, put.value));
}

/** Inside a write transaction callback. */
export function writePuts(puts: readonly LmdbPut[]): void {
  for (const put of puts) put.db.putSync(put.key, put.value);
}
