/**
 * A sidecar on a database whose autovacuum is off says so at start, at warn (storage/postgres/autovacuum.ts): its
 * record log's pending queue and its tables keep their dead rows there, and sequencing slows as they grow. The machines
 * this runs on may have autovacuum on or off (a server-wide setting a test cannot change), so the expectation follows
 * the server's own answer.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateSigningKeyPair, loadSigningKeyPem } from "@writ/runtime";
import { describe, expect, it } from "vitest";
import { signerOf } from "../../audit/record-log-contract.js";
import { loadConfig } from "../../../src/config.js";
import { AUTOVACUUM_OFF } from "../../../src/storage/postgres/autovacuum.js";
import { openBackend } from "../../../src/storage/registry.js";
import { createTestDatabase, postgresUnavailable } from "../../../../test/support/postgres.js";

const unavailable = await postgresUnavailable();

describe("a sidecar on PostgreSQL", () => {
  it.skipIf(unavailable !== null)(
    `warns at start when the server's autovacuum is off, and only then${unavailable === null ? "" : ` (${unavailable})`}`,
    async () => {
      const database = await createTestDatabase();
      const dir = await mkdtemp(join(tmpdir(), "writ-autovacuum-"));
      try {
        const { rows } = await database.pool.query<{ autovacuum: string }>("SELECT current_setting('autovacuum') AS autovacuum");
        const config = loadConfig({
          SERVICE_API_KEY: "k".repeat(24),
          SERVICE_POLICIES_ROOT: dir,
          SERVICE_DATA_DIR: join(dir, "data"),
          SERVICE_STORE: "postgres",
          SERVICE_DATABASE_URL: (database.pool.options as { connectionString: string }).connectionString,
        });
        const warnings: string[] = [];
        const backend = await openBackend(
          config,
          { onWarning: (message) => warnings.push(message) },
          [],
          signerOf(loadSigningKeyPem(generateSigningKeyPair().privateKeyPem)),
        );
        await backend.close();
        expect(warnings).toEqual(rows[0]!.autovacuum === "off" ? [AUTOVACUUM_OFF] : []);
        expect(AUTOVACUUM_OFF).toMatch(/writ_audit_log_pending.*VACUUM/);
      } finally {
        await database.drop();
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
