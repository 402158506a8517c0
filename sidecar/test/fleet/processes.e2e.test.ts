/**
 * A BUILT sidecar of two processes (SERVICE_PROCESSES=2; docs/sidecar.md, "Several processes"). On PostgreSQL both
 * serve behind the one port, each with a log of its own; `/metrics` answers for both; a reload reaches both; a
 * process that dies is replaced; the processes end with their supervisor; SIGTERM stops them all. On LMDB both share
 * the data dir and its one log, which the survivor takes over when the process keeping it dies.
 * Needs the build (`npm run test:e2e` builds first).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DataDirInUseError, compactDataDir } from "../../src/storage/lmdb/compact.js";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../test/support/postgres.js";
import { KeepAliveClient, killAllBuiltSidecars, logLines, startBuiltSidecar } from "../support/built-sidecar.js";
import { API_KEY, evaluateBody, surfaceAEnv } from "../durability/load.js";
import { alive, bothServing, fresh, instanceIds, logged, pidOf } from "./processes-support.js";
import { FLEET_SIGNING_KEY, databaseUrlOf, exportedDecisions, fleetEnv } from "./support.js";

const INSTANCE = "processes-test";

afterAll(async () => {
  await killAllBuiltSidecars();
});

describe("LMDB: a sidecar of two processes on one data dir", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "writ-processes-lmdb-"));
  });
  afterAll(async () => {
    await killAllBuiltSidecars();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("both serve one log, which either exports whole; the survivor takes it over when its keeper dies; compact is refused meanwhile", async () => {
    const env = await surfaceAEnv({
      SERVICE_DATA_DIR: dataDir,
      SERVICE_PROCESSES: "2",
      SERVICE_INSTANCE_ID: INSTANCE,
      SERVICE_LOG_LEVEL: "info",
      SERVICE_SIGNING_THREADS: "0",
      SERVICE_SIGNING_KEY: FLEET_SIGNING_KEY,
    });
    const sidecar = await startBuiltSidecar(env, 45_000, true);
    await logged(sidecar, bothServing, "saying both serve");
    // One data dir, one log: both processes answer with its id.
    expect(await instanceIds(sidecar.url, 8)).toEqual(new Set([INSTANCE]));

    const decided: string[] = [];
    const decide = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) {
        const id = `processes-lmdb-${decided.length}`;
        expect((await fresh(sidecar.url, "POST", "/evaluate", evaluateBody(id, "approved"))).status).toBe(200);
        decided.push(id);
      }
    };
    // Every export, whichever process answers it (a connection each), covers every decision so far and verifies: the
    // process not keeping the log asks the keeper for a checkpoint and waits for it.
    const exportsCoverAll = async (what: string): Promise<void> => {
      for (let i = 0; i < 4; i++) {
        const inLog = await exportedDecisions(sidecar.url, INSTANCE, what);
        expect(
          decided.filter((id) => !inLog!.has(id)),
          what,
        ).toEqual([]);
      }
    };
    await decide(6);
    // A replay is refused whichever process consumed the execution.
    for (const id of decided) expect((await fresh(sidecar.url, "POST", "/evaluate", evaluateBody(id, "approved"))).status).toBe(422);
    await exportsCoverAll("two processes");

    // A running sidecar's data dir is not compacted, whichever of its processes holds the lock.
    await expect(compactDataDir(dataDir)).rejects.toThrow(DataDirInUseError);

    // Each process in turn dies; until its replacement serves, the other alone answers: it keeps the log now (it took
    // the lock over when it was the other's), so what it decides is logged and its export covers everything.
    for (const index of [0, 1, 0]) {
      const all = logLines(sidecar.all().stdout);
      process.kill(pidOf(all, index), "SIGKILL");
      await logged(
        sidecar,
        (l) => String(l["msg"]).startsWith(`process ${index} ended (SIGKILL)`),
        `of process ${index}'s end`,
        all.length,
      );
      await decide(3);
      await exportsCoverAll(`process ${index} killed`);
      // All of that before the replacement serves (it comes after a wait of 1 s or more): the survivor did it alone.
      expect(logLines(sidecar.all().stdout).slice(all.length).filter(bothServing)).toEqual([]);
      await logged(sidecar, bothServing, "saying both serve again", all.length);
      await decide(3);
      await exportsCoverAll(`process ${index} replaced`);
    }
    for (const id of decided) expect((await fresh(sidecar.url, "POST", "/evaluate", evaluateBody(id, "approved"))).status).toBe(422);

    sidecar.child.kill("SIGTERM");
    expect(await sidecar.closed).toEqual({ code: 0, signal: null });
    // Stopped, the data dir is free again: compacted, and a sidecar of one process opens it with every decision logged.
    await compactDataDir(dataDir);
    const single = await startBuiltSidecar({ ...env, SERVICE_PROCESSES: "1" });
    const inLog = await exportedDecisions(single.url, INSTANCE, "one process after two");
    expect(decided.filter((id) => !inLog!.has(id))).toEqual([]);
    single.child.kill("SIGTERM");
    await single.closed;
  });

  it("a sidecar of one process killed with records in memory, restarted as two: the process keeping the log takes them in", async () => {
    const dir = await mkdtemp(join(tmpdir(), "writ-processes-lmdb-restart-"));
    try {
      const env = await surfaceAEnv({
        SERVICE_DATA_DIR: dir,
        SERVICE_INSTANCE_ID: INSTANCE,
        SERVICE_LOG_LEVEL: "info",
        SERVICE_SIGNING_THREADS: "0",
        SERVICE_SIGNING_KEY: FLEET_SIGNING_KEY,
      });
      const one = await startBuiltSidecar(env);
      // Killed under load: the records decided since its last sequencing round (every 200 ms) are held in its memory.
      const decided: string[] = [];
      const client = new KeepAliveClient(one.url, API_KEY, 4);
      let n = 0;
      const workers = Array.from({ length: 4 }, async () => {
        for (;;) {
          const id = `processes-lmdb-restart-${n++}`;
          const answer = await client.request("POST", "/evaluate", evaluateBody(id, "approved")).catch(() => null);
          if (answer === null) return;
          expect(answer.status).toBe(200);
          decided.push(id);
        }
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      await one.kill();
      await Promise.all(workers);
      client.close();
      expect(decided.length).toBeGreaterThan(0);

      const two = await startBuiltSidecar({ ...env, SERVICE_PROCESSES: "2" }, 45_000, true);
      await logged(two, bothServing, "saying both serve");
      const adopted = await logged(two, (l) => /records the record log lacked/.test(String(l["msg"])), "of the records taken in");
      expect(adopted.find((l) => /records the record log lacked/.test(String(l["msg"])))).toMatchObject({ process: 0 });
      const inLog = await exportedDecisions(two.url, INSTANCE, "restarted as two processes");
      expect(decided.filter((id) => !inLog!.has(id))).toEqual([]);
      two.child.kill("SIGTERM");
      expect(await two.closed).toEqual({ code: 0, signal: null });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

const unavailable = await postgresUnavailable();

if (unavailable !== null) {
  describe.skip(`PostgreSQL: a sidecar of two processes: ${unavailable}`, () => {
    it("serves with both", () => undefined);
  });
} else {
  describe("PostgreSQL: a sidecar of two processes", () => {
    let database: TestDatabase;
    let env: Record<string, string>;
    beforeAll(async () => {
      database = await createTestDatabase();
      env = await fleetEnv(databaseUrlOf(database.pool), {
        SERVICE_PROCESSES: "2",
        SERVICE_INSTANCE_ID: INSTANCE,
        SERVICE_LOG_LEVEL: "info",
        SERVICE_SIGNING_THREADS: "0",
      });
    });
    afterAll(async () => {
      await killAllBuiltSidecars();
      await database.drop();
    });

    it("both serve with a log each, /metrics counts both, a reload and a replacement reach both, and they end with the first process", async () => {
      const sidecar = await startBuiltSidecar(env, 45_000, true);
      const lines = await logged(sidecar, bothServing, "saying both serve");
      // Process 1 starts once process 0 serves (it applied the migrations).
      const listening = lines.filter((l) => String(l["msg"]).startsWith("Surface A listening"));
      expect(listening.map((l) => l["process"])).toEqual([0, 1]);

      expect(await instanceIds(sidecar.url, 8)).toEqual(new Set([INSTANCE, `${INSTANCE}-p1`]));
      const decided = [];
      for (let i = 0; i < 6; i++) decided.push(await fresh(sidecar.url, "POST", "/evaluate", evaluateBody(`processes-${i}`, "approved")));
      expect(decided.map((d) => d.status)).toEqual([200, 200, 200, 200, 200, 200]);
      // A replay is refused whichever process consumed the execution.
      expect((await fresh(sidecar.url, "POST", "/evaluate", evaluateBody("processes-0", "approved"))).status).toBe(422);

      // Summed over both processes: a scrape from one would show about half.
      const metrics = (await fresh(sidecar.url, "GET", "/metrics")).text;
      const counted = [...metrics.matchAll(/^writ_decisions_total\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
      expect(counted).toBe(6);
      const healthChecks =
        /^writ_http_request_duration_seconds_count\{surface="a",method="GET",route="\/health",status="200"\} (\d+)$/m.exec(metrics);
      expect(Number(healthChecks?.[1])).toBe(8);

      // POST /admin/reload: the process that answers reloads, and the other too.
      const before = logLines(sidecar.all().stdout).length;
      expect((await fresh(sidecar.url, "POST", "/admin/reload")).status).toBe(200);
      const reloads = () =>
        new Set(
          logLines(sidecar.all().stdout)
            .slice(before)
            .filter((l) => /reloaded/.test(String(l["msg"])))
            .map((l) => l["process"]),
        );
      await logged(sidecar, () => reloads().size === 2, "of the second process's reload", before);
      expect(reloads()).toEqual(new Set([0, 1]));

      // Process 1 dies: another takes its place, with its log; one that ends soon after it began serving is replaced
      // after a wait that doubles.
      for (const wait of ["1 s", "2 s"]) {
        const all = logLines(sidecar.all().stdout);
        process.kill(pidOf(all, 1), "SIGKILL");
        const replaced = `process 1 ended (SIGKILL): starting another in its place in ${wait}`;
        await logged(sidecar, (l) => l["msg"] === replaced, `"${replaced}"`, all.length);
        await logged(sidecar, bothServing, "saying both serve again", all.length);
      }
      expect(await instanceIds(sidecar.url, 8)).toEqual(new Set([INSTANCE, `${INSTANCE}-p1`]));

      // The supervisor dies: its processes end with it, and the port is free for the next start.
      const now = logLines(sidecar.all().stdout);
      const processes = [pidOf(now, 0), pidOf(now, 1)];
      expect(processes.every(alive)).toBe(true);
      await sidecar.kill();
      const deadline = Date.now() + 10_000;
      while (processes.some(alive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(processes.filter(alive)).toEqual([]);
    });

    it("SIGTERM: every process finishes and the sidecar exits 0", async () => {
      const sidecar = await startBuiltSidecar({ ...env, SERVICE_INSTANCE_ID: `${INSTANCE}-stop` }, 45_000, true);
      await logged(sidecar, bothServing, "saying both serve");
      sidecar.child.kill("SIGTERM");
      expect(await sidecar.closed).toEqual({ code: 0, signal: null });
      const stopped = logLines(sidecar.all().stdout).filter((l) => l["msg"] === "stopped");
      expect(stopped.map((l) => l["process"] ?? "supervisor").sort()).toEqual([0, 1, "supervisor"]);
    });
  });
}
