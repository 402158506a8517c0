/**
 * A BUILT sidecar started through PgBouncer (Debian's, 1.18) the ways it must refuse, each with exit code 1 and one
 * `failed to start` line saying why and what to set (docs/fleet.md, "Poolers"): writ's startup parameters not listed
 * in `ignore_startup_parameters` (PgBouncer's own refusal); listed, so dropped, with the role's settings not made
 * (`code: "DATABASE_SESSIONS_UNFIT"`, the `ALTER ROLE` statements); and transaction mode with named prepared
 * statements on (the same code, SERVICE_DATABASE_PREPARED_STATEMENTS). That it works once set: the fleet race suite
 * (two-sidecars.stress.test.ts) runs through PgBouncer in both modes. Needs the build (`npm run test:e2e` builds first).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../test/support/postgres.js";
import { killAllBuiltSidecars } from "../support/built-sidecar.js";
import {
  WRIT_STARTUP_PARAMETERS,
  pgbouncerUnavailable,
  setWritSettings,
  startPgBouncer,
  type PgBouncer,
  type PoolMode,
} from "../support/pgbouncer.js";
import { databaseUrlOf, fleetEnv, freePort, refused } from "./support.js";

const unavailable = (await postgresUnavailable()) ?? pgbouncerUnavailable();

if (unavailable !== null) {
  describe.skip(`a sidecar through PgBouncer, refused: ${unavailable}`, () => {
    it("refuses to start with what to set", () => undefined);
  });
} else {
  describe("a sidecar through PgBouncer, refused (built sidecar)", () => {
    let database: TestDatabase;
    const bouncers: PgBouncer[] = [];
    beforeAll(async () => {
      database = await createTestDatabase();
    });
    afterAll(async () => {
      await killAllBuiltSidecars();
      for (const bouncer of bouncers) await bouncer.remove();
      await database?.drop();
    });

    async function through(poolMode: PoolMode, ignoreStartupParameters: readonly string[]): Promise<string> {
      const url = databaseUrlOf(database.pool);
      const bouncer = await startPgBouncer({
        server: { host: "127.0.0.1", port: Number(new URL(url).port) },
        port: await freePort(),
        poolMode,
        ignoreStartupParameters,
      });
      bouncers.push(bouncer);
      return bouncer.urlOf(url);
    }

    it("writ's startup parameters not in ignore_startup_parameters: PgBouncer's refusal, exit code 1", async () => {
      const { exit, line } = await refused(await fleetEnv(await through("session", [])));
      expect(exit).toMatch(/exited \(code 1, signal null\) before listening/);
      expect(line["msg"]).toMatch(/^failed to start: .*unsupported startup parameter: statement_timeout/);
    });

    it("dropped by PgBouncer, not set for the role: refused with the ALTER ROLE statements; then, in transaction mode, for named prepared statements", async () => {
      const url = await through("transaction", WRIT_STARTUP_PARAMETERS);
      const settings = await refused(await fleetEnv(url));
      expect(settings.exit).toMatch(/exited \(code 1, signal null\) before listening/);
      expect(settings.line).toMatchObject({ code: "DATABASE_SESSIONS_UNFIT" });
      expect(settings.line["msg"]).toMatch(
        /^failed to start: the database sessions do not have the settings writ asked for: idle_in_transaction_session_timeout is 0ms, not 10000ms, jit is on, not off, lock_timeout is 0ms, not 3000ms, statement_timeout is 0ms, not 5000ms; .*ALTER ROLE postgres IN DATABASE \w+ SET statement_timeout = '5000ms';/,
      );
      // Nothing was written: the schema was not made.
      expect((await database.pool.query("SELECT to_regclass('writ_replay') AS t")).rows[0]).toEqual({ t: null });

      await setWritSettings(database.pool);
      await bouncers.at(-1)!.reconnect();
      const statements = await refused(await fleetEnv(url));
      expect(statements.exit).toMatch(/exited \(code 1, signal null\) before listening/);
      expect(statements.line).toMatchObject({ code: "DATABASE_SESSIONS_UNFIT" });
      expect(statements.line["msg"]).toMatch(
        /^failed to start: named prepared statements do not survive on this database's connections: .*PgBouncer with pool_mode = transaction.*; set SERVICE_DATABASE_PREPARED_STATEMENTS=off /,
      );
    });
  });
}
