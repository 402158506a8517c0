/**
 * The conformance suite, both surfaces, against a built sidecar on PostgreSQL (`SERVICE_STORE=postgres`):
 * the fleet backend answers every case as the embedded one does. Skipped locally without PostgreSQL (one line saying
 * how to run it); with CI=true it fails instead.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../test/support/postgres.js";
import { killAllBuiltSidecars } from "../../sidecar/test/support/built-sidecar.js";
import type { ConformanceReport } from "../src/report.js";
import { API_KEY, CONFORMANCE_CLI, compileFixtures, REPO, startWrit, type Fixtures, type Writ } from "./support/writ.js";

const unavailable = await postgresUnavailable();

function conformance(surface: "a" | "b", baseUrl: string, publicKey: string, report: string): Promise<number> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CONFORMANCE_CLI, "--surface", surface, "--base-url", baseUrl, "--api-key", API_KEY, "--public-key", publicKey, "--report", report],
      { cwd: REPO, timeout: 120_000 },
      (error) => resolve(error === null ? 0 : typeof error.code === "number" ? error.code : -1),
    );
  });
}

if (unavailable !== null) {
  describe.skip(`conformance against a sidecar on PostgreSQL: ${unavailable}`, () => {
    it("passes every case of both surfaces", () => undefined);
  });
} else {
  let fixtures: Fixtures;
  let database: TestDatabase;
  let writ: Writ;
  beforeAll(async () => {
    fixtures = await compileFixtures();
    database = await createTestDatabase();
    writ = await startWrit(fixtures, {
      SERVICE_STORE: "postgres",
      SERVICE_DATABASE_URL: (database.pool.options as { connectionString: string }).connectionString,
    });
  });
  afterAll(async () => {
    await writ?.stop();
    await killAllBuiltSidecars();
    await database?.drop();
    await fixtures?.remove();
  });

  describe("conformance against a sidecar on PostgreSQL", () => {
    it.each(["a", "b"] as const)("surface %s: every case passes, none skipped", async (surface) => {
      const path = join(fixtures.dir, `report-postgres-${surface}.json`);
      const code = await conformance(surface, surface === "a" ? writ.surfaceA : writ.surfaceB, fixtures.publicKey, path);
      const report = JSON.parse(await readFile(path, "utf8")) as ConformanceReport;
      expect(report.cases.filter((c) => c.outcome !== "pass").map((c) => ({ id: c.id, outcome: c.outcome, failures: c.failures }))).toEqual(
        [],
      );
      expect(code).toBe(0);
      expect(report.totals).toMatchObject({ fail: 0, skip: 0 });
    });
  });
}
