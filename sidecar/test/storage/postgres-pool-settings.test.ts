/**
 * What every connection of a sidecar's PostgreSQL pool runs with (storage/postgres/pool.ts): the statement timeout, and
 * JIT compilation off. Each is read back from the server through the pool, as the sidecar's statements see it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../test/support/postgres.js";
import { createPool } from "../../src/storage/postgres/pool.js";

const unavailable = await postgresUnavailable();

describe.skipIf(unavailable !== null)("the pool's connection settings", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("every connection has JIT off and the configured statement timeout, whatever the server's defaults", async () => {
    const pool = createPool({ url: db.pool.options.connectionString!, poolSize: 3, statementTimeoutMs: 4_321, connectTimeoutMs: 5_000 }, () => undefined);
    try {
      // Three connections at once: each one's settings, not one connection's thrice.
      const clients = await Promise.all([pool.connect(), pool.connect(), pool.connect()]);
      try {
        for (const client of clients) {
          const { rows } = await client.query<{ jit: string; timeout: string }>("SELECT current_setting('jit') AS jit, current_setting('statement_timeout') AS timeout");
          expect(rows[0]).toEqual({ jit: "off", timeout: "4321ms" });
        }
      } finally {
        for (const client of clients) client.release();
      }
    } finally {
      await pool.end();
    }
  });
});
