/**
 * What every connection of a sidecar's PostgreSQL pool runs with (storage/postgres/connection/pool.ts): the statement
 * timeout, the lock timeout, the idle-in-transaction limit, and JIT compilation off; and what the sidecar's own
 * connection (instance-session.ts) runs with: the same statement and lock timeouts, and no idle limit on its
 * transaction. Each is read back from the server, as the sidecar's statements see it, in a database whose own defaults
 * say otherwise.
 */
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../../test/support/postgres.js";
import type { DatabaseConfig } from "../../../src/storage/postgres/config.js";
import { InstanceSession, instanceLockKey } from "../../../src/storage/postgres/connection/instance-session.js";
import { createPool } from "../../../src/storage/postgres/connection/pool.js";

const unavailable = await postgresUnavailable();

/** The test database's own defaults, each unlike what the sidecar asks for. */
const DATABASE_DEFAULTS = { jit: "on", statement_timeout: "1h", lock_timeout: "1h", idle_in_transaction_session_timeout: "300ms" } as const;

describe.skipIf(unavailable !== null)("the connection settings", () => {
  let db: TestDatabase;
  let config: DatabaseConfig;
  beforeAll(async () => {
    db = await createTestDatabase();
    const url = db.pool.options.connectionString!;
    const name = new URL(url).pathname.slice(1);
    for (const [setting, value] of Object.entries(DATABASE_DEFAULTS))
      await db.pool.query(`ALTER DATABASE ${name} SET ${setting} = '${value}'`);
    config = {
      url,
      poolSize: 3,
      statementTimeoutMs: 4_321,
      connectTimeoutMs: 5_000,
      lockTimeoutMs: 1_234,
      idleInTransactionTimeoutMs: 5_678,
    };
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("every pooled connection has JIT off and the configured statement timeout, lock timeout and idle-in-transaction limit, whatever the server's defaults", async () => {
    const pool = createPool(config, () => undefined);
    try {
      // Three connections at once: each one's settings, not one connection's thrice.
      const clients = await Promise.all([pool.connect(), pool.connect(), pool.connect()]);
      try {
        for (const client of clients) {
          const shown: Record<string, string> = {};
          for (const setting of Object.keys(DATABASE_DEFAULTS)) {
            const { rows } = await client.query<Record<string, string>>(`SHOW ${setting}`);
            shown[setting] = rows[0]![setting]!;
          }
          expect(shown).toEqual({
            jit: "off",
            statement_timeout: "4321ms",
            lock_timeout: "1234ms",
            idle_in_transaction_session_timeout: "5678ms",
          });
        }
      } finally {
        for (const client of clients) client.release();
      }
    } finally {
      await pool.end();
    }
  });

  it("the sidecar's own connection has the statement and lock timeouts, and its transaction, idle past the database's limit, keeps the instance lock", async () => {
    // The session's client, to read its settings inside its transaction (no probe runs meanwhile).
    const connect = vi.spyOn(pg.Client.prototype, "connect");
    const session = await InstanceSession.open({ database: config, instance: { id: "idle-exempt", source: "SERVICE_INSTANCE_ID" } });
    try {
      expect(connect.mock.contexts).toHaveLength(1);
      const client = connect.mock.contexts[0] as pg.Client;
      const shown: Record<string, string> = {};
      for (const setting of ["statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout"]) {
        const { rows } = await client.query<Record<string, string>>(`SHOW ${setting}`);
        shown[setting] = rows[0]![setting]!;
      }
      expect(shown).toEqual({ statement_timeout: "4321ms", lock_timeout: "1234ms", idle_in_transaction_session_timeout: "0" });

      const before = await ownConnection(db);
      expect(before).toMatchObject({ state: "idle in transaction" });
      // Idle well past the database's own limit, with no probe meanwhile: the session, and its lock, stay.
      await sleep(1_000);
      expect(await ownConnection(db)).toEqual(before);
      expect(await lockHeld(db, "idle-exempt")).toBe(true);
      session.probe();
      await waitFor(() => session.health().ok);
    } finally {
      await session.close();
    }
  });
});

/** The sidecar's own connection as the server sees it: its process and state. */
async function ownConnection(db: TestDatabase): Promise<{ pid: number; state: string } | undefined> {
  const { rows } = await db.pool.query<{ pid: number; state: string }>(
    "SELECT pid, state FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'writ-sidecar@%'",
  );
  expect(rows.length).toBeLessThanOrEqual(1);
  return rows[0];
}

async function lockHeld(db: TestDatabase, id: string): Promise<boolean> {
  const { rows } = await db.pool.query<{ n: string }>(
    "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = $1::bigint",
    [instanceLockKey(id)],
  );
  return rows[0]!.n === "1";
}

async function waitFor(check: () => boolean): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > 5_000) throw new Error("not within 5 s");
    await sleep(10);
  }
}
