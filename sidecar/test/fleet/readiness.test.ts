/**
 * Readiness covers the store: a sidecar on PostgreSQL answers `GET /health?probe=ready` 503 within 1 s of
 * the database going away (stopped, or a black hole), while `GET /health` (liveness) stays 200; the body says why
 * (`ready` false, `store.status` `error` with its problem, `bundles.ready` still true); and it is ready again once the
 * database returns, with no restart. Meanwhile nothing piles up: no statement waits for a pool connection (the probe's
 * own one-at-a-time invariant: storage/instance-session.test.ts). A private PostgreSQL server (test/support/private-postgres.ts): the machine's shared one
 * is never stopped. In process: every answer is checked against the OpenAPI document (support/sidecar.ts).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { privatePostgresUnavailable, startPrivatePostgres, type PrivatePostgres } from "../support/private-postgres.js";
import { startTestSidecar, type TestSidecar } from "../support/sidecar.js";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.js";
import { DEFAULT_DATABASE } from "../../src/storage/postgres/config.js";
import { CLIENT_TIMEOUT_MARGIN_MS } from "../../src/storage/postgres/connection/pool.js";
import { evaluateBody } from "../durability/load.js";
import { freePort } from "./support.js";

const unavailable = privatePostgresUnavailable();
/** Short database timeouts, as an operator who wants fast 503s would set them. */
const TIMEOUTS = { SERVICE_DATABASE_STATEMENT_TIMEOUT_MS: "1000", SERVICE_DATABASE_CONNECT_TIMEOUT_MS: "1000" };
const WITHIN_MS = 1_000;

interface Health {
  readonly ready: boolean;
  readonly store: { readonly status: string; readonly problem?: string; readonly since?: string };
  readonly bundles: { readonly ready: boolean };
}

async function probe(s: TestSidecar, ready: boolean): Promise<{ status: number; body: Health; ms: number }> {
  const started = Date.now();
  const { status, body } = await s.call("GET", ready ? "/health?probe=ready" : "/health");
  return { status, body: body as Health, ms: Date.now() - started };
}

/** Polls readiness every 20 ms until it answers `status`; the time from `from`. */
async function readinessBecomes(s: TestSidecar, status: number, from: number, ms: number): Promise<number> {
  for (;;) {
    if ((await probe(s, true)).status === status) return Date.now() - from;
    if (Date.now() - from > ms) throw new Error(`readiness did not answer ${status} within ${ms} ms`);
    await sleep(20);
  }
}

/** What every answer says while the database is gone: liveness 200, readiness 503, and why. */
async function expectNotReady(s: TestSidecar): Promise<void> {
  const live = await probe(s, false);
  expect(live.status).toBe(200);
  expect(live.ms).toBeLessThan(500);
  expect(live.body).toMatchObject({
    ready: false,
    bundles: { ready: true },
    store: { status: "error", problem: expect.any(String), since: expect.any(String) },
  });
  const ready = await probe(s, true);
  expect(ready.status).toBe(503);
  expect(ready.body).toMatchObject({ ready: false, bundles: { ready: true }, store: { status: "error", problem: expect.any(String) } });
}

if (unavailable !== null) {
  describe.skip(`readiness on PostgreSQL: ${unavailable}`, () => {
    it("is 503 within 1 s of the database going away", () => undefined);
  });
} else {
  describe("readiness on PostgreSQL (in process, private PostgreSQL)", () => {
    let server: PrivatePostgres;
    let proxy: TcpProxy;

    beforeAll(async () => {
      server = await startPrivatePostgres(await freePort());
      proxy = await startTcpProxy(server.port);
    });
    afterAll(async () => {
      await proxy?.close();
      await server?.remove();
    });

    it("the database stopped: readiness 503 within 1 s, liveness 200; ready again once it is back", async () => {
      const s = await startTestSidecar({ SERVICE_STORE: "postgres", SERVICE_DATABASE_URL: server.url, ...TIMEOUTS });
      try {
        const before = await probe(s, true);
        expect(before.status).toBe(200);
        expect(before.body).toMatchObject({ ready: true, store: { status: "ok" }, bundles: { ready: true } });

        const stopping = Date.now();
        const stopped = server.stop();
        const notReadyAfter = await readinessBecomes(s, 503, stopping, 5_000);
        await stopped;
        await expectNotReady(s);
        // Still not ready a while later, not a one-off.
        await sleep(700);
        await expectNotReady(s);

        await server.start();
        const started = Date.now();
        const readyAfter = await readinessBecomes(s, 200, started, 5_000);
        console.log(
          `stopped: readiness 503 ${notReadyAfter} ms after the stop began; started: 200 again ${readyAfter} ms after the server was up`,
        );
        expect(notReadyAfter).toBeLessThan(WITHIN_MS);
        expect((await probe(s, true)).body).toMatchObject({ ready: true, store: { status: "ok" } });
      } finally {
        await s.close();
      }
    });

    it("the database a black hole: readiness 503 within 1 s, liveness 200, no probe piles up; ready again once it answers", async () => {
      const s = await startTestSidecar({
        SERVICE_STORE: "postgres",
        SERVICE_DATABASE_URL: `postgresql://postgres@127.0.0.1:${proxy.port}/postgres`,
        ...TIMEOUTS,
      });
      try {
        expect((await probe(s, true)).status).toBe(200);
        // The pool's counts, as `/metrics` reads them (storage/postgres/engine.ts).
        const series = (name: string) => s.sidecar.context.storeSeries.find(([n]) => n === `writ_postgres_pool_${name}`)![2]()!;
        const pool = () => ({ total: series("connections"), idle: series("idle_connections"), waiting: series("waiting_clients") });

        proxy.blackHole();
        const lost = Date.now();
        const notReadyAfter = await readinessBecomes(s, 503, lost, 5_000);
        await expectNotReady(s);
        // 4 s more of black hole, with nothing but probes: the audit log's pool probe is one at a time too.
        let mostCheckedOut = 0;
        let mostWaiting = 0;
        while (Date.now() - lost < 4_000) {
          const now = pool();
          mostCheckedOut = Math.max(mostCheckedOut, now.total - now.idle);
          mostWaiting = Math.max(mostWaiting, now.waiting);
          await sleep(20);
        }
        await expectNotReady(s);

        proxy.heal();
        const healed = Date.now();
        const readyAfter = await readinessBecomes(s, 200, healed, 10_000);
        console.log(
          `black hole: readiness 503 ${notReadyAfter} ms after it began; at most ${mostCheckedOut} pool connections checked out and ${mostWaiting} waiting; healed: 200 again after ${readyAfter} ms`,
        );
        expect(notReadyAfter).toBeLessThan(WITHIN_MS);
        // The pool never ran out: the periodic statements (the audit log's probe, its record log's sequencing, its
        // counters) each wait for their own previous one, and readiness needs none of them.
        expect(mostCheckedOut).toBeLessThan(10);
        expect(mostWaiting).toBe(0);
      } finally {
        proxy.heal();
        await s.close();
      }
    });

    it("the database a black hole under load, default timeouts: every decision in flight or arriving answers 503 within the bound", async () => {
      const s = await startTestSidecar({
        SERVICE_STORE: "postgres",
        SERVICE_DATABASE_URL: `postgresql://postgres@127.0.0.1:${proxy.port}/postgres`,
      });
      try {
        expect((await s.call("POST", "/evaluate", evaluateBody(`warm-${Date.now()}`, "approved"))).status).toBe(200);
        proxy.blackHole();
        const lost = Date.now();
        // Decisions already waiting when the database went silent, and more arriving while it stays silent.
        const answers: Promise<{ status: number; ms: number }>[] = [];
        const decide = (i: number) => {
          const started = Date.now();
          return s
            .call("POST", "/evaluate", evaluateBody(`hole-${lost}-${i}`, "approved"))
            .then((r) => ({ status: r.status, ms: Date.now() - started }));
        };
        for (let wave = 0; wave < 4; wave++) {
          for (let i = 0; i < 10; i++) answers.push(decide(wave * 10 + i));
          await sleep(500);
        }
        const settled = await Promise.all(answers);
        const slowest = Math.max(...settled.map((a) => a.ms));
        console.log(
          `black hole under load: ${settled.length} decisions, all ${[...new Set(settled.map((a) => a.status))].join(", ")}; slowest ${slowest} ms`,
        );
        expect(settled.map((a) => a.status)).toEqual(settled.map(() => 503));
        // docs/fleet.md, "When the database fails": within the statement timeout plus the client's margin, even for the
        // decisions that waited behind statements already hanging (each would otherwise wait for those, then its own).
        expect(slowest).toBeLessThanOrEqual(DEFAULT_DATABASE.statementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS + 500);
      } finally {
        proxy.heal();
        await s.close();
      }
    });
  });
}
