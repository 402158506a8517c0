/**
 * Two live sidecars never share one audit record log (storage/instance-in-use.ts): the second start is refused with
 * InstanceInUseError, naming SERVICE_INSTANCE_ID; one that stopped, or crashed, blocks nothing.
 * - LMDB: another live process's open mark in the data dir refuses the log's open; a mark whose process is gone does not.
 * - PostgreSQL (in process; the built sidecar's exit code: fleet/instance-in-use.e2e.test.ts): a second sidecar with the same
 *   instance id, given or taken from the host name, is refused while the first runs, and starts once it closed.
 */
import { spawn } from "node:child_process";
import { hostname } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../test/support/postgres.js";
import { LmdbLogStorage, RECORD_LOG_DATABASES } from "../../src/storage/lmdb/record-log-storage.js";
import { markOf } from "../../src/audit/record-log/open-marks.js";
import { InstanceInUseError } from "../../src/storage/instance-in-use.js";
import { instanceLockKey } from "../../src/storage/postgres/connection/instance-session.js";
import { tempEnv } from "../audit/support.js";
import { databaseUrlOf } from "../fleet/support.js";
import { startTestSidecar, type TestSidecar } from "../support/sidecar.js";
import { EMPTY_TRAIL } from "../support/empty-trail.js";

describe("LMDB: one live process per data dir's record log", () => {
  it("refuses to open the log while another live process's mark is in the data dir, and opens it once that process is gone", async () => {
    const env = await tempEnv();
    const other = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      const first = new LmdbLogStorage(env.root, EMPTY_TRAIL);
      const logId = first.logId;
      await first.close();
      // What another sidecar process leaves while it has the data dir open.
      const meta = env.root.openDB<unknown, string>(RECORD_LOG_DATABASES.meta, { encoding: "json" });
      await meta.put("open:other-sidecar", markOf(other.pid!));

      let refusal: unknown;
      try {
        new LmdbLogStorage(env.root, EMPTY_TRAIL);
      } catch (error) {
        refusal = error;
      }
      expect(refusal).toBeInstanceOf(InstanceInUseError);
      expect(refusal).toMatchObject({ code: "INSTANCE_IN_USE", instanceId: logId });
      expect((refusal as Error).message).toBe(
        `the audit record log \`${logId}\` is in use by another live sidecar (process ${other.pid} on ${hostname()} has this data dir open): two sidecars must not share one log; give each sidecar its own data dir (SERVICE_DATA_DIR), and its own SERVICE_INSTANCE_ID if set`,
      );
      // The refused open left no mark of its own.
      expect([...meta.getKeys({ start: "open:", end: "open:\uffff" })]).toEqual(["open:other-sidecar"]);

      other.kill("SIGKILL");
      await new Promise((resolve) => other.once("exit", resolve));
      const after = new LmdbLogStorage(env.root, EMPTY_TRAIL);
      expect(after.logId).toBe(logId);
      await after.close();
    } finally {
      other.kill("SIGKILL");
      await env.dispose();
    }
  });
});

const unavailable = await postgresUnavailable();

if (unavailable !== null) {
  describe.skip(`PostgreSQL: one live sidecar per instance id: ${unavailable}`, () => {
    it("refuses a second sidecar with the same instance id", () => undefined);
  });
} else {
  describe("PostgreSQL: one live sidecar per instance id", () => {
    let database: TestDatabase;
    let url: string;
    const running: TestSidecar[] = [];

    beforeAll(async () => {
      database = await createTestDatabase();
      url = databaseUrlOf(database.pool);
    });
    afterAll(async () => {
      for (const sidecar of running) await sidecar.close().catch(() => undefined);
      await database?.drop();
    });

    const start = async (env: Readonly<Record<string, string | undefined>>): Promise<TestSidecar> => {
      const sidecar = await startTestSidecar({ SERVICE_STORE: "postgres", SERVICE_DATABASE_URL: url, ...env });
      running.push(sidecar);
      return sidecar;
    };
    const refusalOf = async (env: Readonly<Record<string, string | undefined>>): Promise<InstanceInUseError> => {
      const outcome = await start(env).then(
        () => null,
        (error: unknown) => error,
      );
      expect(outcome).toBeInstanceOf(InstanceInUseError);
      return outcome as InstanceInUseError;
    };

    it("a second sidecar with the same SERVICE_INSTANCE_ID is refused, naming the variable and the session that holds the lock; another id starts", async () => {
      const first = await start({ SERVICE_INSTANCE_ID: "twin" });
      const refusal = await refusalOf({ SERVICE_INSTANCE_ID: "twin" });
      expect(refusal.code).toBe("INSTANCE_IN_USE");
      expect(refusal.message).toMatch(
        new RegExp(
          `^the audit record log \`twin\` is in use by another live sidecar \\(database session \\d+ \\(writ-sidecar@${hostname()}:${process.pid} from 127\\.0\\.0\\.1\\), connected since .+, holds its lock\\): two sidecars must not share one log; give each sidecar its own SERVICE_INSTANCE_ID \\(this one's instance id is from SERVICE_INSTANCE_ID\\); a sidecar whose host vanished holds it until the database finds the connection dead \\(about 30 s\\)$`,
        ),
      );
      const other = await start({ SERVICE_INSTANCE_ID: "other" });
      expect((await other.call("GET", "/health")).body).toMatchObject({ instanceId: "other", ready: true });
      expect((await first.call("GET", "/health")).body).toMatchObject({ instanceId: "twin", ready: true });
      // The refused start left nothing open: the first still holds the only lock of `twin`.
      const { rows } = await database.pool.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = $1::bigint",
        [instanceLockKey("twin")],
      );
      expect(Number(rows[0]!.n)).toBe(1);

      // Stopped, the first lets go: a sidecar with its id starts at once.
      await first.close();
      running.splice(running.indexOf(first), 1);
      const again = await start({ SERVICE_INSTANCE_ID: "twin" });
      expect((await again.call("GET", "/health")).body).toMatchObject({ instanceId: "twin", ready: true });
    });

    it("without SERVICE_INSTANCE_ID or a data dir, two sidecars on one host would share the host name's log: the second is refused", async () => {
      const first = await start({ SERVICE_DATA_DIR: undefined });
      expect((await first.call("GET", "/health")).body.instanceId).toBe(hostname());
      const refusal = await refusalOf({ SERVICE_DATA_DIR: undefined });
      expect(refusal.message).toContain("give each sidecar its own SERVICE_INSTANCE_ID (this one's instance id is from the host name");
    });
  });
}
