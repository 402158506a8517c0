/**
 * The start's check of the database sessions (storage/postgres/connection/session-check.ts), directly and through
 * PgBouncer (Debian's, 1.18: no prepared statements in transaction mode). Direct: fit. Through PgBouncer with writ's
 * startup parameters in `ignore_startup_parameters`: refused, naming each setting dropped and the `ALTER ROLE` that
 * sets it; once those statements ran, session mode is fit, and transaction mode is refused for named prepared
 * statements unless SERVICE_DATABASE_PREPARED_STATEMENTS is off. Also: a sweep through transaction mode leaves no
 * advisory lock behind.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_DATABASE, type DatabaseConfig } from "../../../src/storage/postgres/config.js";
import { migrate } from "../../../src/storage/postgres/migrations.js";
import { createPool } from "../../../src/storage/postgres/connection/pool.js";
import { PostgresReplayStore } from "../../../src/storage/postgres/replay-store.js";
import { checkSessions } from "../../../src/storage/postgres/connection/session-check.js";
import { UnfitSessionsError } from "../../../src/storage/postgres/connection/unfit-sessions.js";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../../test/support/postgres.js";
import { databaseUrlOf, freePort } from "../../fleet/support.js";
import { WRIT_STARTUP_PARAMETERS, pgbouncerUnavailable, startPgBouncer, type PgBouncer, type PoolMode } from "../../support/pgbouncer.js";

const unavailable = (await postgresUnavailable()) ?? pgbouncerUnavailable();

/** `checkSessions` of a sidecar on `url`: the error it throws, or null. */
async function check(url: string, settings: Partial<DatabaseConfig> = {}): Promise<Error | null> {
  return checkSessions({ ...DEFAULT_DATABASE, url, ...settings }).then(
    () => null,
    (error: unknown) => error as Error,
  );
}

if (unavailable !== null) {
  describe.skip(`the database sessions' check: ${unavailable}`, () => {
    it("refuses what a pooler changed", () => undefined);
  });
} else {
  describe("the database sessions' check", () => {
    let database: TestDatabase;
    const bouncers = new Map<PoolMode, PgBouncer>();
    beforeAll(async () => {
      database = await createTestDatabase();
      for (const poolMode of ["session", "transaction"] as const)
        bouncers.set(
          poolMode,
          await startPgBouncer({
            server: { host: "127.0.0.1", port: Number(new URL(databaseUrlOf(database.pool)).port) },
            port: await freePort(),
            poolMode,
            ignoreStartupParameters: WRIT_STARTUP_PARAMETERS,
          }),
        );
    });
    afterAll(async () => {
      for (const bouncer of bouncers.values()) await bouncer.remove();
      await database?.drop();
    });
    const through = (mode: PoolMode) => bouncers.get(mode)!.urlOf(databaseUrlOf(database.pool));

    it("direct: fit, whatever the pool's size", async () => {
      expect(await check(databaseUrlOf(database.pool))).toBeNull();
      expect(await check(databaseUrlOf(database.pool), { poolSize: 1 })).toBeNull();
    });

    it("through PgBouncer, settings dropped: refused, naming each and the ALTER ROLE that sets it; fit once they ran", async () => {
      const refusal = await check(through("session"));
      expect(refusal).toBeInstanceOf(UnfitSessionsError);
      expect((refusal as UnfitSessionsError).code).toBe("DATABASE_SESSIONS_UNFIT");
      const name = new URL(databaseUrlOf(database.pool)).pathname.slice(1);
      const statements = [
        `ALTER ROLE postgres IN DATABASE ${name} SET idle_in_transaction_session_timeout = '10000ms';`,
        `ALTER ROLE postgres IN DATABASE ${name} SET jit = 'off';`,
        `ALTER ROLE postgres IN DATABASE ${name} SET lock_timeout = '3000ms';`,
        `ALTER ROLE postgres IN DATABASE ${name} SET statement_timeout = '5000ms';`,
      ];
      expect(refusal!.message).toBe(
        `the database sessions do not have the settings writ asked for: idle_in_transaction_session_timeout is 0ms, not 10000ms, jit is on, not off, lock_timeout is 0ms, not 3000ms, statement_timeout is 0ms, not 5000ms; a connection pooler dropped them (PgBouncer's ignore_startup_parameters), and without them a lost client's locks are held and a statement or lock wait is never cut short; set them for writ's role on the server: ${statements.join(" ")} (the values of SERVICE_DATABASE_STATEMENT_TIMEOUT_MS, SERVICE_DATABASE_LOCK_TIMEOUT_MS and SERVICE_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS), then have the pooler open its server connections anew (PgBouncer: RECONNECT in its admin console)`,
      );
      // Other settings of the sidecar: the values it asks for.
      expect((await check(databaseUrlOf(database.pool), { lockTimeoutMs: 1_234 }))?.message).toBeUndefined();
      for (const statement of statements) await database.pool.query(statement);
      // Server connections opened before keep the settings they started with.
      for (const bouncer of bouncers.values()) await bouncer.reconnect();
      expect(await check(through("session"))).toBeNull();
      expect((await check(through("session"), { lockTimeoutMs: 1_234 }))?.message).toMatch(
        /: lock_timeout is 3000ms, not 1234ms; .* ALTER ROLE postgres IN DATABASE \w+ SET lock_timeout = '1234ms'; \(/,
      );
    });

    it("through PgBouncer in transaction mode: refused while named prepared statements are on, fit with them off", async () => {
      const refusal = await check(through("transaction"));
      expect(refusal).toBeInstanceOf(UnfitSessionsError);
      expect(refusal!.message).toMatch(
        /^named prepared statements do not survive on this database's connections: .*; set SERVICE_DATABASE_PREPARED_STATEMENTS=off /,
      );
      expect(await check(through("transaction"), { preparedStatements: false })).toBeNull();
      // Direct and in session mode, named statements are kept.
      expect(await check(through("session"))).toBeNull();
    });

    it("sweeping through PgBouncer in transaction mode leaves no advisory lock on any server connection", async () => {
      const url = through("transaction");
      const pool = createPool({ ...DEFAULT_DATABASE, url, preparedStatements: false }, () => undefined);
      const others = createPool({ ...DEFAULT_DATABASE, url, preparedStatements: false }, () => undefined);
      try {
        await migrate(pool);
        const store = new PostgresReplayStore(pool, { namedStatements: false });
        const other = new PostgresReplayStore(others, { namedStatements: false });
        const now = Date.now();
        for (let round = 0; round < 5; round++) {
          for (let i = 0; i < 30; i++) await store.reserve(`expired-${round}-${i}`, { now: now - 600_000, ttlMs: 1_000 });
          // Two sidecars sweeping at once, among other statements.
          const [mine, theirs] = await Promise.all([
            store.sweepRound(),
            other.sweepRound(),
            ...Array.from({ length: 10 }, (_, i) => other.reserve(`live-${round}-${i}`, { now, ttlMs: 300_000 })),
          ]);
          expect((mine ?? 0) + (theirs ?? 0)).toBe(30);
          const held = await database.pool.query(
            "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
          );
          expect(held.rows[0]).toEqual({ n: 0 });
        }
      } finally {
        await pool.end();
        await others.end();
      }
    });
  });
}
