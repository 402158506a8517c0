/**
 * The fleet database's schema (storage/postgres/migrations.ts) and its commands: migrations applied once however many
 * sidecars start together, a schema newer than the release refused with one line, `writ-sidecar migrate` and
 * `writ-sidecar import-lmdb` as an operator runs them (the BUILT sidecar; root `npm test` builds first).
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { executionFingerprint } from "@writ/runtime";
import { LmdbReplayStore } from "@writ/runtime/lmdb";
import { PostgresReplayStore } from "@writ/runtime/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MIGRATIONS, SCHEMA_VERSION, SchemaTooNewError, migrate } from "../../src/storage/postgres/migrations.js";
import { createTestDatabase, postgresUnavailable, testPool, type TestDatabase } from "../../../test/support/postgres.js";
import { SIDECAR_MAIN, assertSidecarBuilt, logLines } from "../support/built-sidecar.js";
import { fleetEnv } from "../fleet/support.js";

const run = promisify(execFile);
const unavailable = await postgresUnavailable();

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `node sidecar/dist/main.js …args` with exactly `env` (plus PATH). */
async function sidecar(args: readonly string[], env: Readonly<Record<string, string>>): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(process.execPath, [SIDECAR_MAIN, ...args], { env: { PATH: process.env["PATH"] ?? "", ...env }, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

/** The database URL with a password in it: trust auth ignores it, and no output may show it. */
function withPassword(url: string): string {
  const u = new URL(url);
  u.password = "s3cret-pw";
  return u.toString();
}

if (unavailable !== null) {
  describe.skip(`fleet database schema: ${unavailable}`, () => {
    it("migrates once, refuses a newer schema, runs migrate and import-lmdb", () => undefined);
  });
} else {
  describe("fleet database schema", () => {
    let database: TestDatabase;
    let url: string;
    beforeAll(async () => {
      assertSidecarBuilt();
      database = await createTestDatabase();
      url = (database.pool.options as { connectionString: string }).connectionString;
    });
    afterAll(() => database?.drop());

    it("eight sidecars migrating an empty database at once apply each migration exactly once", async () => {
      const scratch = await createTestDatabase();
      const pools = Array.from({ length: 8 }, () => testPool((scratch.pool.options as { connectionString: string }).connectionString));
      try {
        const outcomes = await Promise.all(pools.map((pool) => migrate(pool)));
        // Each migration is its own transaction: several sidecars may share the work, but none repeats another's.
        expect(outcomes.flatMap((o) => o.applied.map((m) => m.version)).sort((a, b) => a - b)).toEqual(MIGRATIONS.map((m) => m.version));
        expect(outcomes.every((o) => o.to === SCHEMA_VERSION)).toBe(true);
        const { rows } = await scratch.pool.query<{ version: number }>("SELECT version FROM writ_schema ORDER BY version");
        expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
      } finally {
        await Promise.all(pools.map((pool) => pool.end()));
        await scratch.drop();
      }
    });

    it("`writ-sidecar migrate` applies the schema, then finds nothing to do; the password is never printed", async () => {
      const first = await sidecar(["migrate"], { SERVICE_DATABASE_URL: withPassword(url) });
      expect(first).toMatchObject({ code: 0, stderr: "" });
      expect(first.stdout).toContain(`schema migrated from version 0 to ${SCHEMA_VERSION}`);
      const second = await sidecar(["migrate"], { SERVICE_DATABASE_URL: withPassword(url) });
      expect(second.stdout).toContain(`schema already at version ${SCHEMA_VERSION}`);
      for (const o of [first, second]) expect(o.stdout + o.stderr).not.toContain("s3cret-pw");
      expect(await sidecar(["migrate", "extra"], { SERVICE_DATABASE_URL: url })).toMatchObject({ code: 2 });
      const nowhere = await sidecar(["migrate"], { SERVICE_DATABASE_URL: "postgresql://writ:s3cret-pw@127.0.0.1:1/none", SERVICE_DATABASE_CONNECT_TIMEOUT_MS: "1000" });
      expect(nowhere.code).toBe(1);
      expect(nowhere.stderr.trim().split("\n")).toHaveLength(1);
      expect(nowhere.stderr).toMatch(/^writ-sidecar: migrate failed: /);
      expect(nowhere.stderr).not.toContain("s3cret-pw");
    });

    it("a schema newer than this release: migrate refuses it, and a sidecar refuses to start with one log line", async () => {
      const newer = await createTestDatabase();
      try {
        await migrate(newer.pool);
        await newer.pool.query("INSERT INTO writ_schema (version, description) VALUES ($1, 'from a later release')", [SCHEMA_VERSION + 1]);
        await expect(migrate(newer.pool)).rejects.toBeInstanceOf(SchemaTooNewError);
        const start = await sidecar([], await fleetEnv((newer.pool.options as { connectionString: string }).connectionString));
        expect(start).toMatchObject({ code: 1, stderr: "" });
        expect(logLines(start.stdout)).toEqual([
          expect.objectContaining({
            level: "fatal",
            msg: `failed to start: the database schema is at version ${SCHEMA_VERSION + 1}, newer than this sidecar knows (${SCHEMA_VERSION}): upgrade the sidecar, or point it at another database`,
          }),
        ]);
      } finally {
        await newer.drop();
      }
    });

    it("`writ-sidecar import-lmdb` moves a data dir in, reports what it did, and refuses to import it twice", async () => {
      const dir = await mkdtemp(join(tmpdir(), "writ-import-cli-"));
      try {
        const lmdb = new LmdbReplayStore(join(dir, "data"));
        for (let i = 0; i < 1_200; i++) expect((await lmdb.consume(executionFingerprint(`cli-${i}`), { now: 1_000 + i })).ok).toBe(true);
        await lmdb.close();
        const first = await sidecar(["import-lmdb", join(dir, "data")], { SERVICE_DATABASE_URL: withPassword(url) });
        expect(first).toMatchObject({ code: 0, stderr: "" });
        expect(first.stdout).toContain("imported replay: 1200");
        expect(first.stdout).toContain("import committed");
        expect(first.stdout).not.toContain("s3cret-pw");
        expect(await new PostgresReplayStore(database.pool).consume(executionFingerprint("cli-7"))).toMatchObject({ ok: false, reason: "conflict" });
        const again = await sidecar(["import-lmdb", join(dir, "data")], { SERVICE_DATABASE_URL: url });
        expect(again.code).toBe(1);
        expect(again.stderr).toMatch(/^writ-sidecar: import-lmdb failed: `.*` was already imported into this database on .*: nothing was written\n$/);
        expect(await sidecar(["import-lmdb"], { SERVICE_DATABASE_URL: url })).toMatchObject({ code: 2 });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
}
