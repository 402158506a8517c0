/**
 * The data dir's free-space reserve (storage/lmdb/free-space.ts) against a scripted statfs: writes held below the
 * reserve with a reason a person reads, let through once above it by its margin, held while the free space is unknown
 * (a read that fails, or one not answered by the deadline); and the reserve a setting resolves to. The reserve on a
 * real full disk, under load: hardening/full-disk.stress.test.ts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_RESERVE_BYTES,
  FreeSpaceWatch,
  diskSpace,
  formatBytes,
  reserveBytes,
  type DiskSpace,
} from "../../../src/storage/lmdb/free-space.js";

const MiB = 2 ** 20;
const GiB = 2 ** 30;

/** Waits (up to 5 s, on a busy machine) until `check` passes. */
async function eventually(check: () => void): Promise<void> {
  for (const until = Date.now() + 5_000; ; await sleep(10)) {
    try {
      check();
      return;
    } catch (error) {
      if (Date.now() > until) throw error;
    }
  }
}

/** A watch over a scripted disk, sampled every 10 ms; `holds` is what it told the store, in order. */
async function scripted(reserve: number, free: number) {
  const disk = { free, total: 100 * GiB, read: null as null | (() => Promise<DiskSpace>) };
  const holds: (string | null)[] = [];
  const read = (): Promise<DiskSpace> => disk.read?.() ?? Promise.resolve({ freeBytes: disk.free, totalBytes: disk.total });
  const watch = await FreeSpaceWatch.start("/unused", { bytes: reserve }, (reason) => holds.push(reason), {
    read,
    intervalMs: 10,
    deadlineMs: 500,
  });
  return { disk, holds, watch, last: () => holds.at(-1) };
}

describe("the data dir's free-space reserve", () => {
  it("resolves a setting against the disk: the default is the larger of 256 MiB and 2%", () => {
    expect(reserveBytes("default", 10 * GiB)).toBe(DEFAULT_RESERVE_BYTES);
    expect(reserveBytes("default", 1000 * GiB)).toBe(20 * GiB);
    expect(reserveBytes({ bytes: 5 * MiB }, 1000 * GiB)).toBe(5 * MiB);
    expect(reserveBytes({ percent: 5 }, 1000 * GiB)).toBe(50 * GiB);
    expect(formatBytes(5 * MiB + MiB / 2)).toBe("5.5 MiB");
    expect(formatBytes(512)).toBe("512 bytes");
  });

  it("reads the data dir's own file system, as df does (the space an unprivileged process may use)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "writ-free-space-"));
    try {
      const space = await diskSpace(dir);
      const stats = statfsSync(dir);
      expect(space.totalBytes).toBe(stats.blocks * stats.bsize);
      // Other processes write meanwhile: within a few MiB.
      expect(Math.abs(space.freeBytes - stats.bavail * stats.bsize)).toBeLessThan(64 * MiB);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("holds writes from the start when below, says why, and lets them through only once above the reserve by its margin", async () => {
    const { disk, holds, watch, last } = await scripted(16 * MiB, 15 * MiB);
    try {
      expect(holds).toEqual([
        "the data dir's disk has 15.0 MiB free: writes are refused from below its reserve of 16.0 MiB (SERVICE_DATA_DIR_RESERVE) until it has 17.0 MiB free",
      ]);
      disk.free = 16.5 * MiB; // above the reserve, not by 1/16 of it
      await eventually(() => expect(last()).toMatch(/^the data dir's disk has 16\.5 MiB free: writes are refused/));
      disk.free = 17 * MiB;
      await eventually(() => expect(last()).toBeNull());
      disk.free = 16 * MiB - 1;
      await eventually(() =>
        expect(last()).toMatch(/^the data dir's disk has 16\.0 MiB free: writes are refused from below its reserve of 16\.0 MiB/),
      );
    } finally {
      watch.stop();
    }
  });

  it("holds writes while the free space is unknown: a read that fails, or one unanswered past the deadline", async () => {
    const { disk, watch, last } = await scripted(16 * MiB, GiB);
    try {
      expect(last()).toBeNull();
      disk.read = () => Promise.reject(new Error("EIO: i/o error, statfs"));
      await eventually(() => expect(last()).toBe("reading the data dir's free space failed: EIO: i/o error, statfs"));
      disk.read = null;
      await eventually(() => expect(last()).toBeNull());

      let answer: (space: DiskSpace) => void = () => undefined;
      let asked = 0;
      disk.read = () => new Promise((resolve) => ((answer = resolve), (asked += 1)));
      const asking = Date.now();
      await eventually(() => expect(last()).toMatch(/^the data dir's free space is unknown: statfs has not answered for \d+ ms$/));
      expect(Date.now() - asking).toBeGreaterThanOrEqual(500);
      expect(asked).toBe(1); // one read at a time
      disk.read = null;
      answer({ freeBytes: GiB, totalBytes: 100 * GiB });
      await eventually(() => expect(last()).toBeNull());
    } finally {
      watch.stop();
    }
  });

  // After a blocked loop the timers run before the I/O callbacks: a read answered during the block is not unanswered.
  it("does not hold writes when the loop, not statfs, was slow past the deadline", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const answering = once(server, "connection") as Promise<[Socket]>;
    const reader = connect((server.address() as AddressInfo).port, "127.0.0.1");
    const [answerer] = await answering;
    const { disk, holds, watch } = await scripted(16 * MiB, GiB);
    try {
      let asked = 0;
      disk.read = () => {
        asked += 1;
        disk.read = null;
        // Due with the watch's next tick: answers (an I/O event, as statfs's is), then blocks the loop past the deadline.
        setTimeout(() => {
          answerer.write("x");
          for (const until = Date.now() + 700; Date.now() < until;);
        }, 10);
        return new Promise((resolve) => reader.once("data", () => resolve({ freeBytes: GiB, totalBytes: 100 * GiB })));
      };
      await eventually(() => expect(asked).toBe(1));
      await sleep(800);
      expect(holds.filter((reason) => reason !== null)).toEqual([]);
    } finally {
      watch.stop();
      reader.destroy();
      answerer.destroy();
      server.close();
    }
  });
});
