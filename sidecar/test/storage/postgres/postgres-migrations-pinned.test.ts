/**
 * The PostgreSQL migrations as released (sidecar/src/storage/postgres/migrations/*.sql): the text of each released
 * migration is pinned by its SHA-256, so every database ran, for each version, the statements a database migrated today
 * runs; the versions run 1, 2, … up to SCHEMA_VERSION; the statements are split as PostgreSQL reads them; a statement
 * that fails is named by its migration, file and line.
 */
import { createHash } from "node:crypto";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { MIGRATIONS, SCHEMA_VERSION, migrate, splitStatements } from "../../../src/storage/postgres/migrations.js";
import { RECORD_SOURCES } from "../../../src/storage/postgres/stored-records.js";
import { createTestDatabase, postgresUnavailable } from "../../../../test/support/postgres.js";

/**
 * The SHA-256 of each released migration's file. A release adds the digests of its new migrations; a digest here never
 * changes: a database that ran a migration never runs it again, so an edit would reach only new databases.
 */
const RELEASED: Readonly<Record<number, string>> = {
  1: "937b7b2fe6b4550c08159ccc507ae82a26a390da9584df6bd0600e2ce6f01ec5",
  2: "854c6e80129b499af5a1bf44b45e5f84ca1ebadac01b196a076ddcc1e227b81d",
  3: "16e8c06707c3a397267b2c2efe858a832a096976b5b4b778ed3eaf7230eea52a",
  4: "0d9857b344025a86bccfbd33dc8dabe3d7728bf2993175353d5386612ba72e7b",
  5: "cf4d04085c08f73827975619cd48ee8285562f3cd9d8d4d48f324863b4ed78d9",
};

const MIGRATIONS_DIR = fileURLToPath(new URL("../../../src/storage/postgres/migrations", import.meta.url));
const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

describe("released migrations", () => {
  for (const [version, digest] of Object.entries(RELEASED)) {
    it(`migration ${version} is the text it was released with`, () => {
      const migration = MIGRATIONS.find((m) => m.version === Number(version));
      expect(migration, `migration ${version} is released: it stays`).toBeDefined();
      expect(sha256(migration!.sql), `migrations/${migration!.file} changed: a released migration is never edited: add a new one`).toBe(
        digest,
      );
    });
  }

  it("the versions run 1, 2, … without a gap, each its file's number, and SCHEMA_VERSION is the last", () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    for (const m of MIGRATIONS) expect(m.file.startsWith(`${String(m.version).padStart(4, "0")}-`)).toBe(true);
    expect(SCHEMA_VERSION).toBe(MIGRATIONS.at(-1)!.version);
    expect(Math.max(...Object.keys(RELEASED).map(Number))).toBeLessThanOrEqual(SCHEMA_VERSION);
  });

  it("every file in migrations/ is a migration, and every migration has a description and statements", () => {
    expect(readdirSync(MIGRATIONS_DIR).sort()).toEqual(MIGRATIONS.map((m) => m.file));
    for (const m of MIGRATIONS) {
      expect(m.description).not.toBe("");
      expect(m.statements.length).toBeGreaterThan(0);
      expect(m.statements.every((s) => s !== "" && !s.startsWith("--"))).toBe(true);
    }
  });

  it("each table the record log's records are stored in has the trigger that keeps its candidates outside the log", () => {
    const statements = MIGRATIONS.flatMap((m) => m.statements);
    for (const source of RECORD_SOURCES) {
      const name = `${source.table}_outside_log`;
      expect(statements.some((s) => s.startsWith(`CREATE TRIGGER ${name} AFTER INSERT ON ${source.table}\n`))).toBe(true);
      expect(statements.find((s) => s.startsWith(`CREATE OR REPLACE FUNCTION ${name}()`))).toContain(
        `SELECT ${source.kindOf}, ${source.refOf} FROM inserted i`,
      );
    }
  });
});

describe("splitStatements", () => {
  it("splits at each ; outside quoted text, dollar-quoted bodies and comments, leaving out the comments before each", () => {
    const sql = [
      "-- description: a ; in a comment",
      "CREATE TABLE a (x text DEFAULT ';', \"y;\" text);",
      "",
      "/* a ; /* nested ; */ still ; */ SELECT $$ ; $$, $f$ $$ ; $f$;",
      "SELECT E'\\'; ' || 'it''s ;'; SELECT $1, a$b$c FROM t -- ; here",
      ";",
    ].join("\n");
    expect(splitStatements(sql, "t.sql")).toEqual([
      "CREATE TABLE a (x text DEFAULT ';', \"y;\" text)",
      "SELECT $$ ; $$, $f$ $$ ; $f$",
      "SELECT E'\\'; ' || 'it''s ;'",
      "SELECT $1, a$b$c FROM t -- ; here",
    ]);
  });

  it("refuses a statement without its ; and text left open, naming the file and line", () => {
    expect(() => splitStatements("SELECT 1;\n\nSELECT 2\n", "t.sql")).toThrow(
      "migrations/t.sql, line 3: the last statement does not end with `;`",
    );
    expect(() => splitStatements("SELECT 1;\nDO $x$ BEGIN END $y$;\n", "t.sql")).toThrow("migrations/t.sql, line 2: $x$ is never closed");
    expect(() => splitStatements("SELECT 'a;\n", "t.sql")).toThrow("migrations/t.sql, line 1: a '-quoted text is never closed");
    expect(() => splitStatements("/* /* */ SELECT 1;\n", "t.sql")).toThrow("migrations/t.sql, line 1: a comment is never closed");
  });
});

const unavailable = await postgresUnavailable();

if (unavailable !== null) {
  describe.skip(`a failing migration: ${unavailable}`, () => {
    it("names its migration, file and line, and rolls back", () => undefined);
  });
} else {
  describe("a failing migration", () => {
    it("names its migration, file and line, and rolls back", async () => {
      const database = await createTestDatabase();
      try {
        await migrate(database.pool);
        // Migration 5 (and those after it) run again over its own tables: its first CREATE TRIGGER finds the trigger there.
        await database.pool.query("DELETE FROM writ_schema WHERE version >= 5");
        const five = MIGRATIONS.find((m) => m.version === 5)!;
        const line = five.sql.split("\n").findIndex((l) => l.startsWith("CREATE TRIGGER writ_audit_records_outside_log ")) + 1;
        await expect(migrate(database.pool)).rejects.toThrow(
          `migration 5 (${five.file}, the statement at line ${line}) failed: trigger "writ_audit_records_outside_log" for relation "writ_audit_records" already exists`,
        );
        const { rows } = await database.pool.query<{ version: number }>("SELECT max(version) AS version FROM writ_schema");
        expect(rows[0]!.version).toBe(4);
      } finally {
        await database.drop();
      }
    });
  });
}
