/**
 * The data dir's lock (storage/lmdb/data-dir-lock.ts): a live process holding it keeps every other process out, and the
 * record log's open is refused naming it; a process that died holds nothing, reaped or still a zombie.
 */
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { open } from "lmdb";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LOCK_FILE, awaitDataDirFree, holdDataDir } from "../../../src/storage/lmdb/data-dir-lock.js";
import { LmdbLogStorage } from "../../../src/storage/lmdb/record-log-storage.js";
import { InstanceInUseError } from "../../../src/storage/instance-in-use.js";
import { endUnreaped, killIntoZombie, type Unreaped } from "../../support/unreaped.js";
import { startLockHolder } from "../../support/lock-holder.js";
import { EMPTY_TRAIL } from "../../support/empty-trail.js";

describe("the data dir's lock", () => {
  let dir: string;
  const holders: Unreaped[] = [];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "writ-lock-"));
  });
  afterEach(async () => {
    for (const holder of holders.splice(0)) await endUnreaped(holder);
    await rm(dir, { recursive: true, force: true });
  });

  it("is one per process, counted: a second hold shares it, and it is let go with the last, leaving its file owner-only", async () => {
    const first = holdDataDir(dir)!;
    const second = holdDataDir(dir)!;
    expect(first).not.toBeNull();
    expect(second).not.toBeNull();
    first.release();
    first.release(); // once only: the second hold keeps the lock
    holders.push(await startLockHolder(dir, "refused"));
    second.release();
    // Released: another process takes it.
    holders.push(await startLockHolder(dir));
    expect(holdDataDir(dir)).toBeNull();
    expect(await readdir(dir)).toEqual([LOCK_FILE]);
    expect((await stat(join(dir, LOCK_FILE))).mode & 0o777).toBe(0o600);
  });

  it("held by another live process: refused, and the record log's open names the lock; once that process is a zombie, free", async () => {
    const holder = await startLockHolder(dir);
    holders.push(holder);
    expect(holdDataDir(dir)).toBeNull();
    const root = open({ path: dir, maxDbs: 32 });
    try {
      let refusal: unknown;
      try {
        new LmdbLogStorage(root, EMPTY_TRAIL, "locked-log");
      } catch (error) {
        refusal = error;
      }
      expect(refusal).toBeInstanceOf(InstanceInUseError);
      expect((refusal as Error).message).toBe(
        "the audit record log `locked-log` is in use by another live sidecar (another process holds the data dir's lock (writ.lock)): two sidecars must not share one log; give each sidecar its own data dir (SERVICE_DATA_DIR), and its own SERVICE_INSTANCE_ID if set",
      );

      // SIGKILLed and never reaped: the kernel let go of its lock at its death.
      await killIntoZombie(holder.pid);
      const log = new LmdbLogStorage(root, EMPTY_TRAIL, "locked-log");
      expect(log.logId).toBe("locked-log");
      await log.close();
    } finally {
      await root.close();
    }
  });

  it("a start waits for it: free once a holder killed meanwhile is dead, not free while one lives", async () => {
    const holder = await startLockHolder(dir);
    holders.push(holder);
    expect(await awaitDataDirFree(dir, 300)).toBe(false);
    const waiting = awaitDataDirFree(dir);
    await sleep(500);
    await killIntoZombie(holder.pid);
    expect(await waiting).toBe(true);
  });
});
