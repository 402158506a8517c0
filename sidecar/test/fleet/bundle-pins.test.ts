/**
 * Immutable versions across a fleet: the sidecars of one PostgreSQL database pin each
 * `policyId@version` to the bundle_hash first served by any of them. A host whose policies root holds other bytes
 * under that name refuses them (BUNDLE_VERSION_CONFLICT) instead of serving another policy under the same name.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { archiveFileName } from "@writ/runtime";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../test/support/postgres.js";
import { POLICY_ID, bundleKey, transferArchive } from "../support/bundle-source.js";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import { startTestSidecar, type TestSidecar } from "../support/sidecar.js";
import { databaseUrlOf } from "./support.js";

const unavailable = await postgresUnavailable();

if (unavailable !== null) {
  describe.skip(`bundle pins across a fleet: ${unavailable}`, () => {
    it("refuses on one host a version another host served with other bytes", () => undefined);
  });
} else {
  const cleanup: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  describe("bundle pins across a fleet (PostgreSQL)", () => {
    it("refuses on one host a version another host served with other bytes; both serve the first", async () => {
      const database: TestDatabase = await createTestDatabase();
      cleanup.push(() => database.drop());
      const signer = await bundleKey();
      const host = async (threshold: number): Promise<TestSidecar> => {
        const root = await mkdtemp(join(tmpdir(), "writ-pins-host-"));
        cleanup.push(() => rm(root, { recursive: true, force: true }));
        await writeFile(join(root, archiveFileName(POLICY_ID, "1.0.0")), transferArchive("1.0.0", signer.key, threshold));
        const sidecar = await startTestSidecar({
          SERVICE_POLICIES_ROOT: root,
          SERVICE_BUNDLE_KEYS: signer.publicKeyFile,
          SERVICE_STORE: "postgres",
          SERVICE_DATABASE_URL: databaseUrlOf(database.pool),
        });
        cleanup.push(() => sidecar.close());
        return sidecar;
      };
      const evaluate = (s: TestSidecar) =>
        s.call("POST", "/evaluate", {
          executionId: randomUUID(),
          policyId: POLICY_ID,
          policyVersion: "1.0.0",
          verifiedSignals: TRANSFER_SIGNALS.pending,
        });

      const first = await host(10_000);
      expect((await evaluate(first)).body).toMatchObject({ status: "pending_override" });

      // Another host, the same version compiled with other rules (forced past the compiler's refusal).
      const second = await host(50_000);
      expect(second.sidecar.context.notices).toContainEqual(
        expect.stringMatching(/^bundle `conformance\.transfer@1\.0\.0` refused \(BUNDLE_VERSION_CONFLICT\)/),
      );
      expect((await evaluate(second)).status).toBe(500);
      expect((await second.call("GET", "/health")).body.bundles).toMatchObject({
        ready: false,
        conflicts: 1,
        problem: "no bundle verifies",
      });

      const { rows } = await database.pool.query<{ bundle_hash: string }>(
        "SELECT bundle_hash FROM writ_bundle_pins WHERE policy_id = $1 AND version = $2",
        [POLICY_ID, "1.0.0"],
      );
      expect(rows).toEqual([{ bundle_hash: (await first.call("GET", `/policies/${POLICY_ID}/versions/1.0.0/schema`)).body.bundleHash }]);
    });
  });
}
