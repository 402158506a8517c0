/**
 * A PostgreSQL for tests: a fresh database per test file, dropped at the end. The server is
 * `WRIT_TEST_POSTGRES_URL` (default `postgresql://postgres@127.0.0.1:5432/postgres`, trust auth as on the project's
 * machines and CI). Without one, the tests skip saying how to run them; with `CI=true` they fail instead: CI must
 * never pass by skipping them.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";

export const ADMIN_URL = process.env["WRIT_TEST_POSTGRES_URL"] ?? "postgresql://postgres@127.0.0.1:5432/postgres";

export interface TestDatabase {
  readonly pool: pg.Pool;
  drop(): Promise<void>;
}

/**
 * Why PostgreSQL cannot be used here, or null when it can.
 * @throws Error instead with CI=true in `env`: CI must never pass by skipping.
 */
export async function postgresUnavailable(url: string = ADMIN_URL, env: NodeJS.ProcessEnv = process.env): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return null;
  } catch (error) {
    const why = `no PostgreSQL at ${url.replace(/\/\/[^@/]*@/, "//")} (${(error as Error).message})`;
    if (env["CI"] === "true") throw new Error(`${why}: CI runs these tests against a real database`, { cause: error });
    return `${why}: start one, or set WRIT_TEST_POSTGRES_URL, to run these tests`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A pool for tests: an idle client's error (the server restarting) is re-emitted by pg on its pool, an unhandled
 * 'error' event without a listener; the tests observe failures through their queries instead.
 */
export function testPool(connectionString: string): pg.Pool {
  const pool = new pg.Pool({ connectionString, max: 20 });
  pool.on("error", () => undefined);
  return pool;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `writ_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const pool = testPool(url.toString());
  return {
    pool,
    drop: async () => {
      await pool.end();
      await dropDatabase(name, 50);
    },
  };
}

/**
 * Drops database `name` if it exists, retrying every 100 ms while PostgreSQL answers 55006 (other sessions still
 * connected), at most `attempts` more times. Not WITH (FORCE): that terminates clients of a pool still closing, whose
 * FATAL then surfaces as an unhandled error. Their backends are gone within moments.
 */
export async function dropDatabase(name: string, attempts: number): Promise<void> {
  const cleanup = new pg.Client({ connectionString: ADMIN_URL });
  await cleanup.connect();
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await cleanup.query(`DROP DATABASE IF EXISTS ${name}`);
        return;
      } catch (error) {
        if ((error as { code?: string }).code !== "55006" || attempt >= attempts) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } finally {
    await cleanup.end();
  }
}
