/**
 * `writ-sidecar compact` (storage/lmdb/compact.ts): a data file that grew, then had most of its records removed, is
 * rewritten with only its pages in use, and every record reads back the same; a data dir that a running process has
 * open (its open mark, or the data dir's lock) is refused, untouched.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RECORD_LOG_DATABASES } from "../../../src/storage/lmdb/record-log-storage.js";
import { markOf } from "../../../src/audit/record-log/open-marks.js";
import { DataDirInUseError, compactDataDir } from "../../../src/storage/lmdb/compact.js";
import { lmdbSpace } from "../../../src/storage/lmdb/space.js";
import { startLockHolder } from "../../support/lock-holder.js";
import { endUnreaped } from "../../support/unreaped.js";

describe("compacting an LMDB data dir", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "writ-compact-"));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  /** 20,000 records of 1 KB written, then all but every tenth removed: the file keeps its size. */
  async function fragmented(): Promise<void> {
    const root = open({ path: dir, maxDbs: 32 });
    const db = root.openDB<string, number>("records", { encoding: "json" });
    await root.transaction(() => {
      for (let i = 0; i < 20_000; i++) db.putSync(i, `${i}:${"r".repeat(1_000)}`);
    });
    await root.transaction(() => {
      for (let i = 0; i < 20_000; i++) if (i % 10 !== 0) db.removeSync(i);
    });
    const space = lmdbSpace(root);
    expect(space.usedBytes * 3).toBeLessThan(space.fileBytes);
    await root.close();
  }

  it("rewrites the file with its pages in use only, every record intact, owner-only, and nothing left beside it", async () => {
    await fragmented();
    const lines: string[] = [];
    const { before, after } = await compactDataDir(dir, (line) => lines.push(line));
    expect(after * 3).toBeLessThan(before);
    expect((await stat(join(dir, "data.mdb"))).size).toBe(after);
    expect((await stat(join(dir, "data.mdb"))).mode & 0o777).toBe(0o600);
    expect((await readdir(dir)).sort()).toEqual(["data.mdb", "lock.mdb", "writ.lock"]);
    expect(lines.at(-1)).toBe(`compacted ${join(dir, "data.mdb")}: ${before} to ${after} bytes`);
    const root = open({ path: dir, maxDbs: 32 });
    const db = root.openDB<string, number>("records", { encoding: "json" });
    expect(Array.from(db.getKeys({}))).toEqual(Array.from({ length: 2_000 }, (_, i) => i * 10));
    expect(db.get(19_990)).toBe(`19990:${"r".repeat(1_000)}`);
    await root.close();
  });

  it("refuses a data dir that a running process has open, and leaves it as it was", async () => {
    await fragmented();
    const other = spawn("sleep", ["30"]);
    try {
      const root = open({ path: dir, maxDbs: 32 });
      await root.openDB(RECORD_LOG_DATABASES.meta, { encoding: "json" }).put("open:other", markOf(other.pid!));
      await root.close();
      const before = (await stat(join(dir, "data.mdb"))).size;
      await expect(compactDataDir(dir)).rejects.toThrow(DataDirInUseError);
      await expect(compactDataDir(dir)).rejects.toThrow(`the data dir is open by process ${other.pid}`);
      expect((await stat(join(dir, "data.mdb"))).size).toBe(before);
      expect((await readdir(dir)).sort()).toEqual(["data.mdb", "lock.mdb", "writ.lock"]);
    } finally {
      other.kill();
    }
  });

  it("refuses a data dir whose lock another process holds (a sidecar with the log open), and leaves it as it was", async () => {
    await fragmented();
    const before = (await stat(join(dir, "data.mdb"))).size;
    const sidecar = await startLockHolder(dir);
    try {
      await expect(compactDataDir(dir)).rejects.toThrow(new DataDirInUseError("the data dir is held by a running sidecar: stop it first"));
      expect((await stat(join(dir, "data.mdb"))).size).toBe(before);
      expect((await readdir(dir)).sort()).toEqual(["data.mdb", "lock.mdb", "writ.lock"]);
    } finally {
      await endUnreaped(sidecar);
    }
  });
});
