/**
 * The embedded backend (`SERVICE_STORE=lmdb`, the default): one LMDB environment in the data dir holds the replay
 * store, the audit trail and Surface B's records side by side, so a decision's record, handed as data to the replay
 * store's write transaction (replay-store.ts), commits and flushes with the consumption in one fsync. Without a data dir, only
 * the development memory store (or none) is available and nothing is audited.
 */
import { MemoryReplayStore, type ReplayStore } from "@writ/runtime";
import { LmdbDurability, LmdbReplayStore } from "@writ/runtime/lmdb";
import { open, type RootDatabase } from "lmdb";
import { DisabledAuditLog } from "../../audit/disabled-audit-log.js";
import { LmdbAuditLog, type LmdbAuditLogOptions } from "./audit-log.js";
import type { AuditLog } from "../../audit/types.js";
import { LmdbTrustRecordStore } from "./record-store.js";
import { LmdbBundlePins } from "./bundle-pins.js";
import { lmdbSpace, type StoreSpace } from "./space.js";
import { rebuildLog } from "./replay-rebuild.js";
import { STORE_PROBE_INTERVAL_MS, type BackendOpener, type StorageBackend } from "../backend.js";
import { FILE_MODE, preparePrivateDir } from "../data-dir.js";
import { awaitDataDirFree } from "./data-dir-lock.js";
import { groupOf } from "../../audit/record-log/open-marks.js";
import { siblingOpen } from "./record-log-open.js";
import { FreeSpaceWatch, formatBytes } from "./free-space.js";
import type { LmdbStorageConfig } from "./config.js";

/** The backend, with how much of its data file holds data (space.ts; null without a data dir): engine.ts's series. */
export interface LmdbBackend extends StorageBackend {
  space(): StoreSpace | null;
}

export const openLmdbBackend: BackendOpener<LmdbStorageConfig, LmdbBackend> = async (
  config,
  storage,
  reporters,
  notices,
  checkpointSigner,
) => {
  const root = storage.dataDir === null ? null : await openRoot(storage.dataDir, notices);
  // One watcher of write failures for the environment, shared by the replay store, the audit and Surface B.
  const durability =
    root === null ? null : LmdbDurability.of(root, { onChange: (health, error) => reporters.onStoreHealth?.(health, error) });
  // Below the reserve, writes are held before lmdb-js meets a full disk (free-space.ts).
  const freeSpace =
    durability === null ? null : await FreeSpaceWatch.start(storage.dataDir!, storage.reserve, (reason) => durability.hold(reason));
  if (freeSpace?.reserveBytes === 0) {
    freeSpace.stop();
    reporters.onWarning?.(
      'SERVICE_DATA_DIR_RESERVE is 0: writes go on until the data dir\'s disk is full, where lmdb-js can abort the process (docs/sidecar.md, "A full disk, a failing data dir")',
    );
  } else if (freeSpace !== null) {
    notices.push(
      `data dir: writes are refused while its disk has less than ${formatBytes(freeSpace.reserveBytes)} free (SERVICE_DATA_DIR_RESERVE)`,
    );
  }
  let lmdbReplay: LmdbReplayStore | null = null;
  // A decision's audit record is keyed by time; the LMDB replay entry of its fingerprint, written in the same
  // transaction, says when (INVARIANT (a decision's replay entry is created at its issuedAt)). The development memory
  // store forgets at restart, so with it a lookup walks the audit's time index instead.
  const decisionInstant =
    storage.replay === "lmdb" ? async (fingerprint: string) => (await lmdbReplay?.read(fingerprint))?.createdAt : undefined;
  // The record log's owner holds the data dir's lock: a predecessor killed a moment ago may still hold it. A process of
  // several opens beside a live sibling, whichever holds the lock (record-log-storage.ts, SHARED).
  const group = config.processes.count > 1 ? groupOf(process.ppid) : null;
  if (config.audit && config.auditLog && root !== null)
    await awaitDataDirFree(storage.dataDir!, undefined, () => group !== null && siblingOpen(root, group));
  const audit: AuditLog =
    config.audit && root
      ? await openAuditLog(root, {
          onError: (error) => reporters.onAuditError?.(error),
          onNotice: (message) => reporters.onNotice?.(message),
          securityEvents: config.securityEvents,
          retention: config.auditRetention,
          pruneIntervalMs: config.maintenance.auditPruneMs,
          recordLog: config.auditLog,
          checkpoints: { signer: checkpointSigner, ...config.auditCheckpoints },
          instanceId: config.instanceId,
          compressRecords: storage.compressRecords,
          codeRecords: storage.codeRecords,
          exportDiskReads: storage.exportDiskReads,
          processGroup: group,
          ...(decisionInstant ? { decisionInstant } : {}),
        })
      : new DisabledAuditLog();
  const recorded = audit instanceof LmdbAuditLog ? audit : null;
  if (storage.replay === "lmdb") {
    const log = rebuildLog((message) => reporters.onNotice?.(message));
    lmdbReplay = new LmdbReplayStore(root!, { onRebuild: log });
    // Listening only with the whole set: a failed rebuild fails the start (every replay check would refuse anyway).
    try {
      await lmdbReplay.ready();
    } catch (error) {
      await audit.close().catch(() => undefined);
      await root!.close();
      throw error;
    }
  }
  let store: ReplayStore | null = null;
  if (lmdbReplay !== null) store = recorded?.recording(lmdbReplay) ?? lmdbReplay;
  // The development memory store has no write to share: a record is stored after its transition succeeded.
  else if (storage.replay === "memory")
    store = new MemoryReplayStore(recorded === null ? {} : { writeRecord: (record) => recorded.recordTransition(record) });
  if (store === null) notices.push("SERVICE_REPLAY_STORE is `none`: every execution fails closed (INV-REPLAY-001)");

  const sweep = store ? setInterval(() => void store.sweep().catch(() => undefined), config.maintenance.replaySweepMs) : null;
  sweep?.unref();
  // Recovery needs no traffic: once space is freed, the probe's write succeeds and `store` in /health is ok again.
  const probe = durability === null ? null : setInterval(() => void durability.probe(), STORE_PROBE_INTERVAL_MS);
  probe?.unref();

  return {
    replay: store,
    audit,
    trustRecords: root === null ? null : new LmdbTrustRecordStore(root),
    bundlePins: root === null ? null : new LmdbBundlePins(root),
    health: () => durability?.health() ?? null,
    answerWithinMs: null,
    space: () => (root === null || (root as { status?: string }).status !== "open" ? null : lmdbSpace(root)),
    async close() {
      if (sweep) clearInterval(sweep);
      if (probe) clearInterval(probe);
      freeSpace?.stop();
      await audit.close();
      // The replay store does not own the shared root: closing it only stops its use; the root is flushed and closed here.
      await store?.close().catch(() => undefined);
      if (root) {
        // A data dir that cannot flush (full) must not hang the shutdown: what it failed was never acknowledged.
        await durability?.flushed().catch(() => undefined);
        await root.close();
      }
    },
  };
};

/** The LMDB audit trail; the environment is closed when it refuses to open (another live sidecar has the data dir open). */
async function openAuditLog(root: RootDatabase, options: LmdbAuditLogOptions): Promise<LmdbAuditLog> {
  try {
    return new LmdbAuditLog(root, options);
  } catch (error) {
    await root.close();
    throw error;
  }
}

/** The LMDB environment in `dataDir`, owner-only (data-dir.ts). */
async function openRoot(dataDir: string, notices: string[]): Promise<RootDatabase> {
  const openToOthers = await preparePrivateDir(dataDir);
  if (openToOthers !== null) notices.push(openToOthers);
  // Room for every named database: replay and its expiry index (2), audit (8), record log (7), Surface B (4), bundle pins
  // (1), the health probe (1); lmdb-js allows 12 by default.
  // noSubdir false: the data dir is a directory even when its name has a dot, which lmdb-js would take for a file.
  // permissionsMode (not in lmdb-js's types): the mode mdb_env_open creates data.mdb and lock.mdb with (default 0664).
  // noReadAhead (MDB_NORDAHEAD): a data dir comes to hold more than memory (docs/running-for-years.md), and then each
  // read of a random key (the replay store's) made the OS read ahead its whole window around the page: most of what it
  // read was never used, and it pushed out what was (docs/benchmarks.md, "Soak").
  const options = { path: dataDir, maxDbs: 32, noSubdir: false, permissionsMode: FILE_MODE, noReadAhead: true };
  return open(options);
}
