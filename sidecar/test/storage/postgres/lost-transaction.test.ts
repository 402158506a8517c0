/**
 * A pooled connection lost in the middle of a transaction: its client sends nothing more (as when a proxy drops its
 * packets), and its server session stays `idle in transaction` with the record log's state row locked and changed, as a
 * checkpoint leaves it between its UPDATE and its COMMIT. The pool's idle-in-transaction limit
 * (storage/postgres/connection/pool.ts) makes the server end that session within the limit, whether or not the client
 * hears of it; what waited on the row then goes on by itself, with no restart. Meanwhile a sidecar taking the log over
 * as stale skips it at once (`FOR UPDATE SKIP LOCKED`, record-log-storage.ts) instead of waiting on it.
 *
 * Without the limit the session would hold the row until the server's TCP keepalive found the client gone (hours): each
 * test below then fails at its deadline.
 */
import { generateKeyPairSync } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { loadSigningKeyPem, type SigningKey } from "@writ/runtime";
import type pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { signerOf } from "../../audit/record-log-contract.js";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../../test/support/postgres.js";
import { Checkpointer } from "../../../src/audit/record-log/checkpointer.js";
import type { DatabaseConfig } from "../../../src/storage/postgres/config.js";
import { migrate } from "../../../src/storage/postgres/migrations.js";
import { createPool } from "../../../src/storage/postgres/connection/pool.js";
import { PostgresLogStorage } from "../../../src/storage/postgres/record-log-storage.js";
import { databaseUrlOf } from "../../fleet/support.js";

const unavailable = await postgresUnavailable();

/** The idle-in-transaction limit of these tests' pools. */
const IDLE_LIMIT_MS = 1_000;
/** What waited on the lost session's lock is done within this (the limit, and room for a busy machine). */
const DEADLINE_MS = IDLE_LIMIT_MS + 2_000;
/** A lock timeout far past the deadline: a wait on the lost session's lock shows as a missed deadline. */
const LONG_LOCK_TIMEOUT_MS = 8_000;
const KEY: SigningKey = loadSigningKeyPem(generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString());
const LOG_TABLES = [
  "writ_audit_log_pending",
  "writ_audit_log_entries",
  "writ_audit_log_nodes",
  "writ_audit_log_checkpoints",
  "writ_audit_log_state",
];

/** A transaction whose client sends nothing more, holding a log's state row. */
interface LostTransaction {
  /** Its server process. */
  readonly pid: number;
  /** The error the server's ending of the session gave its client. */
  readonly ended: Promise<Error>;
  /** Gives its client back to the pool, destroyed. */
  release(): void;
}

/** Resolves once `check` holds, or rejects naming `what` once `ms` have passed. */
async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

/** `promise`, or a rejection naming `what` once `ms` have passed. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

if (unavailable !== null) {
  describe.skip(`a pooled connection lost in a transaction: ${unavailable}`, () => {
    it("is ended by the server within the idle-in-transaction limit", () => undefined);
  });
} else {
  describe("a pooled connection lost in the middle of a transaction", () => {
    let database: TestDatabase;
    let refs = 0;
    const pools: pg.Pool[] = [];
    const lost: LostTransaction[] = [];

    beforeAll(async () => {
      database = await createTestDatabase();
      await migrate(database.pool);
    });
    afterEach(async () => {
      for (const transaction of lost.splice(0)) transaction.release();
      for (const pool of pools.splice(0)) await pool.end();
      await database.pool.query(`TRUNCATE ${LOG_TABLES.join(", ")}`);
    });
    afterAll(async () => {
      await database?.drop();
    });

    /** A sidecar's pool with the idle limit of these tests. */
    function sidecarPool(lockTimeoutMs: number): pg.Pool {
      const config: DatabaseConfig = {
        url: databaseUrlOf(database.pool),
        poolSize: 4,
        statementTimeoutMs: 10_000,
        connectTimeoutMs: 5_000,
        lockTimeoutMs,
        idleInTransactionTimeoutMs: IDLE_LIMIT_MS,
      };
      const pool = createPool(config, () => undefined);
      pools.push(pool);
      return pool;
    }

    /** `count` records pending in log `logId` since `pendedAt`. */
    async function pend(logId: string, count: number, pendedAt = Date.now()): Promise<void> {
      const keys = Array.from({ length: count }, () => `ref-${++refs}`);
      await database.pool.query(
        `INSERT INTO writ_audit_log_pending (log_id, kind, ref, leaf, pended_at)
         SELECT $1, 'verification', r, sha256(convert_to(r, 'UTF8')), $3 FROM unnest($2::text[]) AS r`,
        [logId, keys, pendedAt],
      );
    }

    /**
     * Takes `logId`'s state row on a client of `pool` and changes it in a transaction, as a checkpoint does before its
     * COMMIT (`changed`), or only locks it; then the client sends nothing more: its connection is as good as lost.
     */
    async function loseInTransaction(pool: pg.Pool, logId: string, changed = true): Promise<LostTransaction> {
      const client = await pool.connect();
      const ended = new Promise<Error>((resolve) => client.on("error", resolve));
      const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      await client.query("BEGIN");
      await client.query("SELECT size FROM writ_audit_log_state WHERE log_id = $1 FOR UPDATE", [logId]);
      if (changed) await client.query("UPDATE writ_audit_log_state SET latest_size = latest_size WHERE log_id = $1", [logId]);
      const transaction = { pid: rows[0]!.pid, ended, release: () => client.release(true) };
      lost.push(transaction);
      return transaction;
    }

    async function backendAlive(pid: number): Promise<boolean> {
      const { rows } = await database.pool.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE pid = $1", [pid]);
      return rows[0]!.n !== "0";
    }

    it("the server ends the lost session within the idle limit, and the sequencing that waited on its lock goes on by itself", async () => {
      const pool = sidecarPool(LONG_LOCK_TIMEOUT_MS);
      const storage = new PostgresLogStorage(pool, "sidecar-a");
      await pend("sidecar-a", 1);
      expect(await storage.sequence("sidecar-a", 256)).toBe(1);
      await pend("sidecar-a", 3);
      const session = await loseInTransaction(pool, "sidecar-a");

      const started = Date.now();
      let settled = false;
      const sequencing = storage.sequence("sidecar-a", 256).finally(() => (settled = true));
      await sleep(IDLE_LIMIT_MS / 2);
      // It waits on the lost session's lock.
      expect(settled).toBe(false);
      expect(await backendAlive(session.pid)).toBe(true);

      expect(await within(DEADLINE_MS, "the log sequenced again", sequencing)).toBe(3);
      console.log(`lost transaction: sequencing went on ${Date.now() - started} ms after it began waiting`);
      expect(await within(DEADLINE_MS, "the lost session's client told", session.ended)).toMatchObject({ code: "25P03" });
      await until("the lost session's server process gone", DEADLINE_MS, async () => !(await backendAlive(session.pid)));
      expect(await storage.counts("sidecar-a")).toMatchObject({ size: 4, pending: 0 });
    });

    it("with the lock timeout below the idle limit (as by default), the checkpointer's rounds fail on the lock until the server ends the session, then sequence and checkpoint the log by themselves", async () => {
      const pool = sidecarPool(300);
      const storage = new PostgresLogStorage(pool, "sidecar-a");
      await pend("sidecar-a", 1);
      expect(await storage.sequence("sidecar-a", 256)).toBe(1);
      await pend("sidecar-a", 3);
      const session = await loseInTransaction(pool, "sidecar-a");

      const errors: unknown[] = [];
      const checkpointer = new Checkpointer(
        storage,
        { signer: signerOf(KEY), intervalMs: 100, everyRecords: 1 },
        { onError: (error) => errors.push(error) },
      );
      try {
        const started = Date.now();
        await until("the log sequenced and checkpointed by the checkpointer's own rounds", DEADLINE_MS, async () => {
          const counts = await storage.counts("sidecar-a");
          return counts?.pending === 0 && counts.latest?.size === 4;
        });
        console.log(
          `lost transaction: the checkpointer's rounds went on after ${Date.now() - started} ms, ${errors.length} of them failed on the lock meanwhile`,
        );
      } finally {
        await checkpointer.stop();
      }
      expect(await within(DEADLINE_MS, "the lost session's client told", session.ended)).toMatchObject({ code: "25P03" });
      expect(errors.length).toBeGreaterThan(0);
      for (const error of errors) expect((error as Error & { cause?: { code?: string } }).cause?.code).toBe("55P03");
    });

    it.each([
      ["locked and changed (a checkpoint before its COMMIT)", true],
      ["only locked", false],
    ])(
      "a sidecar taking over the stale log skips it at once while the lost session holds its row %s, and takes it over once the server ended that session",
      async (_name, changed) => {
        const pool = sidecarPool(LONG_LOCK_TIMEOUT_MS);
        const gone = new PostgresLogStorage(pool, "sidecar-gone");
        const live = new PostgresLogStorage(pool, "sidecar-live");
        await pend("sidecar-gone", 1, 0);
        expect(await gone.sequence("sidecar-gone", 256)).toBe(1);
        await pend("sidecar-gone", 2, 0);
        expect(await live.stale(Date.now())).toEqual(["sidecar-gone"]);
        const session = await loseInTransaction(pool, "sidecar-gone", changed);

        const started = Date.now();
        expect(await live.sequence("sidecar-gone", 256)).toBe(0);
        expect(await live.checkpoint("sidecar-gone", signerOf(KEY), new Date())).toBeNull();
        // Well under the lock timeout: nothing waited on the lost session's lock.
        expect(Date.now() - started).toBeLessThan(1_000);
        expect(await live.counts("sidecar-gone")).toMatchObject({ size: 1, pending: 2 });

        // A later round takes it over: the server ended the session, and its locks went with it.
        await until("the stale log taken over", DEADLINE_MS, async () => (await live.sequence("sidecar-gone", 256)) === 2);
        expect(await live.checkpoint("sidecar-gone", signerOf(KEY), new Date())).toMatchObject({ logId: "sidecar-gone", size: 3 });
        expect(await within(DEADLINE_MS, "the lost session's client told", session.ended)).toMatchObject({ code: "25P03" });
      },
    );
  });
}
