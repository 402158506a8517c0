/**
 * A BUILT sidecar of two processes on PostgreSQL (SERVICE_PROCESSES=2; docs/sidecar.md, "Several processes"): both
 * serve behind the one port, each with a log of its own; `/metrics` answers for both; a reload reaches both; a
 * process that dies is replaced; the processes end with their supervisor; SIGTERM stops them all. LMDB refuses it.
 * Needs the build (`npm run test:e2e` builds first).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../test/support/postgres.js";
import { killAllBuiltSidecars, logLines, startBuiltSidecar } from "../support/built-sidecar.js";
import { evaluateBody, surfaceAEnv } from "../durability/load.js";
import { alive, bothServing, fresh, instanceIds, logged, pidOf } from "./processes-support.js";
import { databaseUrlOf, fleetEnv, refused } from "./support.js";

const INSTANCE = "processes-test";

afterAll(async () => {
  await killAllBuiltSidecars();
});

describe("LMDB", () => {
  it("refuses SERVICE_PROCESSES above 1 with one line saying why and what to set (exit 2)", async () => {
    const { exit, line } = await refused(await surfaceAEnv({ SERVICE_PROCESSES: "2" }));
    expect(exit).toMatch(/code 2/);
    expect(line).toMatchObject({ code: "CONFIG_INVALID" });
    expect(line["msg"]).toBe(
      'SERVICE_PROCESSES is 2, but an LMDB data dir has one audit record log, kept by one process (docs/audit.md, "One live sidecar per log"): set SERVICE_STORE=postgres for several processes',
    );
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
