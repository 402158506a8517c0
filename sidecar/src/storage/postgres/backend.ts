/**
 * The fleet backend (`SERVICE_STORE=postgres`, docs/fleet.md): every sidecar of an application shares one PostgreSQL
 * database for the replay store, the audit trail and Surface B's records, so an executionId is consumed once per
 * application and any sidecar answers for records made through any other.
 *
 * - Start: the schema is migrated (migrations.ts, one sidecar at a time); a database that cannot be reached or whose
 *   schema is newer than this sidecar refuses the start with one line.
 * - Writes: each replay transition is one conditional statement that also inserts its record (runtime
 *   `PostgresReplayStore`), answered only after COMMIT; every failure is StoreUnavailableError, answered 503.
 * - Health: a probe (`SELECT 1`) every second sets `store` and `audit_db` in `GET /health`; both recover by themselves
 *   when the database returns, with no restart.
 * - Sweeping expired reservations and failed entries: once a minute (SERVICE_REPLAY_SWEEP_INTERVAL_MS), by whichever sidecar takes the advisory lock; the
 *   others skip that round.
 */
import { DEFAULT_CLAIM_STATEMENTS, PostgresReplayStore } from "@writ/runtime/postgres";
import { DisabledAuditLog } from "../../audit/disabled-audit-log.js";
import type { AuditLog } from "../../audit/types.js";
import { STORE_PROBE_INTERVAL_MS, type BackendOpener, type StoreHealth } from "../backend.js";
import { PostgresAuditLog } from "./audit-log.js";
import { autovacuumWarning } from "./autovacuum.js";
import { fleetInstanceId } from "../instance-id.js";
import { PostgresBundlePins } from "./bundle-pins.js";
import { migrate } from "./migrations.js";
import { createPool, redactedUrl } from "./pool.js";
import { query } from "./query.js";
import { PostgresLogStorage } from "./record-log-storage.js";
import { PostgresTrustRecordStore } from "./record-store.js";
import { sweepOnce } from "./sweep.js";

const HEALTHY: StoreHealth = { ok: true, problem: null, since: null };

export const openPostgresBackend: BackendOpener = async (config, reporters, notices, signingKey) => {
  const database = config.database!;
  let health: StoreHealth = HEALTHY;
  const setHealth = (next: StoreHealth, error?: unknown): void => {
    if (next.ok === health.ok) return;
    health = next;
    reporters.onStoreHealth?.(next, error);
  };
  const failed = (error: unknown): void =>
    setHealth({ ok: false, problem: error instanceof Error ? error.message : String(error), since: health.since ?? new Date().toISOString() }, error);
  // An idle connection's error (the server restarting, a proxy cutting it): the client is dropped and the probe decides.
  const pool = createPool(database, () => undefined);
  try {
    const outcome = await migrate(pool, (m) => reporters.onNotice?.(`database schema: applied migration ${m.version} (${m.description})`));
    if (outcome.applied.length === 0) notices.push(`database ${redactedUrl(database.url)}: schema at version ${outcome.to}`);
    const autovacuum = await autovacuumWarning(pool);
    if (autovacuum !== null) reporters.onWarning?.(autovacuum);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }

  const logStorage = await openRecordLog(pool, config, notices).catch(async (error: unknown) => {
    await pool.end().catch(() => undefined);
    throw error;
  });
  // Claim statements under way at once: never more than the pool has connections, so other statements still get one.
  const claimStatements = Math.min(DEFAULT_CLAIM_STATEMENTS, database.poolSize);
  const recording = !config.audit ? { recordsTable: null } : logStorage === null ? {} : { recordLog: { logId: logStorage.logId } };
  const replay = config.replayStore === "postgres" ? new PostgresReplayStore(pool, { claimStatements, ...recording }) : null;
  const audit: AuditLog = config.audit
    ? new PostgresAuditLog(pool, {
        onError: (error) => reporters.onAuditError?.(error),
        securityEvents: config.securityEvents,
        retention: config.auditRetention,
        pruneIntervalMs: config.maintenance.auditPruneMs,
        recordLog: logStorage === null ? null : { storage: logStorage, checkpoints: { key: signingKey, ...config.auditCheckpoints } },
      })
    : new DisabledAuditLog();
  const trustRecords = new PostgresTrustRecordStore(pool);
  const bundlePins = new PostgresBundlePins(pool);

  const probe = setInterval(() => {
    void query(pool, "probing the database", "SELECT 1").then(() => setHealth(HEALTHY), failed);
    if (audit instanceof PostgresAuditLog) void audit.probe();
  }, STORE_PROBE_INTERVAL_MS);
  probe.unref();
  const sweep = replay === null ? null : setInterval(() => void sweepOnce(pool, replay).catch(() => undefined), config.maintenance.replaySweepMs);
  sweep?.unref();

  return {
    replay,
    audit,
    trustRecords,
    bundlePins,
    health: () => health,
    space: () => null,
    async close() {
      clearInterval(probe);
      if (sweep) clearInterval(sweep);
      await audit.close().catch(() => undefined);
      await replay?.close();
      await pool.end().catch(() => undefined);
    },
  };
};

/**
 * The record log of this sidecar (docs/audit.md, "One log per sidecar instance"), with the records written while the log
 * was off taken into it; null with the log or audit off (the records this sidecar then writes become candidates for
 * the next sidecar with the log on to take in).
 */
async function openRecordLog(pool: Parameters<typeof migrate>[0], config: Parameters<BackendOpener>[0], notices: string[]): Promise<PostgresLogStorage | null> {
  if (!config.audit || !config.auditLog) return null;
  const instance = await fleetInstanceId(config.instanceId, config.dataDir);
  const storage = new PostgresLogStorage(pool, instance.id);
  const adopted = await storage.adoptUnlogged(Date.now());
  notices.push(`audit record log \`${instance.id}\` (instance id from ${instance.source})`);
  if (adopted > 0) notices.push(`audit: ${adopted} records written while the record log was off are taken into it`);
  return storage;
}
