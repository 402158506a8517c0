/**
 * The LMDB data dir on disk is owner-only: it holds the audit trail, and often the signing key. It is created 0700
 * before LMDB opens it (lmdb-js would create it 0777 less the umask), and LMDB creates data.mdb and lock.mdb with
 * FILE_MODE. An existing dir, or LMDB files, that other users may access is left as it is (a mounted volume may be
 * shared with a group on purpose): a notice names them and the command that makes them private.
 */
import { mkdir, stat } from "node:fs/promises";
import { join } from "node:path";

export const FILE_MODE = 0o600;
const DIR_MODE = 0o700;
const LMDB_FILES = ["data.mdb", "lock.mdb"];

/** Creates `dir` owner-only when absent; returns a notice when it, or an LMDB file in it, is open to other users. */
export async function preparePrivateDir(dir: string): Promise<string | null> {
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
  const open: string[] = [];
  for (const path of [dir, ...LMDB_FILES.map((name) => join(dir, name))]) {
    const mode = await modeOf(path);
    if (mode !== null && (mode & 0o077) !== 0) open.push(`${path} (mode ${(mode & 0o777).toString(8)})`);
  }
  if (open.length === 0) return null;
  return `the data dir is open to other users: ${open.join(", ")}; run \`chmod -R go= ${dir}\` to make it owner-only`;
}

async function modeOf(path: string): Promise<number | null> {
  try {
    return (await stat(path)).mode;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}
