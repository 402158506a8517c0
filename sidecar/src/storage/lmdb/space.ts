/**
 * How much of an LMDB data file holds data (docs/audit.md, "Running for years"): LMDB never shrinks its file; pages freed
 * by a write are reused by later ones, unless a read transaction still sees them. The file's size against the pages
 * in use tells an operator whether the file grew beyond what it holds (compaction: docs/sidecar.md).
 */
import type { RootDatabase } from "lmdb";

/** How much of the data file holds data, for `/metrics` (engine.ts): a file that grew far beyond it wants compaction. */
export interface StoreSpace {
  /** The file's size in bytes, as far as LMDB has written it. */
  readonly fileBytes: number;
  /** The bytes of its pages that hold data. */
  readonly usedBytes: number;
}

interface TreeStats {
  readonly pageSize: number;
  readonly treeBranchPageCount: number;
  readonly treeLeafPageCount: number;
  readonly overflowPages: number;
}

const pagesOf = (stats: TreeStats): number => stats.treeBranchPageCount + stats.treeLeafPageCount + stats.overflowPages;

/**
 * Reads LMDB's own counts (mdb_stat, mdb_env_info): one read per named database, none per entry. The file's pages are
 * the highest page written, plus one; those in use are every named database's B-tree, the main database's and the
 * free list's own.
 */
export function lmdbSpace(root: RootDatabase): StoreSpace {
  const env = root.getStats() as TreeStats & { readonly lastPageNumber: number; readonly free: TreeStats };
  let used = pagesOf(env) + pagesOf(env.free);
  // The main database's keys are the names of the named databases; read them all before opening any (opening one in
  // the middle of the walk ends the walk's read transaction).
  for (const name of Array.from(root.getKeys({}))) {
    if (typeof name !== "string") continue;
    try {
      used += pagesOf(root.openDB(name, {}).getStats() as TreeStats);
    } catch {
      // A key of the main database that names no database.
    }
  }
  return { fileBytes: (env.lastPageNumber + 1) * env.pageSize, usedBytes: used * env.pageSize };
}
