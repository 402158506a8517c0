/**
 * `writ-sidecar compact <data-dir>` (docs/sidecar.md, "Compaction"): a stopped sidecar's data file rewritten with only
 * the pages in use. LMDB never shrinks its file: pages freed by writes (retention, replaced values) are reused by later
 * writes, so the file stays at its largest size, and a data dir that once held much more than it holds now keeps that
 * space until compacted.
 *
 * The copy is LMDB's own compacting copy (mdb_env_copy2 with MDB_CP_COMPACT, lmdb-js `backup`) of a consistent
 * snapshot, written beside the file, flushed, then renamed over data.mdb: a crash at any point leaves either the old
 * file or the new one, both whole. A data dir that a running process has open (its lock, data-dir-lock.ts, or the open
 * mark of one that took none, storage/lmdb/record-log-storage.ts) is refused: writes after the snapshot would be lost with
 * the old file. The lock is held until the new file is in place, so no sidecar opens the data dir meanwhile.
 */
import { mkdir, open as openFile, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { open, type RootDatabase } from "lmdb";
import { openMarks } from "./record-log-open.js";
import { markIsStale, type OpenMark } from "../../audit/record-log/open-marks.js";
import { FILE_MODE } from "../data-dir.js";
import { holdDataDir } from "./data-dir-lock.js";

export interface Compaction {
  /** data.mdb's size before and after, in bytes. */
  readonly before: number;
  readonly after: number;
}

export class DataDirInUseError extends Error {
  override readonly name = "DataDirInUseError";
}

/** Compacts the data file of `dataDir`; `say` is told each step (for the command's progress lines). */
export async function compactDataDir(dataDir: string, say: (line: string) => void = () => undefined): Promise<Compaction> {
  const file = join(dataDir, "data.mdb");
  const before = (await stat(file)).size;
  const hold = holdDataDir(dataDir);
  if (hold === null) throw new DataDirInUseError("the data dir is held by a running sidecar: stop it first");
  try {
    const root = open({ path: dataDir, maxDbs: 32, noSubdir: false });
    const copy = join(dataDir, `compacting-${process.pid}`);
    try {
      const user = liveUser(root);
      if (user !== null) throw new DataDirInUseError(`the data dir is open by process ${user.pid} on ${user.host}: stop it first`);
      await rm(copy, { recursive: true, force: true });
      await mkdir(copy, { mode: 0o700 });
      say(`copying the pages in use of ${file} (${before} bytes)`);
      await root.backup(copy, true);
    } catch (error) {
      await root.close();
      await rm(copy, { recursive: true, force: true });
      throw error;
    }
    await root.close();
    const compacted = join(copy, "data.mdb");
    await flush(compacted, FILE_MODE);
    await rename(compacted, file);
    await flush(dataDir);
    await rm(copy, { recursive: true, force: true });
  } finally {
    hold.release();
  }
  const after = (await stat(file)).size;
  say(`compacted ${file}: ${before} to ${after} bytes`);
  return { before, after };
}

/** The open mark of a process that still runs with the data dir open, if any (open-marks.ts). */
function liveUser(root: RootDatabase): OpenMark | null {
  for (const { mark } of openMarks(root)) if (!markIsStale(mark)) return mark;
  return null;
}

/** fsync of a file (given `mode`, it is set first) or a directory. */
async function flush(path: string, mode?: number): Promise<void> {
  const handle = await openFile(path, "r");
  try {
    if (mode !== undefined) await handle.chmod(mode);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
