/**
 * The kernel's word on whether a live process holds a data dir (docs/audit.md, "One live sidecar per log", with why
 * this lock): the owner of the data dir's record log, and `writ-sidecar compact` while it runs, hold an exclusive lock
 * on `<data dir>/writ.lock`, which the kernel releases when the holder's files close, at its death, before anyone reaps
 * it: a SIGKILLed zombie holds nothing, whatever its open mark says. The lock is fs-native-extensions' `tryLock` (an open
 * file description lock on Linux, which no other descriptor's close drops and LMDB's own locks never meet).
 *
 * Within one process the holders of a data dir share one lock, counted (a process has one record log per data dir;
 * tests open several): an open file description lock would otherwise refuse this process's second holder.
 * The file stays when released: removing it would let a process lock a new file while another still holds the old.
 */
import { closeSync, openSync } from "node:fs";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { tryLock } from "fs-native-extensions";
import type { RootDatabase } from "lmdb";
import { FILE_MODE } from "../data-dir.js";

export const LOCK_FILE = "writ.lock";
/**
 * How long a start waits for the lock to be free before the record log's open is refused (`awaitDataDirFree`), as a
 * fleet member waits for its instance lock (postgres/connection/instance-session.ts): a sidecar SIGKILLed a moment ago
 * holds it until its last thread has ended, later than it turned a zombie when a thread was in the middle of an fsync.
 */
export const START_LOCK_WAIT_MS = 3_000;
const START_LOCK_RETRY_MS = 100;

/** The locks this process holds, by lock file. */
const held = new Map<string, { readonly fd: number; holders: number }>();

/** The directory of an LMDB environment opened as the sidecar opens one (a directory): lmdb-js keeps it, untyped. */
export function environmentDir(root: RootDatabase): string {
  return (root as RootDatabase & { readonly path: string }).path;
}

export interface DataDirHold {
  /** Lets go of this hold (once); the lock is released with the process's last hold of the data dir. */
  release(): void;
}

/**
 * A hold of `dataDir` for this process; null when another process holds it.
 * @throws the file system's error when the lock file cannot be opened
 */
export function holdDataDir(dataDir: string): DataDirHold | null {
  const path = resolve(join(dataDir, LOCK_FILE));
  let lock = held.get(path);
  if (lock === undefined) {
    const fd = openSync(path, "a", FILE_MODE);
    let locked = false;
    try {
      locked = tryLock(fd);
    } finally {
      if (!locked) closeSync(fd);
    }
    if (!locked) return null;
    lock = { fd, holders: 0 };
    held.set(path, lock);
  }
  lock.holders += 1;
  const own = lock;
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      own.holders -= 1;
      if (own.holders === 0) {
        held.delete(path);
        closeSync(own.fd);
      }
    },
  };
}

/**
 * Whether the lock of `dataDir` is free (this process may hold it), or `held` says its holder is one this process opens
 * beside (a sibling of a sidecar of several processes), within `waitMs`, asked every START_LOCK_RETRY_MS.
 */
export async function awaitDataDirFree(
  dataDir: string,
  waitMs: number = START_LOCK_WAIT_MS,
  held: () => boolean = () => false,
): Promise<boolean> {
  for (const until = Date.now() + waitMs; ; await sleep(START_LOCK_RETRY_MS)) {
    const hold = holdDataDir(dataDir);
    hold?.release();
    if (hold !== null || held()) return true;
    if (Date.now() >= until) return false;
  }
}
