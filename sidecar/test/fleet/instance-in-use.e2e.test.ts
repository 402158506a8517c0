/**
 * Two BUILT sidecars that would share one audit record log (storage/instance-in-use.ts): the second exits with code 1
 * and one `failed to start` line with `code: "INSTANCE_IN_USE"` naming SERVICE_INSTANCE_ID, while the first serves on;
 * once the first crashed (SIGKILL), a sidecar with its id starts at once. On PostgreSQL, one instance id on one
 * database; on LMDB, one data dir. Needs the build (`npm run test:e2e` builds first).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../test/support/postgres.js";
import { killAllBuiltSidecars, startBuiltSidecar, type BuiltSidecar } from "../support/built-sidecar.js";
import { surfaceAEnv } from "../durability/load.js";
import { databaseUrlOf, fleetEnv, refused } from "./support.js";

async function health(sidecar: BuiltSidecar): Promise<Record<string, unknown>> {
  const response = await fetch(`${sidecar.url}/health?probe=ready`);
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

afterAll(async () => {
  await killAllBuiltSidecars();
});

describe("LMDB: two sidecars on one data dir", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "writ-instance-in-use-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("the second is refused while the first runs; after the first crashed, the next starts at once", async () => {
    const env = await surfaceAEnv({ SERVICE_DATA_DIR: join(dir, "data") });
    const first = await startBuiltSidecar(env);
    const { instanceId } = await health(first);
    const { exit, line } = await refused(env);
    expect(exit).toMatch(/exited \(code 1, signal null\) before listening/);
    expect(line).toMatchObject({ code: "INSTANCE_IN_USE" });
    expect(line["msg"]).toBe(
      `failed to start: the audit record log \`${String(instanceId)}\` is in use by another live sidecar (process ${first.child.pid} on ${hostname()} has this data dir open): two sidecars must not share one log; give each sidecar its own data dir (SERVICE_DATA_DIR), and its own SERVICE_INSTANCE_ID if set`,
    );
    // The first serves on, untouched.
    expect(await health(first)).toMatchObject({ ready: true, instanceId });

    await first.kill();
    const started = Date.now();
    const next = await startBuiltSidecar(env);
    console.log(`LMDB: restarted on the crashed sidecar's data dir in ${Date.now() - started} ms`);
    expect(await health(next)).toMatchObject({ ready: true, instanceId });
    await next.kill();
  });
});

const unavailable = await postgresUnavailable();

if (unavailable !== null) {
  describe.skip(`PostgreSQL: two sidecars with one instance id: ${unavailable}`, () => {
    it("the second is refused", () => undefined);
  });
} else {
  describe("PostgreSQL: two sidecars with one instance id", () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createTestDatabase();
    });
    afterAll(async () => {
      await killAllBuiltSidecars();
      await database?.drop();
    });

    it("the second is refused while the first runs; after the first crashed, the next starts at once", async () => {
      const env = await fleetEnv(databaseUrlOf(database.pool), { SERVICE_INSTANCE_ID: "twin" });
      const first = await startBuiltSidecar(env);
      expect(await health(first)).toMatchObject({ ready: true, instanceId: "twin" });
      const { exit, line } = await refused(env);
      expect(exit).toMatch(/exited \(code 1, signal null\) before listening/);
      expect(line).toMatchObject({ code: "INSTANCE_IN_USE" });
      expect(line["msg"]).toMatch(
        new RegExp(
          `^failed to start: the audit record log \`twin\` is in use by another live sidecar \\(database session \\d+ \\(writ-sidecar@[^:]+:${first.child.pid} from 127\\.0\\.0\\.1\\), connected since [^,]+, holds its lock\\): two sidecars must not share one log; give each sidecar its own SERVICE_INSTANCE_ID`,
        ),
      );
      expect(await health(first)).toMatchObject({ ready: true, instanceId: "twin" });

      await first.kill();
      const started = Date.now();
      const next = await startBuiltSidecar(env);
      console.log(`PostgreSQL: restarted with the crashed sidecar's instance id in ${Date.now() - started} ms`);
      expect(await health(next)).toMatchObject({ ready: true, instanceId: "twin" });
      await next.kill();
    });
  });
}
