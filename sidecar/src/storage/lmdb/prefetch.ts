/**
 * Reading a store larger than memory without waiting on the disk on the event loop (docs/audit.md, "No disk read on the
 * event loop"): `prefetched` brings the pages of `keys` (each key's B-tree path and every page of its value) into memory
 * on a thread of libuv's pool, so that reading them next on the loop costs no disk read.
 *
 * INVARIANT (no prefetch of a closed environment): lmdb-js's `prefetch` of a closed environment crashes the process
 * (docs/storage-engines.md, "What the LMDB engine works around in lmdb-js"), so it is called only while the root is
 * open, checked synchronously just before. It may never call back, so the wait is bounded by PREFETCH_WAIT_MS, after
 * which the caller reads the keys itself (a prefetch is only an optimization).
 * INVARIANT (no prefetch while commits fail): nor while the environment's LmdbDurability is unhealthy (a full disk): a
 * failing store is not one to make fast. This does not prevent lmdb-js's abort after failed page writes.
 */
import { LmdbDurability } from "@writ/runtime/lmdb";
import type { Database, Key, RootDatabase } from "lmdb";

/** The longest a caller waits for a prefetch; far above a disk read's time, so reached only when one failed. */
export const PREFETCH_WAIT_MS = 5_000;

/** lmdb-js's root `isOperational()` (not in its types): false once `close()` has begun. */
function operational(root: RootDatabase): boolean {
  return (root as unknown as { isOperational(): boolean }).isOperational();
}

/** Whether the environment's commits succeed, as far as its durability watcher (when it has one) knows. */
function writing(root: RootDatabase): boolean {
  return LmdbDurability.existing(root)?.health().ok ?? true;
}

/** Brings the pages of `keys` of `db`, a database of `root`, into memory off the event loop (the header). */
export async function prefetched<K extends Key>(root: RootDatabase, db: Database<unknown, K>, keys: readonly K[]): Promise<void> {
  if (keys.length === 0 || !operational(root) || !writing(root)) return;
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, PREFETCH_WAIT_MS);
    timer.unref();
  });
  try {
    await Promise.race([db.prefetch(keys as K[]), waited]);
  } finally {
    clearTimeout(timer);
  }
}
