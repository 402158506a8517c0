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
import { PostgresReplayStore } from "../../../src/storage/postgres/replay-store.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresAuditLog } from "../../../src/storage/postgres/audit-log.js";
import { MIGRATIONS, SCHEMA_VERSION, SchemaTooNewError, migrate } from "../../../src/storage/postgres/migrations.js";
import { PostgresLogStorage } from "../../../src/storage/postgres/record-log-storage.js";
import { MANUAL_CHECKPOINTS } from "../../audit/record-log-contract.js";
import { at, decision } from "../../audit/support.js";
import { createTestDatabase, postgresUnavailable, testPool, type TestDatabase } from "../../../../test/support/postgres.js";
import { SIDECAR_MAIN, assertSidecarBuilt, logLines } from "../../support/built-sidecar.js";
import { fleetEnv } from "../../fleet/support.js";

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
    const { stdout, stderr } = await run(process.execPath, [SIDECAR_MAIN, ...args], {
      env: { PATH: process.env["PATH"] ?? "", ...env },
      timeout: 30_000,
    });
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

    it("migration 5 takes over a trail of version 4: records in no log become candidates, the decision counts start from the logged ones", async () => {
      const old = await createTestDatabase();
      const { pool } = old;
      try {
        // Version 4, as the previous release left it.
        await pool.query(
          "CREATE TABLE writ_schema (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
        );
        for (const m of MIGRATIONS.filter((m) => m.version <= 4)) {
          for (const statement of m.statements) await pool.query(statement);
          await pool.query("INSERT INTO writ_schema (version, description) VALUES ($1, $2)", [m.version, m.description]);
        }
        const decide = async (store: PostgresReplayStore, executionId: string, ms: number) => {
          const body = decision({ executionId, recordedAt: at(ms) });
          expect(
            (
              await store.consume(executionFingerprint(executionId), {
                now: Date.parse(body.recordedAt),
                record: { kind: "decision", body },
              })
            ).ok,
          ).toBe(true);
        };
        const logged = new PostgresReplayStore(pool, { recordLog: { logId: "old-a" } });
        const unlogged = new PostgresReplayStore(pool);
        // Four decisions logged over two days, two left pending, two written with the log off, one verification by hand.
        for (const [i, ms] of [0, 1, 86_400_000, 86_400_001].entries()) await decide(logged, `logged-${i}`, ms);
        expect(await new PostgresLogStorage(pool, "old-a").sequence("old-a", 100)).toBe(4);
        await decide(logged, "pending-0", 86_400_002);
        await decide(logged, "pending-1", 86_400_003);
        await decide(unlogged, "unlogged-0", 5);
        await decide(unlogged, "unlogged-1", 86_400_004);
        await pool.query("INSERT INTO writ_audit_verifications (recorded_at, body) VALUES (1, '{}')");
        await pool.query("INSERT INTO writ_audit_log_meta (name, value) VALUES ('complete', 'true')");

        expect((await migrate(pool)).applied.map((m) => m.version)).toEqual(MIGRATIONS.filter((m) => m.version >= 5).map((m) => m.version));
        const rows = async (sql: string) => (await pool.query(sql)).rows;
        expect(await rows("SELECT kind, ref FROM writ_audit_log_outside ORDER BY kind, ref")).toEqual(
          [
            { kind: "decision", ref: executionFingerprint("unlogged-0") },
            { kind: "decision", ref: executionFingerprint("unlogged-1") },
            { kind: "verification", ref: "1" },
          ].sort((a, b) => (a.kind + a.ref < b.kind + b.ref ? -1 : 1)),
        );
        const day0 = Math.floor(Date.parse(at(0)) / 86_400_000);
        expect(await rows("SELECT log_id, decisions FROM writ_audit_log_state")).toEqual([{ log_id: "old-a", decisions: "4" }]);
        expect(await rows("SELECT day, log_id, decisions FROM writ_audit_log_days ORDER BY day")).toEqual([
          { day: String(day0), log_id: "old-a", decisions: "2" },
          { day: String(day0 + 1), log_id: "old-a", decisions: "2" },
        ]);
        expect(
          await rows("SELECT to_regclass('writ_audit_log_meta') AS meta, to_regclass('writ_audit_records_by_policy_status') AS index"),
        ).toEqual([{ meta: null, index: "writ_audit_records_by_policy_status" }]);
        // The counts answer as counting the table does, on either day.
        const counted = new PostgresAuditLog(pool, {
          recordLog: { storage: new PostgresLogStorage(pool, "new-a"), checkpoints: MANUAL_CHECKPOINTS },
        });
        const scanned = new PostgresAuditLog(pool);
        try {
          for (const day of [0, 1]) {
            const now = new Date(Date.parse(at(day * 86_400_000 + 10)));
            expect(await counted.stats(now)).toEqual(await scanned.stats(now));
            expect((await counted.stats(now)).total_decisions).toBe("8");
          }
          expect(await new PostgresLogStorage(pool, "new-a").adoptUnlogged(Date.now())).toBe(3);
        } finally {
          await counted.close();
          await scanned.close();
          await logged.close();
          await unlogged.close();
        }
      } finally {
        await old.drop();
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
      const nowhere = await sidecar(["migrate"], {
        SERVICE_DATABASE_URL: "postgresql://writ:s3cret-pw@127.0.0.1:1/none",
        SERVICE_DATABASE_CONNECT_TIMEOUT_MS: "1000",
      });
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
        expect(await new PostgresReplayStore(database.pool).consume(executionFingerprint("cli-7"))).toMatchObject({
          ok: false,
          reason: "conflict",
        });
        const again = await sidecar(["import-lmdb", join(dir, "data")], { SERVICE_DATABASE_URL: url });
        expect(again.code).toBe(1);
        expect(again.stderr).toMatch(
          /^writ-sidecar: import-lmdb failed: `.*` was already imported into this database on .*: nothing was written\n$/,
        );
        expect(await sidecar(["import-lmdb"], { SERVICE_DATABASE_URL: url })).toMatchObject({ code: 2 });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
}
