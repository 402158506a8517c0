/**
 * The fleet backend (`SERVICE_STORE=postgres`, docs/fleet.md): every sidecar of an application shares one PostgreSQL
 * database for the replay store, the audit trail and Surface B's records, so an executionId is consumed once per
 * application and any sidecar answers for records made through any other. At start the schema is migrated
 * (migrations.ts); an unreachable database or a newer schema refuses the start with one line. Each replay transition is one conditional statement that also inserts its record (replay-store.ts), answered only
 * after COMMIT; every failure is StoreUnavailableError, answered 503. The sidecar's own connection (instance-session.ts)
 * holds its instance id's lock for the sidecar's life and probes `store`; `audit_db` follows the audit log's statements
 * and probe; both recover by themselves, one probe at a time. Expired entries are swept one statement at a time across
 * the fleet (`sweepRound`). History scans use the read database's pool when SERVICE_DATABASE_READ_URL is set
 * (read-pool.ts), connected on first use: a replica that is down fails those reads alone, never the start.
 */
import { DEFAULT_CLAIM_STATEMENTS, PostgresReplayStore } from "./replay-store.js";
import { DisabledAuditLog } from "../../audit/disabled-audit-log.js";
import type { AuditLog } from "../../audit/types.js";
import { STORE_PROBE_INTERVAL_MS, type BackendOpener, type StorageBackend } from "../backend.js";
import { PostgresAuditLog } from "./audit-log.js";
import { autovacuumWarning } from "./autovacuum.js";
import { fleetInstanceId } from "../instance-id.js";
import { PostgresBundlePins } from "./bundle-pins.js";
import { DATABASE_PROBE_INTERVAL_MS, InstanceSession } from "./connection/instance-session.js";
import { PostgresRecordTemplates } from "./record-templates.js";
import { migrate } from "./migrations.js";
import { redactedUrl } from "./connection/hosts.js";
import { CLIENT_TIMEOUT_MARGIN_MS, createPool, poolStats } from "./connection/pool.js";
import { createReadPool } from "./connection/read-pool.js";
import type { PoolStats } from "./connection/pool-stats.js";
import { PostgresLogStorage } from "./record-log-storage.js";
import { PostgresTrustRecordStore } from "./record-store.js";
import { checkSessions } from "./connection/session-check.js";
import type { PostgresStorageConfig } from "./config.js";

/** The backend, with its pools' counts: engine.ts's series. */
export interface PostgresBackend extends StorageBackend {
  pool(): PoolStats;
  /** The read database's pool (read-pool.ts); null without SERVICE_DATABASE_READ_URL. */
  readPool(): PoolStats | null;
}

export const openPostgresBackend: BackendOpener<PostgresStorageConfig, PostgresBackend> = async (
  config,
  { database, readUrl },
  reporters,
  notices,
  checkpointSigner,
) => {
  // An idle connection's error (the server restarting, a proxy cutting it): the client is dropped (and counted,
  // `writ_postgres_pool_errors_total`); the probe decides health.
  const pool = createPool(database, () => undefined);
  const readPool = readUrl === null ? null : createReadPool(database, readUrl);
  let session: InstanceSession | null = null;
  let logStorage: PostgresLogStorage | null;
  let templates: PostgresRecordTemplates | null;
  try {
    // Before anything is written: sessions a connection pooler changed refuse the start (docs/fleet.md, "Poolers").
    await checkSessions(database);
    const outcome = await migrate(pool, (m) => reporters.onNotice?.(`database schema: applied migration ${m.version} (${m.description})`));
    if (outcome.applied.length === 0) notices.push(`database ${redactedUrl(database.url)}: schema at version ${outcome.to}`);
    const autovacuum = await autovacuumWarning(pool);
    if (autovacuum !== null) reporters.onWarning?.(autovacuum);
    // The templates decision records are coded against (docs/audit.md, "Coded decision records"), shared by the fleet.
    templates = config.audit ? await PostgresRecordTemplates.open(pool) : null;
    // The instance lock is taken before anything is written as the log's owner.
    const instance =
      config.audit && config.auditLog ? await fleetInstanceId(config.instanceId, config.dataDir, config.processes.index) : null;
    session = await InstanceSession.open({ database, instance, onHealth: (health, error) => reporters.onStoreHealth?.(health, error) });
    logStorage = instance === null ? null : await openRecordLog(pool, readPool, instance, notices, templates);
    if (readUrl !== null) notices.push(`read database ${redactedUrl(readUrl)}: the audit reads that scan history go there`);
  } catch (error) {
    await session?.close();
    await pool.end().catch(() => undefined);
    await readPool?.end().catch(() => undefined);
    throw error;
  }
  const owner = session;
  // Claim statements under way at once: never more than the pool has connections, so other statements still get one.
  const claimStatements = Math.min(DEFAULT_CLAIM_STATEMENTS, database.poolSize);
  const recording = !config.audit ? { keepRecords: false } : logStorage === null ? {} : { recordLog: { logId: logStorage.logId } };
  // A decision is answered within the pool's client timeout, however many statements it waited behind.
  const replayOptions = {
    claimStatements,
    claimDeadlineMs: database.statementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS,
    namedStatements: database.preparedStatements !== false,
    templates,
    ...recording,
  };
  const replay = new PostgresReplayStore(pool, replayOptions);
  const audit: AuditLog = config.audit
    ? new PostgresAuditLog(pool, {
        onError: (error) => reporters.onAuditError?.(error),
        securityEvents: config.securityEvents,
        retention: config.auditRetention,
        pruneIntervalMs: config.maintenance.auditPruneMs,
        recordLog:
          logStorage === null ? null : { storage: logStorage, checkpoints: { signer: checkpointSigner, ...config.auditCheckpoints } },
        readPool,
        templates,
      })
    : new DisabledAuditLog();
  // Surface B's decisions are written as the replay store writes them, in the transaction of their record.
  const trustRecords = new PostgresTrustRecordStore(pool, { replay: replayOptions });
  const bundlePins = new PostgresBundlePins(pool);

  const probe = setInterval(() => owner.probe(), DATABASE_PROBE_INTERVAL_MS);
  probe.unref();
  // The audit log's own probe, through the pool, one at a time as well.
  let auditProbe: Promise<void> | null = null;
  const auditProbes =
    audit instanceof PostgresAuditLog
      ? setInterval(() => {
          auditProbe ??= audit.probe().finally(() => (auditProbe = null));
        }, STORE_PROBE_INTERVAL_MS)
      : null;
  auditProbes?.unref();
  const sweep = setInterval(() => void replay.sweep().catch(() => undefined), config.maintenance.replaySweepMs);
  sweep.unref();

  return {
    replay,
    audit,
    trustRecords,
    bundlePins,
    health: () => owner.health(),
    pool: () => poolStats(pool),
    readPool: () => (readPool === null ? null : poolStats(readPool)),
    answerWithinMs: database.statementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS,
    async close() {
      clearInterval(probe);
      if (auditProbes) clearInterval(auditProbes);
      if (sweep) clearInterval(sweep);
      await audit.close().catch(() => undefined);
      await replay.close();
      await pool.end().catch(() => undefined);
      await readPool?.end().catch(() => undefined);
      // Last: the log's owner lets go of it only once nothing more is written as the owner.
      await owner.close();
    },
  };
};

/**
 * The record log of this sidecar (docs/audit.md, "One log per sidecar instance"), with the records written while the log
 * was off taken into it. (With the log or audit off there is none: the records this sidecar then writes become
 * candidates for the next sidecar with the log on to take in.)
 */
async function openRecordLog(
  pool: Parameters<typeof migrate>[0],
  readPool: Parameters<typeof migrate>[0] | null,
  instance: { readonly id: string; readonly source: string },
  notices: string[],
  templates: PostgresRecordTemplates | null,
): Promise<PostgresLogStorage> {
  const storage = new PostgresLogStorage(pool, instance.id, readPool, templates);
  const adopted = await storage.adoptUnlogged(Date.now());
  notices.push(`audit record log \`${instance.id}\` (instance id from ${instance.source})`);
  if (adopted > 0) notices.push(`audit: ${adopted} records written while the record log was off are taken into it`);
  return storage;
}
