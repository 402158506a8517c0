/**
 * The store's periodic upkeep runs at the configured intervals (SERVICE_REPLAY_SWEEP_INTERVAL_MS,
 * SERVICE_AUDIT_PRUNE_INTERVAL_MS), on both backends as the sidecar opens them: an expired reservation is swept and a
 * decision past its retention is pruned within a few intervals of 200 ms, long before the default minute; what is
 * live or recent stays.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { executionFingerprint, generateSigningKeyPair, loadSigningKeyPem } from "@writ/runtime";
import { afterAll, describe, expect, it } from "vitest";
import { signerOf } from "../audit/record-log-contract.js";
import { loadConfig, type Env } from "../../src/config.js";
import type { StorageBackend } from "../../src/storage/backend.js";
import { openBackend } from "../../src/storage/registry.js";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../test/support/postgres.js";
import { decision } from "../audit/support.js";

const DAY_MS = 86_400_000;
const INTERVAL_MS = 200;
const key = loadSigningKeyPem(generateSigningKeyPair().privateKeyPem);
const unavailable = await postgresUnavailable();
const dirs: string[] = [];
const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  for (const database of databases) await database.drop();
});

async function backendOn(store: Env): Promise<StorageBackend> {
  const dir = await mkdtemp(join(tmpdir(), "writ-maintenance-"));
  dirs.push(dir);
  const config = loadConfig({
    SERVICE_API_KEY: "k".repeat(24),
    SERVICE_POLICIES_ROOT: dir,
    SERVICE_DATA_DIR: join(dir, "data"),
    SERVICE_AUDIT_DECISIONS_RETENTION_DAYS: "1",
    SERVICE_REPLAY_SWEEP_INTERVAL_MS: String(INTERVAL_MS),
    SERVICE_AUDIT_PRUNE_INTERVAL_MS: String(INTERVAL_MS),
    ...store,
  });
  return openBackend(config, {}, [], signerOf(key));
}

/** Polls `done` every 50 ms; false if it is still not true after `ms`. */
async function eventually(done: () => Promise<boolean>, ms: number): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 50))) {
    if (await done()) return true;
  }
  return done();
}

async function checkUpkeep(backend: StorageBackend): Promise<void> {
  const replay = backend.replay!;
  const now = Date.now();
  try {
    expect((await replay.reserve("expired", { now: now - 10_000, ttlMs: 1_000 })).ok).toBe(true);
    expect((await replay.reserve("live", { now, ttlMs: 600_000 })).ok).toBe(true);
    for (const [executionId, at] of [
      ["old", now - 2 * DAY_MS],
      ["recent", now - 1_000],
    ] as const) {
      const body = decision({ executionId, recordedAt: new Date(at).toISOString() });
      expect((await replay.consume(executionFingerprint(executionId), { now: at, record: { kind: "decision", body } })).ok).toBe(true);
    }
    const swept = await eventually(async () => (await replay.read("expired")) === null, 20 * INTERVAL_MS);
    const pruned = await eventually(async () => (await backend.audit.getDecision("old")) === null, 20 * INTERVAL_MS);
    expect({ swept, pruned }).toEqual({ swept: true, pruned: true });
    expect(await replay.read("live")).toMatchObject({ state: "reserved" });
    expect(await backend.audit.getDecision("recent")).toMatchObject({ executionId: "recent" });
  } finally {
    await backend.close();
  }
}

describe("the store's upkeep at the configured intervals", () => {
  it("LMDB: sweeps expired replay entries and prunes decisions past retention", async () => {
    await checkUpkeep(await backendOn({}));
  });

  it.skipIf(unavailable !== null)(`PostgreSQL: the same${unavailable === null ? "" : ` (${unavailable})`}`, async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const url = (database.pool.options as { connectionString: string }).connectionString;
    await checkUpkeep(await backendOn({ SERVICE_STORE: "postgres", SERVICE_DATABASE_URL: url }));
  });
});
