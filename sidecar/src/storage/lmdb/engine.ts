/**
 * The LMDB engine (`SERVICE_STORE=lmdb`, the embedded default) as the registry carries it (../engine.ts): its settings,
 * its backend, `writ-sidecar compact`, the data file's series of `/metrics`, and lmdb-js's failed commits: it rejects
 * promises of its own when a commit fails (a full disk), while the stores answer 503 for the writes they await.
 */
import { snapshotSeries } from "../../observability/series.js";
import type { StorageEngine } from "../engine.js";
import type { LmdbBackend } from "./backend.js";
import { LMDB_SETTINGS, type LmdbStorageConfig } from "./config.js";

export const LMDB_ENGINE: StorageEngine<LmdbStorageConfig, LmdbBackend> = {
  settings: LMDB_SETTINGS,
  open: async () => (await import("./backend.js")).openLmdbBackend,
  commands: [
    {
      name: "compact",
      operands: ["<data-dir>"],
      summary: "rewrite a stopped sidecar's LMDB data file with only the pages in use, giving back the space it freed",
      run: async ([dataDir], _env, say) => void (await (await import("./compact.js")).compactDataDir(dataDir!, say)),
    },
  ],
  metrics: (backend) =>
    snapshotSeries(
      () => backend.space(),
      [
        [
          "writ_lmdb_file_bytes",
          'Size of the LMDB data file (data.mdb) in bytes: LMDB never shrinks it (docs/sidecar.md, "Compaction"); absent without one',
          (space) => space.fileBytes,
        ],
        [
          "writ_lmdb_used_bytes",
          "Bytes of the LMDB data file that hold data (every database's pages); the rest is free pages LMDB reuses",
          (space) => space.usedBytes,
        ],
      ],
    ),
  // `Commit failed`, or the errno of the failed write (ENOSPC is 28).
  failedWrite: (error) =>
    error instanceof Error &&
    ("commitError" in error || /^No space left on device/.test(error.message) || (error as { code?: unknown }).code === 28),
};
