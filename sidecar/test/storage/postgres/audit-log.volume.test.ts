/**
 * The PostgreSQL audit trail and record log cost what they touch, not what the database holds (docs/audit.md, "Storage
 * (PostgreSQL)"): on a trail of 200,000 decisions and 100,000 other records, all logged, every statement that a request
 * or a periodic job runs is explained as it runs (explained-pool.ts) and must read its tables through an index, never
 * a large table whole, and read at most a few thousand rows.
 *
 * Exempt, and why: the tables that stay small whatever the history, `writ_audit_log_state` (a row per log),
 * `writ_audit_log_pending` (what is not sequenced yet: emptied every 200 ms), `writ_audit_log_outside` (candidates:
 * empty while every sidecar runs with the log on), `writ_audit_log_days` (a row per log and day) and
 * `writ_audit_counters` (a row per counter); and the fallback of `/audit/stats` with the record log off, which counts
 * the records table (docs/audit.md).
 */
import { ExportVerifier, executionFingerprint, type ExportLine } from "@writ/runtime";
import { PostgresReplayStore } from "../../../src/storage/postgres/replay-store.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RecordLog } from "../../../src/audit/record-log/record-log.js";
import { AuditTrail } from "../../../src/audit/audit-trail.js";
import { PostgresAuditLog } from "../../../src/storage/postgres/audit-log.js";
import { migrate } from "../../../src/storage/postgres/migrations.js";
import { PostgresLogStorage } from "../../../src/storage/postgres/record-log-storage.js";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../../test/support/postgres.js";
import { explainedPool, type ExplainedStatement } from "./explained-pool.js";
import { POLICIES, seedDecisions, seedSecurityEvents, seedVerifications, sequenceAll } from "./volume.js";
import { LOG_KEY, LOG_SIGNER, MANUAL_CHECKPOINTS } from "../../audit/record-log-contract.js";
import { at, decision } from "../../audit/support.js";

const unavailable = await postgresUnavailable();

const LOG = "vol-a";
const DECISIONS = 200_000;
const OTHERS = 50_000;
/** One decision a second: the trail spans 2.3 days. */
const STEP_MS = 1_000;
/** A table of this many rows or more is large: the planner would scan a smaller one whole, rightly. */
const LARGE = 1_000;
/** The most rows one statement may read from one large table: a page, a chunk, their probes. */
const MOST_ROWS = 5_000;
/**
 * The most buffers a scan may touch per row it reads and per loop (an index descent and a heap page each): more is an
 * index read whole for a few rows, such as a condition on an index's second column alone.
 */
const BLOCKS_PER_ROW = 10;
const SMALL_BY_DESIGN = new Set([
  "writ_audit_log_state",
  "writ_audit_log_pending",
  "writ_audit_log_outside",
  "writ_audit_log_days",
  "writ_audit_counters",
]);
/** The instant the trail is read at: a minute after its last decision. */
const NOW = new Date(Date.parse(at(DECISIONS * STEP_MS + 60_000)));

/** Methods of the stores that run no statement of their own, or only a constant one. */
const NO_STATEMENT: Readonly<Record<string, string>> = {
  healthy: "reads a flag",
  flushed: "waits for queued inserts",
  countApiCall: "counts in memory (saved as one counter upsert a second)",
  probe: "`SELECT 1`",
  close: "stops timers and waits",
  exportSession: "checks out a connection: an export's statements are the reads above (counts, checkpoints, entries, unlogged)",
};

/** The large tables of the database now (ANALYZE's row estimates). */
async function largeTables(database: TestDatabase): Promise<Set<string>> {
  await database.pool.query("ANALYZE");
  const { rows } = await database.pool.query<{ relname: string }>(
    "SELECT relname FROM pg_class WHERE relkind = 'r' AND relname LIKE 'writ_%' AND reltuples >= $1",
    [LARGE],
  );
  return new Set(rows.map((r) => r.relname).filter((name) => !SMALL_BY_DESIGN.has(name)));
}

/** Every way `statement` breaks the rule on `large` tables (an index named after its table counts as it), in words. */
function violations(statement: ExplainedStatement, large: ReadonlySet<string>): string[] {
  const isLarge = (relation: string): boolean => [...large].some((table) => relation === table || relation.startsWith(`${table}_`));
  const found: string[] = [];
  const rowsRead = new Map<string, number>();
  for (const scan of statement.scans) {
    if (!isLarge(scan.relation)) continue;
    if (scan.node === "Seq Scan") found.push(`Seq Scan on ${scan.relation}`);
    if (scan.blocks > BLOCKS_PER_ROW * (scan.rows + scan.loops) + 20)
      found.push(`${scan.node} on ${scan.relation} touched ${scan.blocks} buffers for ${scan.rows} rows in ${scan.loops} loops`);
    if (scan.node !== "Bitmap Index Scan") rowsRead.set(scan.relation, (rowsRead.get(scan.relation) ?? 0) + scan.rows);
  }
  for (const [relation, rows] of rowsRead) if (rows > MOST_ROWS) found.push(`${rows} rows read from ${relation}`);
  for (const [relation, count] of statement.seqScans)
    if (large.has(relation)) found.push(`${count} sequential scan(s) of ${relation} (statement or trigger)`);
  return found.map((v) => `${v} in: ${statement.text.replace(/\s+/g, " ").slice(0, 300)}`);
}

if (unavailable !== null) {
  describe.skip(`the PostgreSQL audit trail at volume: ${unavailable}`, () => {
    it("reads every table through an index", () => undefined);
  });
} else {
  describe("the PostgreSQL audit trail at volume", () => {
    let database: TestDatabase;
    let url: string;
    /** The checkpoint that covers the seeded trail. */
    let seededSize = 0;

    beforeAll(async () => {
      database = await createTestDatabase();
      url = (database.pool.options as { connectionString: string }).connectionString;
      await migrate(database.pool);
      const { pool } = database;
      await seedDecisions(pool, { from: 0, count: DECISIONS, stepMs: STEP_MS, logId: LOG });
      await seedVerifications(pool, { from: 0, count: OTHERS, stepMs: STEP_MS * 4, logId: LOG });
      await seedSecurityEvents(pool, { from: 0, count: OTHERS, stepMs: STEP_MS * 4, logId: LOG });
      const storage = new PostgresLogStorage(pool, LOG);
      await sequenceAll(storage, LOG_SIGNER, 1_000);
      seededSize = (await storage.counts(LOG))!.size;
      // A log with a long past: the checkpoints and prune notes of another sidecar's log.
      await pool.query(
        "INSERT INTO writ_audit_log_checkpoints (log_id, size, body) SELECT 'vol-past', n, '{}' FROM generate_series(1, 5000) AS n",
      );
      await pool.query(
        `WITH notes AS (INSERT INTO writ_audit_log_prunes (recorded_at, body) SELECT n, '{"positions":[],"reason":"retention"}' FROM generate_series(1, 5000) AS n RETURNING seq, body)
         INSERT INTO writ_audit_log_pending (log_id, kind, ref, leaf, pended_at) SELECT 'vol-past', 'prune', seq::text, sha256(convert_to(body, 'UTF8')), 0 FROM notes`,
      );
      await new PostgresLogStorage(pool, "vol-past").sequence("vol-past", 10_000);
    }, 600_000);
    afterAll(() => database?.drop());

    it("the seeded trail is one log of every record, checkpointed, with its decisions counted", async () => {
      expect(seededSize).toBe(DECISIONS + 2 * OTHERS);
      const audit = new PostgresAuditLog(database.pool, {
        recordLog: { storage: new PostgresLogStorage(database.pool, LOG), checkpoints: MANUAL_CHECKPOINTS },
      });
      try {
        const { rows } = await database.pool.query<{ today: string }>(
          "SELECT count(*) AS today FROM writ_audit_records WHERE kind = 'decision' AND recorded_at >= $1",
          [Math.floor(NOW.getTime() / 86_400_000) * 86_400_000],
        );
        expect(await audit.stats(NOW)).toMatchObject({ total_decisions: String(DECISIONS), decisions_today: rows[0]!.today });
        expect((await audit.recordLog!.status())?.latest?.size).toBe(seededSize);
      } finally {
        await audit.close();
      }
    });

    it("a tail export from the latest-but-one checkpoint reads the tail, not the log: 20 entries, not 300,000", async () => {
      const { pool, statements } = explainedPool(url);
      const storage = new PostgresLogStorage(pool, LOG);
      const audit = new PostgresAuditLog(pool, { recordLog: { storage, checkpoints: MANUAL_CHECKPOINTS } });
      const replay = new PostgresReplayStore(pool, { recordLog: { logId: LOG } });
      try {
        for (let i = 0; i < 20; i++) {
          const body = decision({ executionId: `tail-${i}`, recordedAt: at(DECISIONS * STEP_MS + i) });
          expect(
            (
              await replay.consume(executionFingerprint(body.executionId), {
                now: Date.parse(body.recordedAt),
                record: { kind: "decision", body },
              })
            ).ok,
          ).toBe(true);
        }
        const latest = (await audit.recordLog!.checkpointNow())!;
        expect(latest.size).toBe(seededSize + 20);
        statements.length = 0;
        const lines: ExportLine[] = [];
        for await (const line of audit.recordLog!.export(LOG, seededSize)) lines.push(line);
        expect(lines.filter((l) => l.type === "entry")).toHaveLength(20);
        const verifier = new ExportVerifier([LOG_KEY.publicKey]);
        for (const line of lines) verifier.add(JSON.parse(JSON.stringify(line)));
        expect(verifier.finish()).toMatchObject({ valid: true, entries: 20 });
        // Every row the export's statements read, from every table: the tail and a few of the log's own rows.
        const read = statements.reduce((sum, s) => sum + s.scans.reduce((rows, scan) => rows + scan.rows, 0), 0);
        expect(read).toBeLessThan(100);
        expect(statements.flatMap((s) => [...s.seqScans.keys()])).toEqual([]);
      } finally {
        await audit.close();
        await replay.close();
        await pool.end();
      }
    });

    it("every statement of the trail and the record log reads a large table through an index, a page or a chunk at a time", async () => {
      const { pool, statements } = explainedPool(url);
      const storage = new PostgresLogStorage(pool, LOG);
      const retention = {
        // About 1,500 decisions past their age; verifications and security events beyond 3,000 (and by age).
        decisions: { maxAgeMs: (DECISIONS - 1_500) * STEP_MS + 60_000, maxRecords: null },
        verifications: { maxAgeMs: 86_400_000, maxRecords: 3_000 },
        security: { maxAgeMs: null, maxRecords: 3_000 },
      };
      const audit = new PostgresAuditLog(pool, { recordLog: { storage, checkpoints: MANUAL_CHECKPOINTS }, retention, now: () => NOW });
      const log: RecordLog = audit.recordLog!;
      const replay = new PostgresReplayStore(pool, { recordLog: { logId: LOG } });
      const offTheLog = new PostgresReplayStore(pool);
      const large = await largeTables(database);
      expect([...large]).toEqual(
        expect.arrayContaining([
          "writ_audit_log_checkpoints",
          "writ_audit_log_entries",
          "writ_audit_log_nodes",
          "writ_audit_log_prunes",
          "writ_audit_records",
          "writ_audit_security",
          "writ_audit_verifications",
        ]),
      );
      const day = (n: number): number => Date.parse(at(n * STEP_MS));
      const decide = async (store: PostgresReplayStore, executionId: string, n: number) => {
        const body = decision({ executionId, recordedAt: at(n * STEP_MS), policyId: "policy-3" });
        expect(
          (await store.consume(executionFingerprint(executionId), { now: Date.parse(body.recordedAt), record: { kind: "decision", body } }))
            .ok,
        ).toBe(true);
      };
      /** Each operation, named by the method of the store it runs. */
      const operations: readonly (readonly [string, () => Promise<unknown>])[] = [
        ["listDecisions", () => audit.listDecisions({ limit: 50, offset: 0 })],
        ["listDecisions", () => audit.listDecisions({ limit: 50, offset: 0, policyId: "policy-7" })],
        ["listDecisions", () => audit.listDecisions({ limit: 50, offset: 0, decision: "rejected" })],
        ["listDecisions", () => audit.listDecisions({ limit: 50, offset: 0, policyId: "policy-7", decision: "pending_override" })],
        ["listDecisions", () => audit.listDecisions({ limit: 50, offset: 0, from: day(90_000), to: day(100_000) })],
        ["listDecisions", () => audit.listDecisions({ limit: 50, offset: 0, policyId: `policy-${POLICIES + 1}` })],
        [
          "listDecisions",
          () =>
            audit.listDecisions({ limit: 50, offset: 0, policyId: "policy-2", decision: "approved", from: day(10_000), to: day(150_000) }),
        ],
        ["listDecisions", () => audit.listDecisions({ limit: 50, offset: 1_000, decision: "approved" })],
        ["getDecision", () => audit.getDecision("vol-123456")],
        ["getDecision", () => audit.getDecision("nowhere")],
        ["stats", () => audit.stats(NOW)],
        ["listSecurityEvents", () => audit.listSecurityEvents({ limit: 50 })],
        ["listSecurityEvents", () => audit.listSecurityEvents({ limit: 50, from: day(20_000), to: day(40_000) })],
        [
          "recordVerification",
          async () => {
            audit.recordVerification({ executionId: "vol-1", valid: true, checks: {}, errors: [], recordedAt: NOW.toISOString() });
            await audit.flushed();
          },
        ],
        [
          "recordSecurityEvent",
          async () => {
            audit.recordSecurityEvent({
              type: "authentication_failed",
              method: "GET",
              path: "/audit/stats",
              ip: "10.9.9.9",
              detail: "wrong key",
            });
            await audit.flushed();
          },
        ],
        // The hot path (the replay store's claim statement, inserting the record and its pending row), with the
        // outside trigger's probe.
        ["consume", () => decide(replay, "vol-new-1", DECISIONS + 10)],
        // Records written with the log off: outside candidates.
        [
          "consume",
          async () => {
            for (let i = 0; i < 5; i++) await decide(offTheLog, `vol-off-${i}`, DECISIONS + 20 + i);
          },
        ],
        ["sequence", () => storage.sequence(LOG, 1_000)],
        ["checkpoint", () => storage.checkpoint(LOG, LOG_SIGNER, NOW)],
        ["stale", () => storage.stale(Date.now())],
        ["logIds", () => storage.logIds()],
        ["counts", () => storage.counts(LOG)],
        ["checkpoints", () => storage.checkpoints(LOG, 100_000, 100)],
        ["checkpointAt", () => storage.checkpointAt(LOG, seededSize)],
        ["decisionEntry", () => storage.decisionEntry("vol-4242")],
        ["leaves", () => log.decisionInclusionProof("vol-4242")],
        ["nodes", () => log.consistencyProof(LOG, 100_000, seededSize)],
        [
          "entries",
          async () => {
            let read = 0;
            for await (const entry of storage.entries(LOG, 150_000, 151_000)) read += entry.position >= 150_000 ? 1 : 0;
            expect(read).toBe(1_000);
          },
        ],
        [
          "unlogged",
          async () => {
            const found = [];
            for await (const record of storage.unlogged()) found.push(record);
            expect(found).toHaveLength(5);
          },
        ],
        ["adoptUnlogged", async () => expect(await storage.adoptUnlogged(Date.now())).toBe(5)],
        ["prune", async () => expect(await audit.prune(NOW)).toBeGreaterThan(2 * (OTHERS - 3_000))],
        ["stats", () => audit.stats(NOW)],
      ];
      const problems: string[] = [];
      const ran = new Set<string>();
      try {
        for (const [method, run] of operations) {
          statements.length = 0;
          await run();
          ran.add(method);
          expect(statements.length, `${method} ran no statement`).toBeGreaterThan(0);
          for (const statement of statements) problems.push(...violations(statement, large).map((v) => `${method}: ${v}`));
        }
      } finally {
        await audit.close();
        await replay.close();
        await offTheLog.close();
        await pool.end();
      }
      expect(problems).toEqual([]);
      // Every method of the stores is here, or says why not: a statement added later is covered or named.
      const methods = [AuditTrail.prototype, PostgresAuditLog.prototype, PostgresLogStorage.prototype].flatMap((p) =>
        Object.getOwnPropertyNames(p).filter((name) => name !== "constructor"),
      );
      expect(methods.filter((m) => !ran.has(m) && !(m in NO_STATEMENT))).toEqual([]);
    }, 600_000);
  });
}
