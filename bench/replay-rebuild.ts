/**
 * The replay store's fingerprint set at start (`tsx bench/replay-rebuild.ts`, docs/running-for-years.md "The replay
 * check, in memory"): writes BENCH_REBUILD_ENTRIES consumed entries (default 10,000,000) into a fresh data dir's entry
 * log in the store's own format (runtime/src/replay/lmdb-replay-log.ts: SHA-256 hex fingerprints, as writ makes them,
 * 100,000 a write transaction), closes it, then opens an LmdbReplayStore on it and times the rebuild of its set until
 * `ready()`, printing its progress, the set's bytes, the process's resident memory before and after, and the log's size
 * on disk (what the rebuild reads). The data dir is under BENCH_SOAK_DIR (default /work/soak-data) and removed at the end.
 * The page cache is whatever the machine has: the log was just written, so the figure is a warm start; a cold one
 * reads the log's size from the disk first.
 */
import { createHash, randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { open } from "lmdb";
import { fingerprintHash } from "../runtime/src/replay/fingerprint-set.js";
import { makeEntry } from "../runtime/src/replay/lifecycle.js";
import { LmdbReplayLog } from "../runtime/src/replay/lmdb-replay-log.js";
import { LmdbReplayStore } from "../runtime/src/replay/lmdb-store.js";

const entries = Number((process.env["BENCH_REBUILD_ENTRIES"] ?? "10000000").replaceAll("_", ""));
if (!Number.isSafeInteger(entries) || entries < 1) throw new Error("BENCH_REBUILD_ENTRIES must be a positive integer");
const dir = join(resolve(process.env["BENCH_SOAK_DIR"] ?? "/work/soak-data"), `replay-rebuild-${entries}`);
const BATCH = 100_000;
const mib = (bytes: number) => `${(bytes / 1_048_576).toFixed(0)} MiB`;

await rm(dir, { recursive: true, force: true });
try {
  const seeding = performance.now();
  const root = open({ path: dir, maxDbs: 8, noSubdir: false });
  const log = new LmdbReplayLog(root, "replay");
  for (let from = 0; from < entries; from += BATCH) {
    const to = Math.min(entries, from + BATCH);
    root.transactionSync(() => {
      for (let i = from; i < to; i++) {
        const fingerprint = createHash("sha256").update(`rebuild-${i}`).digest("hex");
        const at = 1_796_600_000_000 + i;
        const entry = makeEntry({ fingerprint, state: "consumed", token: randomUUID(), createdAt: at, updatedAt: at, expiresAt: null });
        log.putSync(i + 1, fingerprintHash(fingerprint), entry);
      }
      log.setHeadSync(to);
    });
  }
  const stats = root.openDB({ name: "replay-log" }).getStats() as {
    pageSize: number;
    treeLeafPageCount: number;
    treeBranchPageCount: number;
  };
  const logBytes = (stats.treeLeafPageCount + stats.treeBranchPageCount) * stats.pageSize;
  await root.close();
  console.log(
    `wrote ${entries.toLocaleString("en-US")} log entries in ${((performance.now() - seeding) / 1000).toFixed(0)} s; the log takes ${mib(logBytes)} (${(logBytes / entries).toFixed(0)} bytes an entry)`,
  );

  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const store = new LmdbReplayStore(dir, {
    onRebuild: (p) => {
      if (p.done || p.read % 1_048_576 < 65_536)
        console.log(`  ${p.read.toLocaleString("en-US")} of ${p.total.toLocaleString("en-US")} keys, ${(p.elapsedMs / 1000).toFixed(1)} s`);
    },
  });
  await store.ready();
  const seconds = (performance.now() - started) / 1000;
  global.gc?.();
  const set = store.fingerprintSet()!;
  console.log(
    `rebuilt the set of ${set.size.toLocaleString("en-US")} fingerprints in ${seconds.toFixed(1)} s: ${mib(set.bytes)} of slots (${(set.bytes / set.size).toFixed(1)} bytes a fingerprint); resident memory ${mib(rssBefore)} before, ${mib(process.memoryUsage().rss)} after`,
  );
  await store.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}
