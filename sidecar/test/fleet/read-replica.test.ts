/**
 * Read replicas (SERVICE_DATABASE_READ_URL; docs/fleet.md, "Read replicas") on a private primary and its hot standby
 * (test/support/private-postgres.ts). The standby is made visibly different from the primary by pausing its replay: a
 * decision made then is on the primary only. The listing and the export do not have it (they read the standby); the
 * by-id read, the stats and the log's state do (they read the primary). With the standby stopped, the listing and the
 * export answer 503 `audit store unavailable` (the log names the read database) while deciding, the by-id read and
 * readiness go on. In process: every answer read with `call` is checked against the OpenAPI document (support/sidecar.ts).
 */
import { createPublicKey, randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExportVerifier, StoreUnavailableError, createTrustRoot, decisionAttestationSigned, loadPublicKeyPem } from "@writ/runtime";
import { PostgresAuditLog } from "../../src/storage/postgres/audit-log.js";
import {
  privatePostgresUnavailable,
  startPrivatePostgres,
  startStandby,
  type PrivatePostgres,
  type PrivateStandby,
} from "../support/private-postgres.js";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import { API_KEY, startTestSidecar, type TestSidecar } from "../support/sidecar.js";
import { freePort } from "./support.js";

const unavailable = privatePostgresUnavailable();
const TIMEOUTS = { SERVICE_DATABASE_STATEMENT_TIMEOUT_MS: "2000", SERVICE_DATABASE_CONNECT_TIMEOUT_MS: "1000" };

async function until<T>(what: string, probe: () => Promise<T | null>, ms = 15_000): Promise<T> {
  for (const deadline = Date.now() + ms; ;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

async function decide(s: TestSidecar): Promise<string> {
  const executionId = randomUUID();
  const answer = await s.call("POST", "/evaluate", {
    executionId,
    policyId: "conformance.transfer",
    policyVersion: "1.0.0",
    verifiedSignals: TRANSFER_SIGNALS.approved,
  });
  expect(answer.status).toBe(200);
  return executionId;
}

async function listed(s: TestSidecar): Promise<string[]> {
  const answer = await s.call("GET", "/audit/decisions?limit=100");
  expect(answer.status).toBe(200);
  return (answer.body as { executionId: string }[]).map((row) => row.executionId);
}

async function exported(s: TestSidecar): Promise<{ status: number; type: string | null; lines: Record<string, unknown>[] }> {
  const response = await fetch(`${s.url}/audit/export`, { headers: { authorization: `Bearer ${API_KEY}` } });
  const text = await response.text();
  const lines =
    response.status === 200
      ? text
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as Record<string, unknown>)
      : [];
  return { status: response.status, type: response.headers.get("content-type"), lines };
}

/** The execution ids of the decision records an export carries. */
function exportedDecisions(lines: readonly Record<string, unknown>[]): string[] {
  return lines
    .filter((l) => l["kind"] === "decision" && typeof l["record"] === "string")
    .map((l) => (JSON.parse(l["record"] as string) as { executionId: string }).executionId);
}

if (unavailable !== null) {
  describe.skip(`read replicas: ${unavailable}`, () => {
    it("listings and exports read the standby", () => undefined);
  });
} else {
  describe("read replicas (private primary and hot standby)", () => {
    let primary: PrivatePostgres;
    let standby: PrivateStandby;
    /** A superuser session on the standby, to pause and resume its replay. */
    let onStandby: pg.Client;

    beforeAll(async () => {
      primary = await startPrivatePostgres(await freePort());
      standby = await startStandby(primary, await freePort());
      onStandby = new pg.Client({ connectionString: standby.url });
      // Cut when the standby stops (the last test): nothing more is asked of it.
      onStandby.on("error", () => undefined);
      await onStandby.connect();
    }, 120_000);
    afterAll(async () => {
      await onStandby?.end().catch(() => undefined);
      await standby?.remove();
      await primary?.remove();
    });

    it("the listing and the export read the standby; the by-id read, the stats and the log's state the primary", async () => {
      const s = await startTestSidecar({
        SERVICE_STORE: "postgres",
        SERVICE_DATABASE_URL: primary.url,
        SERVICE_DATABASE_READ_URL: standby.url,
        SERVICE_AUDIT_CHECKPOINT_INTERVAL_MS: "200",
        ...TIMEOUTS,
      });
      try {
        const key = loadPublicKeyPem(
          createPublicKey(await readFile(join(s.dataDir, "signing.key"), "utf8"))
            .export({ type: "spki", format: "pem" })
            .toString(),
        );
        const first = await decide(s);
        await until("the first decision listed from the standby", async () => ((await listed(s)).includes(first) ? true : null));
        await until("the first decision's checkpoint replayed", async () => {
          const { lines } = await exported(s);
          return exportedDecisions(lines).includes(first) ? true : null;
        });

        await onStandby.query("SELECT pg_wal_replay_pause()");
        await until("the standby's replay paused", async () =>
          (await onStandby.query<{ state: string }>("SELECT pg_get_wal_replay_pause_state() AS state")).rows[0]!.state === "paused"
            ? true
            : null,
        );
        const second = await decide(s);

        // Read from the standby: without the decision made since its replay paused.
        const list = await listed(s);
        expect(list).toContain(first);
        expect(list).not.toContain(second);
        // Read from the primary: fresh.
        expect(await s.call("GET", `/audit/decisions/${second}`)).toMatchObject({ status: 200, body: { executionId: second } });
        expect((await s.call("GET", "/audit/stats")).body).toMatchObject({ total_decisions: "2" });
        const export_ = await exported(s);
        expect(export_.status).toBe(200);
        expect(exportedDecisions(export_.lines)).toEqual([first]);
        // The export is the standby's, whole: it verifies, and ends at a checkpoint older than the primary's latest.
        const verifier = new ExportVerifier([key], decisionAttestationSigned(createTrustRoot("check", [key])));
        for (const line of export_.lines) verifier.add(line);
        const report = verifier.finish();
        expect(report.failures).toEqual([]);
        expect(report.valid).toBe(true);
        const onPrimary = (await s.call("GET", "/audit/log")).body as { size: number; latest: { size: number } };
        expect(onPrimary.latest.size).toBe(2);
        expect(report.latest?.size).toBe(1);
        // A checkpoint the primary has and the standby has not replayed: looked up where the export reads, a 404.
        expect(await s.call("GET", "/audit/export?from=2")).toMatchObject({ status: 404, body: { error: "checkpoint not found" } });

        await onStandby.query("SELECT pg_wal_replay_resume()");
        await until("the second decision listed once the standby replays again", async () =>
          (await listed(s)).includes(second) ? true : null,
        );
        expect(exportedDecisions((await exported(s)).lines)).toEqual([first, second]);
        const tail = await s.call("GET", "/audit/export?from=2");
        expect(tail.status).toBe(200);
      } finally {
        await onStandby.query("SELECT pg_wal_replay_resume()").catch(() => undefined);
        await s.close();
      }
    }, 120_000);

    it("the standby down: the listing and the export answer 503; deciding, the by-id read and readiness go on", async () => {
      const s = await startTestSidecar({
        SERVICE_STORE: "postgres",
        SERVICE_DATABASE_URL: primary.url,
        SERVICE_DATABASE_READ_URL: standby.url,
        ...TIMEOUTS,
      });
      try {
        const before = await decide(s);
        await until("the decision listed from the standby", async () => ((await listed(s)).includes(before) ? true : null));
        await standby.stop();
        try {
          expect(await s.call("GET", "/audit/decisions")).toMatchObject({ status: 503, body: { error: "audit store unavailable" } });
          expect(await s.call("GET", "/audit/security")).toMatchObject({ status: 503, body: { error: "audit store unavailable" } });
          // Refused before any line: a JSON 503, never a 200 whose stream is cut, nor an error sent as NDJSON.
          expect(await exported(s)).toMatchObject({ status: 503, type: expect.stringMatching(/^application\/json/) });
          expect(await s.call("GET", "/audit/export")).toMatchObject({ status: 503, body: { error: "audit store unavailable" } });
          const after = await decide(s);
          expect((await s.call("GET", `/audit/decisions/${after}`)).status).toBe(200);
          expect((await s.call("GET", "/audit/stats")).status).toBe(200);
          const health = await s.call("GET", "/health?probe=ready");
          expect(health).toMatchObject({ status: 200, body: { ready: true, audit_db: true, store: { status: "ok" } } });
          const metrics = await (await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${API_KEY}` } })).text();
          expect(Number(/^writ_postgres_read_pool_errors_total (\S+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(2);
          expect(Number(/^writ_postgres_pool_errors_total (\S+)$/m.exec(metrics)?.[1])).toBe(0);
        } finally {
          await standby.start();
        }
        await until("the listing back once the standby is", async () => {
          const r = await fetch(`${s.url}/audit/decisions`, { headers: { authorization: `Bearer ${API_KEY}` } });
          return r.status === 200 ? true : null;
        });
      } finally {
        await s.close();
      }
    }, 120_000);

    it("a failed read of the read database names it, and leaves the audit log's health (the primary's) as it is", async () => {
      const pool = new pg.Pool({ connectionString: primary.url });
      const nowhere = new pg.Pool({ connectionString: `postgresql://postgres@127.0.0.1:${await freePort()}/postgres` });
      const errors: unknown[] = [];
      const log = new PostgresAuditLog(pool, { readPool: nowhere, onError: (e) => errors.push(e) });
      try {
        const failed = log.listDecisions({ limit: 10, offset: 0 });
        await expect(failed).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(failed).rejects.toThrow(
          /^listing decisions on the read database \(SERVICE_DATABASE_READ_URL\) failed: .*ECONNREFUSED/,
        );
        await expect(log.listSecurityEvents({ limit: 10 })).rejects.toThrow(/on the read database/);
        expect(log.healthy()).toBe(true);
        expect(errors).toEqual([]);
        // The by-id read is the primary's.
        await expect(log.getDecision("never-decided")).resolves.toBeNull();
      } finally {
        await log.close();
        await pool.end();
        await nowhere.end();
      }
    });
  });
}
