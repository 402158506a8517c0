import { StoreUnavailableError, executionFingerprint } from "@writ/runtime";
import { PostgresReplayStore } from "../../../src/storage/postgres/replay-store.js";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { PostgresAuditLog } from "../../../src/storage/postgres/audit-log.js";
import { migrate } from "../../../src/storage/postgres/migrations.js";
import { PostgresLogStorage } from "../../../src/storage/postgres/record-log-storage.js";
import { createTestDatabase, postgresUnavailable, testPool } from "../../../../test/support/postgres.js";
import { startTcpProxy } from "../../support/tcp-proxy.js";
import { auditLogContract } from "../../audit/audit-contract.js";
import { MANUAL_CHECKPOINTS } from "../../audit/record-log-contract.js";
import { at, decision } from "../../audit/support.js";

const unavailable = await postgresUnavailable();

if (unavailable !== null) {
  describe.skip(`PostgresAuditLog: ${unavailable}`, () => {
    it("runs the audit log contract on PostgreSQL", () => undefined);
  });
} else {
  const database = await createTestDatabase();
  afterAll(() => database.drop());
  await migrate(database.pool);
  const { pool } = database;
  const EMPTY = "TRUNCATE writ_replay, writ_audit_records, writ_audit_verifications, writ_audit_security, writ_audit_counters";

  auditLogContract("PostgresAuditLog", async () => {
    const log = new PostgresAuditLog(pool);
    return {
      log,
      replay: new PostgresReplayStore(pool),
      dispose: async () => {
        await log.close();
        await pool.query(EMPTY);
      },
    };
  });

  // With the record log on, the decision counts come from the log's counters (decision-counts.ts), not from the table.
  auditLogContract("PostgresAuditLog with the record log", async () => {
    const log = new PostgresAuditLog(pool, {
      recordLog: { storage: new PostgresLogStorage(pool, "contract"), checkpoints: MANUAL_CHECKPOINTS },
    });
    return {
      log,
      replay: new PostgresReplayStore(pool, { recordLog: { logId: "contract" } }),
      dispose: async () => {
        await log.close();
        await pool.query(
          `${EMPTY}, writ_audit_log_pending, writ_audit_log_entries, writ_audit_log_nodes, writ_audit_log_state, writ_audit_log_days, writ_audit_log_outside`,
        );
      },
    };
  });

  describe("PostgresAuditLog", () => {
    it("two logs on two pools of one database (two sidecars) see each other's records; their stats add up", async () => {
      const other = testPool((pool.options as { connectionString: string }).connectionString);
      const a = new PostgresAuditLog(pool);
      const b = new PostgresAuditLog(other);
      try {
        const stores = [new PostgresReplayStore(pool), new PostgresReplayStore(other)];
        for (let i = 0; i < 20; i++) {
          const body = decision({ executionId: `fleet-${i}`, recordedAt: at(i) });
          await stores[i % 2]!.consume(executionFingerprint(body.executionId), {
            now: Date.parse(body.recordedAt),
            record: { kind: "decision", body },
          });
        }
        a.countApiCall();
        b.countApiCall();
        await Promise.all([a.close(), b.close()]);
        const reader = new PostgresAuditLog(pool);
        expect((await reader.listDecisions({ limit: 50, offset: 0 })).map((r) => r.executionId)).toEqual(
          Array.from({ length: 20 }, (_, i) => `fleet-${19 - i}`),
        );
        expect(await reader.getDecision("fleet-3")).toMatchObject({ executionId: "fleet-3" });
        expect(await reader.stats()).toMatchObject({ total_decisions: "20", total_api_calls: "2" });
        await reader.close();
      } finally {
        await other.end();
        await pool.query(EMPTY);
      }
    });

    it("an unreachable database: recording never throws, reads are StoreUnavailableError, the probe makes it unhealthy", async () => {
      const nowhere = new pg.Pool({ connectionString: "postgresql://postgres@127.0.0.1:1/none", connectionTimeoutMillis: 1_000 });
      const errors: unknown[] = [];
      const log = new PostgresAuditLog(nowhere, { onError: (e) => errors.push(e) });
      try {
        expect(log.healthy()).toBe(true);
        log.recordVerification({ executionId: null, valid: true, checks: {}, errors: [], recordedAt: at(0) });
        await log.flushed();
        await log.probe();
        expect(log.healthy()).toBe(false);
        expect(errors[0]).toBeInstanceOf(StoreUnavailableError);
        await expect(log.listDecisions({ limit: 1, offset: 0 })).rejects.toBeInstanceOf(StoreUnavailableError);
      } finally {
        await log.close();
        await nowhere.end();
      }
    });

    it("a lost connection makes it unhealthy; the first statement that starts after the database returns heals it", async () => {
      const target = new URL((pool.options as { connectionString: string }).connectionString);
      const proxy = await startTcpProxy(Number(target.port || 5432), target.hostname);
      const through = new URL(target);
      through.port = String(proxy.port);
      const proxied = testPool(through.toString());
      const log = new PostgresAuditLog(proxied);
      try {
        await log.probe();
        expect(log.healthy()).toBe(true);
        proxy.cut();
        await log.probe();
        expect(log.healthy()).toBe(false);
        proxy.heal();
        await log.probe();
        expect(log.healthy()).toBe(true);
        expect(await log.stats()).toMatchObject({ total_decisions: "0" });
      } finally {
        await log.close();
        await proxied.end();
        await proxy.close();
      }
    });

    it("prunes by age and by count, one sidecar at a time", async () => {
      const now = new Date(Date.parse(at(10 * 86_400_000)));
      const retention = {
        decisions: { maxAgeMs: 5 * 86_400_000, maxRecords: null },
        verifications: { maxAgeMs: null, maxRecords: 3 },
        security: { maxAgeMs: null, maxRecords: null },
      };
      const log = new PostgresAuditLog(pool, { retention });
      try {
        const replay = new PostgresReplayStore(pool);
        for (let day = 0; day < 10; day++) {
          const body = decision({ executionId: `day-${day}`, recordedAt: at(day * 86_400_000) });
          await replay.consume(executionFingerprint(body.executionId), {
            now: Date.parse(body.recordedAt),
            record: { kind: "decision", body },
          });
          log.recordVerification({ executionId: null, valid: true, checks: {}, errors: [], recordedAt: at(day) });
        }
        await log.flushed();
        // Two sidecars with the same settings pruning at once: whichever holds the lock prunes, the other skips.
        const runs = await Promise.all([log.prune(now), new PostgresAuditLog(pool, { retention }).prune(now)]);
        expect(runs.reduce((x, y) => x + y, 0)).toBe(5 + 7);
        expect((await log.listDecisions({ limit: 50, offset: 0 })).map((r) => r.executionId)).toEqual([
          "day-9",
          "day-8",
          "day-7",
          "day-6",
          "day-5",
        ]);
        const { rows } = await pool.query<{ n: string }>("SELECT count(*) AS n FROM writ_audit_verifications");
        expect(rows[0]!.n).toBe("3");
      } finally {
        await log.close();
        await pool.query(EMPTY);
      }
    });
  });
}
