/**
 * One sidecar of a fleet killed with SIGKILL under load, 20 times: every executionId answered 200, by
 * either sidecar, is afterwards refused as a replay by BOTH and has its audit record on both. The other sidecar keeps
 * serving throughout. After each restart, the two sidecars' tamper-evident record logs, exported from the
 * restarted one, verify end to end, and together hold every decision acknowledged so far. Needs `npm run build` (root
 * `npm test` builds first). Replay a run with WRIT_CRASH_SEED=<seed>.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../test/support/postgres.js";
import { KeepAliveClient, killAllBuiltSidecars } from "../support/built-sidecar.js";
import { API_KEY, REPLAY_BODY, auditPath, evaluateBody, mapLimit, parse, prng } from "../durability/load.js";
import { databaseUrlOf, exportedDecisions, startFleetSidecar, type FleetSidecar } from "./support.js";

const CYCLES = 20;
const WORKERS = 8;

const unavailable = await postgresUnavailable();

if (unavailable !== null) {
  describe.skip(`SIGKILL in a fleet: ${unavailable}`, () => {
    it("loses no acknowledged decision", () => undefined);
  });
} else {
  describe("SIGKILL of one sidecar of a fleet under load (built sidecars, one PostgreSQL database)", () => {
    let database: TestDatabase;
    let url: string;
    let stable: FleetSidecar;

    beforeAll(async () => {
      database = await createTestDatabase();
      url = databaseUrlOf(database.pool);
      stable = await startFleetSidecar(url, { SERVICE_INSTANCE_ID: "stable" });
    });
    afterAll(async () => {
      await killAllBuiltSidecars();
      await database?.drop();
    });

    it(`every acknowledged decision survives ${CYCLES} SIGKILLs, refused by both sidecars afterwards, audited on both`, async () => {
      const seed = Number(process.env["WRIT_CRASH_SEED"] ?? Date.now() % 1_000_000);
      const random = prng(seed);
      const stableClient = new KeepAliveClient(stable.a, API_KEY, WORKERS);
      const acknowledged: string[] = [];
      const restart = () => startFleetSidecar(url, { SERVICE_INSTANCE_ID: "victim" });
      /**
       * Both logs, exported from `from`: each verifies, and together they hold every decision acknowledged so far. A log
       * holds nothing until its sidecar sequenced a record (a victim killed before it answered any, on a busy machine):
       * its export is then 404 `audit log not found` (LOG_NOT_FOUND), and the decisions it would hold are missing from the union below.
       */
      const logsVerify = async (from: FleetSidecar, cycle: number): Promise<void> => {
        const logged = new Set<string>();
        for (const logId of ["stable", "victim"]) {
          for (const id of (await exportedDecisions(from.a, logId, `after kill ${cycle + 1}`)) ?? []) logged.add(id);
        }
        const missing = acknowledged.filter((id) => !logged.has(id));
        expect(missing.slice(0, 20), `after kill ${cycle + 1}: ${missing.length} acknowledged decisions in no log`).toEqual([]);
      };
      let victim = await restart();
      let n = 0;
      try {
        for (let cycle = 0; cycle < CYCLES; cycle++) {
          const victimClient = new KeepAliveClient(victim.a, API_KEY, WORKERS);
          let stopped = false;
          const workers = Array.from({ length: WORKERS }, async (_, w) => {
            const client = w % 2 === 0 ? victimClient : stableClient;
            while (!stopped) {
              const id = `kill-${seed}-${n++}`;
              // A request cut by the kill rejects: it was never answered, so it promises nothing.
              const answer = await client.request("POST", "/evaluate", evaluateBody(id, "approved")).catch(() => null);
              if (answer?.status === 200) acknowledged.push(id);
              else if (answer !== null && answer.status !== 503) throw new Error(`unexpected ${answer.status}: ${answer.text}`);
            }
          });
          await sleep(150 + Math.floor(random() * 250));
          await victim.process.kill();
          stopped = true;
          await Promise.all(workers);
          victimClient.close();
          victim = await restart();
          // The stable sidecar's own log is checkpointed by its export from the stable sidecar itself.
          await fetch(`${stable.a}/audit/export`, { headers: { authorization: `Bearer ${API_KEY}` } }).then((r) => r.text());
          await logsVerify(victim, cycle);
        }
        console.log(`fleet SIGKILL: seed ${seed}, ${acknowledged.length} acknowledged decisions over ${CYCLES} kills`);
        const victimClient = new KeepAliveClient(victim.a, API_KEY, 16);
        const checks = await mapLimit(acknowledged, 16, async (id) => {
          const problems: string[] = [];
          for (const [name, client] of [
            ["stable", stableClient],
            ["restarted", victimClient],
          ] as const) {
            const replay = await client.request("POST", "/evaluate", evaluateBody(id, "approved"));
            if (JSON.stringify(parse(replay.text)) !== JSON.stringify(REPLAY_BODY))
              problems.push(`${name} answered ${replay.status} to a replay`);
            if ((await client.request("GET", auditPath(id))).status !== 200) problems.push(`${name} has no audit record`);
          }
          return problems.length === 0 ? null : `${id}: ${problems.join(", ")}`;
        });
        victimClient.close();
        expect(checks.filter((c) => c !== null)).toEqual([]);
        expect(acknowledged.length).toBeGreaterThan(CYCLES);
      } finally {
        stableClient.close();
      }
    });
  });
}
