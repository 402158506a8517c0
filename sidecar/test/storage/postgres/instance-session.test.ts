/**
 * The sidecar's own connection to PostgreSQL (storage/postgres/connection/instance-session.ts), through a TCP proxy
 * that can turn the database into a black hole: its probe fails the store within PROBE_DEADLINE_MS of an unanswered
 * `SELECT 1`, one probe at a time however often it is asked for (a black hole holds one socket, never a pile of them),
 * and the store is ok again at the first answer once the network heals, with the instance lock taken again. A store
 * already failing keeps naming its cause while a slow probe is under way; a probe that then answers late names that.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../../test/support/postgres.js";
import type { StoreHealth } from "../../../src/storage/backend.js";
import { InstanceInUseError } from "../../../src/storage/instance-in-use.js";
import { InstanceSession, PROBE_DEADLINE_MS, instanceLockKey } from "../../../src/storage/postgres/connection/instance-session.js";
import { databaseUrlOf } from "../../fleet/support.js";
import { startTcpProxy, type TcpProxy } from "../../support/tcp-proxy.js";

const unavailable = await postgresUnavailable();

/** Short timeouts: a black-holed probe is abandoned after 1 s + 1 s, a connection attempt after 1 s. */
const TIMEOUTS = {
  poolSize: 2,
  statementTimeoutMs: 1_000,
  connectTimeoutMs: 1_000,
  lockTimeoutMs: 1_000,
  idleInTransactionTimeoutMs: 10_000,
};

async function until(what: string, ms: number, check: () => boolean): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(5);
  }
  return Date.now() - started;
}

async function lockHeld(database: TestDatabase, id: string): Promise<boolean> {
  const { rows } = await database.pool.query<{ n: string }>(
    "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = $1::bigint",
    [instanceLockKey(id)],
  );
  return Number(rows[0]!.n) === 1;
}

if (unavailable !== null) {
  describe.skip(`the sidecar's own database connection: ${unavailable}`, () => {
    it("probes one at a time, and fails the store within the deadline", () => undefined);
  });
} else {
  describe("the sidecar's own database connection (through a TCP proxy)", () => {
    let database: TestDatabase;
    let proxy: TcpProxy;
    let url: string;

    beforeAll(async () => {
      database = await createTestDatabase();
      const direct = new URL(databaseUrlOf(database.pool));
      proxy = await startTcpProxy(Number(direct.port || 5432), direct.hostname);
      direct.port = String(proxy.port);
      url = direct.toString();
    });
    afterAll(async () => {
      await proxy?.close();
      await database?.drop();
    });

    it("a black hole fails the store within the deadline, holds one probe however often asked, and heals with the lock taken again", async () => {
      const changes: StoreHealth[] = [];
      const session = await InstanceSession.open({
        database: { url, ...TIMEOUTS },
        instance: { id: "probed", source: "SERVICE_INSTANCE_ID" },
        onHealth: (health) => changes.push(health),
      });
      try {
        session.probe();
        await until("a first probe answers", 2_000, () => session.health().ok && proxy.openConnections() === 1);
        expect(await lockHeld(database, "probed")).toBe(true);

        const before = proxy.acceptedConnections();
        proxy.blackHole();
        const blackHoled = Date.now();
        // Asked for 20 times a second, as a stalled timer catching up might.
        const asking = setInterval(() => session.probe(), 50);
        try {
          const failedAfter = await until("the store fails", 2_000, () => !session.health().ok);
          console.log(`black hole: store failed after ${failedAfter} ms`);
          expect(failedAfter).toBeLessThan(PROBE_DEADLINE_MS + 200);
          expect(session.health()).toMatchObject({
            ok: false,
            problem: `probing the database failed: no answer within ${PROBE_DEADLINE_MS} ms`,
          });
          await sleep(3_000 - (Date.now() - blackHoled));
        } finally {
          clearInterval(asking);
        }
        // In 3 s: the held probe abandoned after 2 s, then one connection attempt at a time (1 s each): at most 2 new
        // connections, where a probe per call would have opened one every 50 ms.
        const opened = proxy.acceptedConnections() - before;
        console.log(`black hole: ${opened} connections opened in 3 s of probes asked for every 50 ms`);
        expect(opened).toBeLessThanOrEqual(2);

        proxy.heal();
        const healed = Date.now();
        await until("the store is ok again", 5_000, () => {
          session.probe();
          return session.health().ok;
        });
        console.log(`healed: store ok after ${Date.now() - healed} ms`);
        expect(await lockHeld(database, "probed")).toBe(true);
        expect(changes.map((c) => c.ok)).toEqual([false, true]);
      } finally {
        await session.close();
      }
      expect(await lockHeld(database, "probed")).toBe(false);
    });

    it("a failing store keeps its cause while a slow probe is under way, and a late answer is then the cause", async () => {
      const session = await InstanceSession.open({ database: { url, ...TIMEOUTS }, instance: null });
      try {
        session.probe();
        await until("a first probe answers", 2_000, () => session.health().ok);
        // Refused: the store fails with the connection's own error, at once.
        proxy.cut();
        await until("the store fails", 2_000, () => {
          session.probe();
          return !session.health().ok;
        });
        const cause = session.health();
        expect(cause.problem).not.toMatch(/no answer within/);
        // Then a black hole: the next probe's connection hangs for the connect timeout (1 s), past the deadline.
        proxy.blackHole();
        const problems = new Set<string>();
        const started = Date.now();
        while (Date.now() - started < TIMEOUTS.connectTimeoutMs + 1_000) {
          session.probe();
          problems.add(session.health().problem ?? "ok");
          await sleep(10);
        }
        console.log(`slow probe while failing: problems seen ${JSON.stringify([...problems])}`);
        expect([...problems].filter((p) => p === "ok" || p.includes("no answer within"))).toEqual([]);
        // The hung probe settled with a cause of its own; the failure's start is the first failure's.
        expect(problems.size).toBeGreaterThan(1);
        expect(session.health().since).toBe(cause.since);
        // Then a slow server: the probe that connects anew answers late (five statements, each answer held 120 ms), and
        // that is the cause until one answers within the deadline (`SELECT 1` alone).
        proxy.slow(120);
        const sequence: string[] = [];
        await until("the store is ok again", 5_000, () => {
          session.probe();
          const problem = session.health().problem ?? "ok";
          if (sequence.at(-1) !== problem) sequence.push(problem);
          return session.health().ok;
        });
        console.log(`slow server while failing: problems in turn ${JSON.stringify(sequence)}`);
        expect(sequence.at(-2)).toBe(`probing the database failed: no answer within ${PROBE_DEADLINE_MS} ms`);
      } finally {
        await session.close();
        proxy.heal();
      }
    });

    it("a session that finds its lock taken again by another (after losing its own) fails the store, naming SERVICE_INSTANCE_ID, until it gets the lock back", async () => {
      const first = await InstanceSession.open({
        database: { url, ...TIMEOUTS },
        instance: { id: "contested", source: "SERVICE_INSTANCE_ID" },
      });
      try {
        // The connection cut (and refused meanwhile): the lock ends with it; another sidecar's session takes it.
        proxy.cut();
        for (let waited = 0; await lockHeld(database, "contested"); waited += 10) {
          if (waited > 3_000) throw new Error("the cut session's lock was not released within 3 s");
          await sleep(10);
        }
        const intruder = await InstanceSession.open({
          database: { url: databaseUrlOf(database.pool), ...TIMEOUTS },
          instance: { id: "contested", source: "SERVICE_INSTANCE_ID" },
        });
        proxy.heal();
        try {
          await until("the first session finds the lock taken", 3_000, () => {
            first.probe();
            return first.health().problem?.startsWith("the audit record log") === true;
          });
          expect(first.health().problem).toMatch(
            /^the audit record log `contested` is in use by another live sidecar \(another database session holds its lock\): .*give each sidecar its own SERVICE_INSTANCE_ID/,
          );
          await expect(
            InstanceSession.open({ database: { url, ...TIMEOUTS }, instance: { id: "contested", source: "SERVICE_INSTANCE_ID" } }),
          ).rejects.toBeInstanceOf(InstanceInUseError);
        } finally {
          await intruder.close();
        }
        await until("the first session gets the lock back", 3_000, () => {
          first.probe();
          return first.health().ok;
        });
        expect(await lockHeld(database, "contested")).toBe(true);
      } finally {
        await first.close();
      }
    });
  });
}
