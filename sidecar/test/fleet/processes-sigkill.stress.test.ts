/**
 * One process of a sidecar of two (SERVICE_PROCESSES=2) killed with SIGKILL under load, 6 times, each time the other:
 * the sidecar serves on through the survivor while the supervisor replaces the dead one. On PostgreSQL each process
 * writes a log of its own; on LMDB both share the data dir's one log, kept by whichever holds its lock, so half the
 * kills land on the process keeping it, mid-batch or not. Every executionId answered 200 is afterwards refused as a
 * replay and has its audit record, and the logs verify end to end and together hold every decision acknowledged once
 * checkpointed. Needs `npm run build` (root `npm test` builds first). Replay a run with WRIT_CRASH_SEED=<seed>.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../test/support/postgres.js";
import { KeepAliveClient, killAllBuiltSidecars, logLines, startBuiltSidecar, type BuiltSidecar } from "../support/built-sidecar.js";
import { API_KEY, REPLAY_BODY, auditPath, evaluateBody, mapLimit, parse, prng, surfaceAEnv } from "../durability/load.js";
import { bothServing, logged, pidOf } from "./processes-support.js";
import { FLEET_SIGNING_KEY, databaseUrlOf, exportedDecisions, fleetEnv } from "./support.js";

const CYCLES = 6;
const WORKERS = 8;
const INSTANCE = "killed";
const SETTINGS = {
  SERVICE_PROCESSES: "2",
  SERVICE_INSTANCE_ID: INSTANCE,
  SERVICE_SIGNING_THREADS: "0",
  SERVICE_AUDIT_CHECKPOINT_INTERVAL_MS: "200",
};
const TITLE = `every acknowledged decision survives ${CYCLES} SIGKILLs of a process, refused and audited afterwards, in a log that verifies`;

afterAll(async () => {
  await killAllBuiltSidecars();
});

describe("SIGKILL of one process of a sidecar of two under load (built sidecar, LMDB: one data dir, one log)", () => {
  let dataDir: string;
  let sidecar: BuiltSidecar;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "writ-processes-sigkill-"));
    const env = await surfaceAEnv({ ...SETTINGS, SERVICE_DATA_DIR: dataDir, SERVICE_SIGNING_KEY: FLEET_SIGNING_KEY });
    sidecar = await startBuiltSidecar(env, 45_000, true);
    await logged(sidecar, bothServing, "saying both serve");
  });
  afterAll(async () => {
    await killAllBuiltSidecars();
    await rm(dataDir, { recursive: true, force: true });
  });

  it(TITLE, () => everyAcknowledgedSurvives(sidecar, [INSTANCE], false));
});

const unavailable = await postgresUnavailable();

if (unavailable !== null) {
  describe.skip(`SIGKILL of one process of a sidecar of two on PostgreSQL: ${unavailable}`, () => {
    it("loses no acknowledged decision", () => undefined);
  });
} else {
  describe("SIGKILL of one process of a sidecar of two under load (built sidecar, PostgreSQL: a log each)", () => {
    let database: TestDatabase;
    let sidecar: BuiltSidecar;

    beforeAll(async () => {
      database = await createTestDatabase();
      sidecar = await startBuiltSidecar(await fleetEnv(databaseUrlOf(database.pool), SETTINGS), 45_000, true);
      await logged(sidecar, bothServing, "saying both serve");
    });
    afterAll(async () => {
      await killAllBuiltSidecars();
      await database?.drop();
    });

    it(TITLE, () => everyAcknowledgedSurvives(sidecar, [INSTANCE, `${INSTANCE}-p1`], true));
  });
}

/** The kills under load, then every acknowledged decision checked in `logs` (exported by whichever process answers), as a replay and in the trail. */
async function everyAcknowledgedSurvives(sidecar: BuiltSidecar, logs: readonly string[], readAgain: boolean): Promise<void> {
  const seed = Number(process.env["WRIT_CRASH_SEED"] ?? Date.now() % 1_000_000);
  const random = prng(seed);
  const acknowledged: string[] = [];
  let n = 0;
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    const client = new KeepAliveClient(sidecar.url, API_KEY, WORKERS);
    let stopped = false;
    const workers = Array.from({ length: WORKERS }, async () => {
      while (!stopped) {
        const id = `process-kill-${seed}-${n++}`;
        // A request cut by the kill rejects: it was never answered, so it promises nothing.
        const answer = await client.request("POST", "/evaluate", evaluateBody(id, "approved")).catch(() => null);
        if (answer?.status === 200) acknowledged.push(id);
        else if (answer !== null && answer.status !== 503) throw new Error(`unexpected ${answer.status}: ${answer.text}`);
      }
    });
    await sleep(150 + Math.floor(random() * 250));
    const lines = logLines(sidecar.all().stdout);
    process.kill(pidOf(lines, cycle % 2), "SIGKILL");
    // The survivor serves on while its peer is replaced.
    await sleep(100);
    stopped = true;
    await Promise.all(workers);
    client.close();
    await logged(sidecar, bothServing, `saying both serve after kill ${cycle + 1}`, lines.length);
  }
  console.log(`SIGKILL of a process: seed ${seed}, ${acknowledged.length} acknowledged decisions over ${CYCLES} kills`);

  // Each log, exported by whichever process answers. On LMDB the export checkpoints the one log first, whichever
  // process answers: read once. On PostgreSQL a log is exported up to its latest checkpoint when the process answering
  // is not the one writing it, so the logs are read again until they hold every decision acknowledged (their
  // checkpoints come every 200 ms here). Each time every log verifies.
  const deadline = Date.now() + (readAgain ? 20_000 : 0);
  let missing: string[];
  do {
    const inLogs = new Set<string>();
    for (const logId of logs) {
      const decisions = await exportedDecisions(sidecar.url, logId, "after the kills");
      expect(decisions, `the log \`${logId}\` holds nothing`).not.toBeNull();
      for (const id of decisions!) inLogs.add(id);
    }
    missing = acknowledged.filter((id) => !inLogs.has(id));
    if (missing.length > 0) await sleep(250);
  } while (missing.length > 0 && Date.now() < deadline);
  expect(missing.slice(0, 20), `${missing.length} acknowledged decisions in no log`).toEqual([]);

  const client = new KeepAliveClient(sidecar.url, API_KEY, 16);
  const checks = await mapLimit(acknowledged, 16, async (id) => {
    const problems: string[] = [];
    const replay = await client.request("POST", "/evaluate", evaluateBody(id, "approved"));
    if (JSON.stringify(parse(replay.text)) !== JSON.stringify(REPLAY_BODY)) problems.push(`a replay answered ${replay.status}`);
    if ((await client.request("GET", auditPath(id))).status !== 200) problems.push("no audit record");
    return problems.length === 0 ? null : `${id}: ${problems.join(", ")}`;
  });
  client.close();
  expect(checks.filter((c) => c !== null)).toEqual([]);
  expect(acknowledged.length).toBeGreaterThan(CYCLES);
}
