/** The bundle pin stores against their one contract: in memory, in the LMDB data dir, and in the fleet's database. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open, type RootDatabase } from "lmdb";
import { afterAll, describe, it } from "vitest";
import { MemoryBundlePins } from "@writ/runtime";
import { LmdbBundlePins } from "../../src/storage/lmdb/bundle-pins.js";
import { PostgresBundlePins } from "../../src/storage/postgres/bundle-pins.js";
import { migrate } from "../../src/storage/postgres/migrations.js";
import { createTestDatabase, postgresUnavailable, testPool, type TestDatabase } from "../../../test/support/postgres.js";
import { bundlePinsContract } from "./bundle-pins-contract.js";

bundlePinsContract(
  "MemoryBundlePins",
  async () => {
    const pins = new MemoryBundlePins();
    return { open: () => pins, dispose: async () => undefined };
  },
  { durable: false },
);

bundlePinsContract(
  "LmdbBundlePins",
  async () => {
    const dir = await mkdtemp(join(tmpdir(), "writ-pins-"));
    const roots: RootDatabase[] = [];
    return {
      // A second store opens the environment again, as a restarted sidecar (or a second process) would.
      open: () => {
        const root = open({ path: dir, maxDbs: 32 });
        roots.push(root);
        return new LmdbBundlePins(root);
      },
      dispose: async () => {
        for (const root of roots) await root.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
  { durable: true },
);

const unavailable = await postgresUnavailable();
if (unavailable !== null) {
  describe.skip(`PostgresBundlePins: ${unavailable}`, () => {
    it("runs the bundle pins contract on PostgreSQL", () => undefined);
  });
} else {
  const databases: TestDatabase[] = [];
  afterAll(() => Promise.all(databases.map((d) => d.drop())));
  bundlePinsContract(
    "PostgresBundlePins",
    async () => {
      const database = await createTestDatabase();
      databases.push(database);
      await migrate(database.pool);
      const url = (database.pool.options as { connectionString: string }).connectionString;
      const others: ReturnType<typeof testPool>[] = [];
      let opened = 0;
      return {
        // Every store after the first has its own pool: another sidecar of the fleet.
        open: () => {
          if (opened++ === 0) return new PostgresBundlePins(database.pool);
          const pool = testPool(url);
          others.push(pool);
          return new PostgresBundlePins(pool);
        },
        dispose: async () => {
          await Promise.all(others.map((p) => p.end()));
        },
      };
    },
    { durable: true },
  );
}
