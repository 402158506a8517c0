/**
 * The PostgreSQL connection pool in `GET /metrics` (storage/postgres/connection/pool-stats.ts): connections open and
 * idle, statements waiting for a connection, and the connections that failed, each with its HELP text; none on LMDB.
 * Waiting is provoked by a table lock the sidecar's reads queue behind; failures by a refused connection attempt, and by
 * terminating the pool's connections from another session.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../../test/support/postgres.js";
import { TRANSFER_SIGNALS } from "../../support/policies.js";
import { API_KEY, startTestSidecar, type TestSidecar } from "../../support/sidecar.js";
import { createPool, poolStats } from "../../../src/storage/postgres/connection/pool.js";
import { databaseUrlOf, freePort } from "../../fleet/support.js";

const POOL_SIZE = 2;
const POOL_METRICS = [
  "writ_postgres_pool_connections",
  "writ_postgres_pool_idle_connections",
  "writ_postgres_pool_waiting_clients",
  "writ_postgres_pool_errors_total",
];

async function scrape(s: TestSidecar): Promise<string> {
  const response = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${API_KEY}` } });
  expect(response.status).toBe(200);
  return response.text();
}

function valueOf(text: string, name: string): number {
  const line = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
  if (line === null) throw new Error(`no sample of ${name} in:\n${text}`);
  return Number(line[1]);
}

async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(20);
  }
}

describe("the pool's failed connections", () => {
  it("an attempt refused is counted, once per attempt", async () => {
    const pool = createPool(
      {
        url: `postgresql://postgres@127.0.0.1:${await freePort()}/postgres`,
        poolSize: 2,
        statementTimeoutMs: 1_000,
        connectTimeoutMs: 1_000,
        lockTimeoutMs: 1_000,
        idleInTransactionTimeoutMs: 10_000,
      },
      () => undefined,
    );
    try {
      await expect(pool.query("SELECT 1")).rejects.toThrow(/ECONNREFUSED/);
      await expect(pool.query("SELECT 1")).rejects.toThrow(/ECONNREFUSED/);
      expect(poolStats(pool)).toEqual({ total: 0, idle: 0, waiting: 0, errors: 2 });
    } finally {
      await pool.end();
    }
  });
});

describe("pool metrics on LMDB", () => {
  it("are absent: there is no pool", async () => {
    const s = await startTestSidecar();
    try {
      const text = await scrape(s);
      expect(text).toContain("writ_audit_healthy");
      expect(text).not.toContain("writ_postgres_pool");
    } finally {
      await s.close();
    }
  });
});

const unavailable = await postgresUnavailable();

if (unavailable !== null) {
  describe.skip(`pool metrics on PostgreSQL: ${unavailable}`, () => {
    it("count connections, idle ones, waiting statements and failures", () => undefined);
  });
} else {
  describe("pool metrics on PostgreSQL", () => {
    let database: TestDatabase;
    let s: TestSidecar;

    beforeAll(async () => {
      database = await createTestDatabase();
      s = await startTestSidecar({
        SERVICE_STORE: "postgres",
        SERVICE_DATABASE_URL: databaseUrlOf(database.pool),
        SERVICE_DATABASE_POOL_SIZE: String(POOL_SIZE),
      });
    });
    afterAll(async () => {
      await s?.close();
      await database?.drop();
    });

    it("each is a gauge or counter with its HELP text", async () => {
      const text = await scrape(s);
      const types = { writ_postgres_pool_errors_total: "counter" } as Record<string, string>;
      for (const name of POOL_METRICS) {
        expect(text).toMatch(new RegExp(`^# HELP ${name} \\S.{20,}$`, "m"));
        expect(text).toMatch(new RegExp(`^# TYPE ${name} ${types[name] ?? "gauge"}$`, "m"));
      }
      expect(valueOf(text, "writ_postgres_pool_connections")).toBeGreaterThanOrEqual(1);
      expect(valueOf(text, "writ_postgres_pool_connections")).toBeLessThanOrEqual(POOL_SIZE);
    });

    it("are the engine's only series: none of LMDB's (storage/postgres/engine.ts)", async () => {
      expect(await scrape(s)).not.toContain("writ_lmdb_");
    });

    it("connections and idle ones follow the pool; statements queued behind a lock are waiting", async () => {
      const evaluate = await s.call("POST", "/evaluate", {
        executionId: `pool-${Date.now()}`,
        policyId: "conformance.transfer",
        policyVersion: "1.0.0",
        verifiedSignals: TRANSFER_SIGNALS.approved,
      });
      expect(evaluate.status).toBe(200);
      let text = await scrape(s);
      // (The record log's sequencing and the audit's probe use the pool meanwhile: the counts move.)
      expect(valueOf(text, "writ_postgres_pool_connections")).toBeGreaterThanOrEqual(1);
      expect(valueOf(text, "writ_postgres_pool_idle_connections")).toBeLessThanOrEqual(valueOf(text, "writ_postgres_pool_connections"));

      // The audit trail locked: the sidecar's reads hold every connection of the pool, and the rest wait for one.
      const locker = await database.pool.connect();
      try {
        await locker.query("BEGIN");
        await locker.query("LOCK TABLE writ_audit_records IN ACCESS EXCLUSIVE MODE");
        const reads = Array.from({ length: POOL_SIZE + 3 }, () => s.call("GET", "/audit/decisions?limit=1"));
        await until(
          "statements wait for a connection",
          10_000,
          async () => valueOf(await scrape(s), "writ_postgres_pool_waiting_clients") >= 3,
        );
        text = await scrape(s);
        expect(valueOf(text, "writ_postgres_pool_connections")).toBe(POOL_SIZE);
        expect(valueOf(text, "writ_postgres_pool_idle_connections")).toBe(0);
        await locker.query("COMMIT");
        expect((await Promise.all(reads)).map((r) => r.status)).toEqual(Array.from({ length: POOL_SIZE + 3 }, () => 200));
      } finally {
        locker.release();
      }
      expect(valueOf(await scrape(s), "writ_postgres_pool_waiting_clients")).toBe(0);
    });

    it("connections the server terminates are counted as errors, once each", async () => {
      const before = valueOf(await scrape(s), "writ_postgres_pool_errors_total");
      // The pool's connections are named `writ-sidecar`; the sidecar's own (instance-session.ts) has its own name.
      const { rows } = await database.pool.query<{ pid: number }>(
        "SELECT pg_terminate_backend(pid) AS terminated, pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'writ-sidecar'",
      );
      expect(rows.length).toBeGreaterThanOrEqual(1);
      await until(
        "every terminated connection is counted",
        10_000,
        async () => valueOf(await scrape(s), "writ_postgres_pool_errors_total") >= before + rows.length,
      );
      await sleep(200);
      expect(valueOf(await scrape(s), "writ_postgres_pool_errors_total")).toBe(before + rows.length);
      // The pool connects anew, and the sidecar's own connection was not among them: still ready.
      expect((await s.call("GET", "/health?probe=ready")).status).toBe(200);
      expect((await s.call("GET", "/audit/decisions?limit=1")).status).toBe(200);
    });

    it("a connection terminated while its statement runs is counted too", async () => {
      const pool = createPool(
        {
          url: databaseUrlOf(database.pool),
          poolSize: 1,
          statementTimeoutMs: 30_000,
          connectTimeoutMs: 5_000,
          lockTimeoutMs: 3_000,
          idleInTransactionTimeoutMs: 10_000,
        },
        () => undefined,
      );
      try {
        const sleeping = pool.query("SELECT pg_sleep(30)");
        const running =
          "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'writ-sidecar' AND query LIKE 'SELECT pg_sleep%'";
        let pid: number | undefined;
        await until(
          "the statement runs",
          10_000,
          async () => (pid = (await database.pool.query<{ pid: number }>(running)).rows[0]?.pid) !== undefined,
        );
        // Handled before the backend is terminated: the statement may fail while the termination's own answer is awaited.
        const refused = expect(sleeping).rejects.toThrow(/terminating connection due to administrator command/);
        await database.pool.query("SELECT pg_terminate_backend($1)", [pid]);
        await refused;
        expect(poolStats(pool).errors).toBe(1);
      } finally {
        await pool.end();
      }
    });
  });
}
