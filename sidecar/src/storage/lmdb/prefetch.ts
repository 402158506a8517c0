/**
 * Reading a store larger than memory without waiting on the disk on the event loop (docs/audit.md, "No disk read on the
 * event loop"): `prefetched` brings the pages of `keys` (each key's B-tree path and every page of its value) into memory
 * on a thread of libuv's pool, so that reading them next on the loop costs no disk read.
 *
 * INVARIANT (no prefetch of a closed environment): lmdb-js 3.5.6's `prefetch` on a database whose environment is closed
 * crashes the process (a segmentation fault, not an exception), so it is called only while the root is open, checked
 * synchronously just before: once `close()` has begun, the root is no longer operational, and it waits for prefetches
 * already started. lmdb-js's `prefetch` also never calls back when its native read fails (it logs the error), so the
 * wait is bounded: after PREFETCH_WAIT_MS the caller goes on and reads the keys itself, as it would without one (a
 * prefetch is only an optimization; a read of a closed environment throws as usual).
 *
 * INVARIANT (no prefetch while commits fail): nor is it called while the environment's commits fail (its
 * LmdbDurability unhealthy, e.g. a full disk): a failing store is not one to make fast. (The abort after failed page
 * writes that hardening/full-disk.stress.test.ts meets now and then is a heap overflow in lmdb-js's own error message,
 * docs/sidecar.md "A full disk, a failing data dir", reproduced without prefetches by scripts/repro/; this rule does
 * not prevent it.)
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
