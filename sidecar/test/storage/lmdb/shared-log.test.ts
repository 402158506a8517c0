/**
 * One data dir's record log shared by the processes of one sidecar (storage/lmdb/record-log-storage.ts, SHARED): a
 * process opens beside a live sibling that holds the data dir's lock, never beside another sidecar; it sequences and
 * checkpoints nothing while the sibling keeps the log, and takes the log over once the sibling is dead; a checkpoint it
 * asks for reaches the keeper through the store; only the keeper prunes. The sibling here is another process holding the
 * lock (lock-holder.ts).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { entryLeafHash } from "@writ/runtime";
import { open, type RootDatabase } from "lmdb";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { describeMark, markOf } from "../../../src/audit/record-log/open-marks.js";
import { InstanceInUseError } from "../../../src/storage/instance-in-use.js";
import { LmdbAuditStore } from "../../../src/storage/lmdb/audit-store.js";
import { LmdbLogStorage, RECORD_LOG_DATABASES } from "../../../src/storage/lmdb/record-log-storage.js";
import { LogOwnership } from "../../../src/storage/lmdb/record-log-owner.js";
import { openLogDatabases } from "../../../src/storage/lmdb/record-log-databases.js";
import { LOG_SIGNER } from "../../audit/record-log-contract.js";
import { startLockHolder } from "../../support/lock-holder.js";
import { endUnreaped, killIntoZombie, type Unreaped } from "../../support/unreaped.js";
import { EMPTY_TRAIL } from "../../support/empty-trail.js";

const GROUP = "supervisor-of-the-test";
const LOG = "shared-log";

describe("a record log shared by the processes of one sidecar (LMDB)", () => {
  let dir: string;
  let root: RootDatabase;
  let holder: Unreaped;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "writ-shared-log-"));
    root = open({ path: dir, maxDbs: 32 });
    holder = await startLockHolder(dir);
  });
  afterEach(async () => {
    await endUnreaped(holder);
    await root.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** The open mark the lock's holder would leave, as a process of `group` (none: another sidecar). */
  const holderMarked = async (group?: string): Promise<void> => {
    const meta = root.openDB<unknown, string>(RECORD_LOG_DATABASES.meta, { encoding: "json" });
    await meta.put("open:holder", group === undefined ? markOf(holder.pid) : { ...markOf(holder.pid), group });
  };
  const refusalOf = (group: string | null): Error => {
    try {
      new LmdbLogStorage(root, EMPTY_TRAIL, LOG, null, group);
    } catch (error) {
      return error as Error;
    }
    throw new Error("opened");
  };

  it("opens beside a live sibling holding the lock; is refused beside another sidecar, or with no sibling there", async () => {
    // The lock held, and no mark: no sibling holds it.
    expect(refusalOf(GROUP)).toBeInstanceOf(InstanceInUseError);
    expect(refusalOf(GROUP).message).toMatch(/another process holds the data dir's lock \(writ\.lock\)/);
    // Another sidecar's live process (no group, or another group): refused, named.
    await holderMarked();
    expect(refusalOf(GROUP).message).toContain(`${describeMark(markOf(holder.pid))} has this data dir open`);
    await holderMarked("another-supervisor");
    expect(refusalOf(GROUP).message).toContain(`${describeMark(markOf(holder.pid))} has this data dir open`);
    // A sibling: opened; a sidecar of one process is still refused.
    await holderMarked(GROUP);
    expect(refusalOf(null)).toBeInstanceOf(InstanceInUseError);
    const member = new LmdbLogStorage(root, EMPTY_TRAIL, LOG, null, GROUP);
    expect(member.logId).toBe(LOG);
    expect(member.owns()).toBe(false);
    await member.close();
  });

  it("sequences nothing while the sibling keeps the log, then takes it over once the sibling is dead", async () => {
    await holderMarked(GROUP);
    const member = new LmdbLogStorage(root, EMPTY_TRAIL, LOG, null, GROUP);
    expect(member.pendsWithRecord).toBe(true);
    // Records written with their pending entries, as a transition's puts carry them: by this process or the sibling.
    const leaves = ["a", "b", "c"].map((name) => entryLeafHash({ kind: "security", record: Buffer.from(name) }));
    await root.transaction(() => {
      leaves.forEach((leaf, i) => {
        const { db, key, value } = member.pendingPut(1_000 + i, `s:${1_000 + i}:0`, leaf);
        db.putSync(key, value);
      });
    });
    expect(await member.sequence(LOG, 256)).toBe(0);
    expect(await member.counts(LOG)).toMatchObject({ size: 0, pending: 3 });
    // Retention's chunks and the scheduled rounds ask `owns`: not while the sibling lives.
    expect(member.owns()).toBe(false);

    await killIntoZombie(holder.pid);
    expect(await member.sequence(LOG, 256)).toBe(3);
    expect(member.owns()).toBe(true);
    const checkpoint = await member.checkpoint(LOG, LOG_SIGNER, new Date());
    expect(checkpoint?.size).toBe(3);
    expect(await member.counts(LOG)).toMatchObject({ size: 3, pending: 0 });
    await member.close();
  });

  it("retention runs in the process keeping the log only: its prune notes go into the log it writes", async () => {
    await holderMarked(GROUP);
    const store = new LmdbAuditStore(root, { processGroup: GROUP, instanceId: LOG });
    for (let ms = 1_000; ms < 1_003; ms++)
      store.putVerification({ executionId: `v-${ms}`, valid: true, checks: {}, errors: [], recordedAt: new Date(ms).toISOString() }, ms);
    await store.flushed();
    const keepOne = { maxAgeMs: null, maxRecords: 1 };
    expect(await store.prune("verifications", keepOne, Date.now(), () => false)).toBe(0);
    await killIntoZombie(holder.pid);
    expect(await store.prune("verifications", keepOne, Date.now(), () => false)).toBe(2);
    await store.close(Promise.resolve());
  });

  it("a checkpoint asked by a process not keeping the log is seen once by the keeper", async () => {
    await killIntoZombie(holder.pid);
    // In one process both hold the lock (data-dir-lock.ts counts holds): one asks, the other answers.
    const dbs = openLogDatabases(root);
    const keeper = new LogOwnership(dbs, GROUP);
    const asking = new LogOwnership(dbs, GROUP);
    expect(keeper.holds).toBe(true);
    expect(keeper.checkpointWanted()).toBe(false);
    await asking.askCheckpoint();
    expect(keeper.checkpointWanted()).toBe(true);
    expect(keeper.checkpointWanted()).toBe(false);
    await asking.askCheckpoint();
    expect(keeper.checkpointWanted()).toBe(true);
    // A sidecar of one process has no one to ask it.
    const single = new LogOwnership(dbs, null);
    expect(single.checkpointWanted()).toBe(false);
    for (const ownership of [keeper, asking, single]) ownership.release();
  });
});
