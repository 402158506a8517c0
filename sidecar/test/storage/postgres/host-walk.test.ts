/**
 * Connections to a URL of several hosts (storage/postgres/connection/host-walk.ts), the pool's and the sidecar's own:
 * the hosts are tried in order, one that is down, silent or of the wrong kind is skipped, the first that qualifies is
 * used; none qualifying fails the connection (counted once), naming each host and why. A private primary and a hot
 * standby of it (test/support/private-postgres.ts), a closed port and a black hole.
 */
import { createServer, type Server, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseConfig } from "../../../src/storage/postgres/config.js";
import { connector } from "../../../src/storage/postgres/connection/host-walk.js";
import { InstanceSession } from "../../../src/storage/postgres/connection/instance-session.js";
import { createPool, poolStats } from "../../../src/storage/postgres/connection/pool.js";
import { freePort } from "../../fleet/support.js";
import { privatePostgresUnavailable, startPrivatePostgres, startStandby, type PrivatePostgres } from "../../support/private-postgres.js";

const unavailable = privatePostgresUnavailable();
const CONNECT_TIMEOUT_MS = 1_000;

function config(url: string): DatabaseConfig {
  return {
    url,
    poolSize: 2,
    statementTimeoutMs: 2_000,
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
    lockTimeoutMs: 1_000,
    idleInTransactionTimeoutMs: 5_000,
  };
}

/** Which server a new pooled connection reached, and how long connecting took. */
async function reached(url: string): Promise<{ port: number; inRecovery: boolean; ms: number }> {
  const pool = createPool(config(url), () => undefined);
  try {
    const started = Date.now();
    const client = await pool.connect();
    const ms = Date.now() - started;
    try {
      const { rows } = await client.query<{ port: number; in_recovery: boolean }>(
        "SELECT inet_server_port() AS port, pg_is_in_recovery() AS in_recovery",
      );
      return { port: rows[0]!.port, inRecovery: rows[0]!.in_recovery, ms };
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
  }
}

describe("the clients of a URL", () => {
  it("of one host and no session attribute are node-postgres's own, built with the URL as written: no walk", () => {
    const url = "postgresql://writ:pw@db.internal:5432/writ?sslmode=verify-full";
    expect(connector(url, 1_000)).toEqual({ Client: pg.Client, connectionString: url, walkMs: 0 });
  });

  it("of several hosts, or asking for an attribute, walk: each host's connect timeout is added to the connection's", () => {
    const several = connector("postgresql://writ@db1,db2:5433,db3/writ?target_session_attrs=read-write", 1_000);
    expect(several.Client).not.toBe(pg.Client);
    expect(several.connectionString).toBe("postgresql://writ@db1/writ?target_session_attrs=read-write");
    expect(several.walkMs).toBe(3_000);
    expect(connector("postgresql://writ@db/writ?target_session_attrs=primary", 500).walkMs).toBe(500);
  });
});

describe.skipIf(unavailable !== null)("connecting to a URL of several hosts", () => {
  let primary: PrivatePostgres;
  let standby: PrivatePostgres;
  let closed: number;
  let blackHole: Server;
  const held = new Set<Socket>();
  const hosts = (...ports: number[]): string => ports.map((p) => `127.0.0.1:${p}`).join(",");

  beforeAll(async () => {
    primary = await startPrivatePostgres(await freePort());
    standby = await startStandby(primary, await freePort());
    closed = await freePort();
    // Accepts connections and never answers: a host whose packets are dropped after the handshake.
    blackHole = createServer((socket) => {
      held.add(socket);
      socket.on("error", () => undefined);
    });
    await new Promise<void>((resolve) => blackHole.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    for (const socket of held) socket.destroy();
    blackHole?.close();
    await standby?.remove();
    await primary?.remove();
  });
  const blackHolePort = (): number => (blackHole.address() as { port: number }).port;

  it("read-write: the standby listed first is skipped, the primary is used", async () => {
    const url = `postgresql://postgres@${hosts(standby.port, primary.port)}/postgres?target_session_attrs=read-write`;
    expect(await reached(url)).toMatchObject({ port: primary.port, inRecovery: false });
  });

  it("primary: the same, judged by pg_is_in_recovery()", async () => {
    const url = `postgresql://postgres@${hosts(standby.port, primary.port)}/postgres?target_session_attrs=primary`;
    expect(await reached(url)).toMatchObject({ port: primary.port, inRecovery: false });
  });

  it("any (the default): the first host up is used, a standby too", async () => {
    expect(await reached(`postgresql://postgres@${hosts(standby.port, primary.port)}/postgres`)).toMatchObject({
      port: standby.port,
      inRecovery: true,
    });
    expect(await reached(`postgresql://postgres@${hosts(closed, standby.port)}/postgres?target_session_attrs=any`)).toMatchObject({
      port: standby.port,
    });
  });

  it("a host that is down is skipped at once; one that never answers after the connect timeout", async () => {
    const down = await reached(`postgresql://postgres@${hosts(closed, primary.port)}/postgres?target_session_attrs=read-write`);
    expect(down).toMatchObject({ port: primary.port });
    expect(down.ms).toBeLessThan(CONNECT_TIMEOUT_MS);
    const silent = await reached(`postgresql://postgres@${hosts(blackHolePort(), primary.port)}/postgres?target_session_attrs=read-write`);
    expect(silent).toMatchObject({ port: primary.port });
    expect(silent.ms).toBeGreaterThanOrEqual(CONNECT_TIMEOUT_MS - 50);
    expect(silent.ms).toBeLessThan(3 * CONNECT_TIMEOUT_MS);
  });

  it("no host qualifying fails the connection, counted once, naming each host and why", async () => {
    const url = `postgresql://postgres@${hosts(closed, blackHolePort(), standby.port)}/postgres?target_session_attrs=read-write`;
    const pool = createPool(config(url), () => undefined);
    try {
      const started = Date.now();
      const error = (await pool.connect().then(
        () => null,
        (e: unknown) => e,
      )) as Error;
      expect(Date.now() - started).toBeLessThan(4 * CONNECT_TIMEOUT_MS);
      expect(error.message).toMatch(
        new RegExp(
          `^no host of the database URL accepts read-write sessions: 127\\.0\\.0\\.1:${closed} failed: .*ECONNREFUSED.*; ` +
            `127\\.0\\.0\\.1:${blackHolePort()} did not answer within ${CONNECT_TIMEOUT_MS} ms; 127\\.0\\.0\\.1:${standby.port} is read-only$`,
        ),
      );
      expect(poolStats(pool).errors).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it("the sidecar's own connection walks the hosts too: it opens on the primary and holds its lock there", async () => {
    const url = `postgresql://postgres@${hosts(closed, standby.port, primary.port)}/postgres?target_session_attrs=read-write`;
    const session = await InstanceSession.open({ database: config(url), instance: { id: "walk-test", source: "test" } });
    const admin = new pg.Client({ connectionString: primary.url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted");
      expect(rows[0]!.n).toBe(1);
      session.probe();
      await sleep(300);
      expect(session.health()).toMatchObject({ ok: true });
    } finally {
      await admin.end();
      await session.close();
    }
  });
});
