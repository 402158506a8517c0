/**
 * `importLmdb` (storage/postgres/import-lmdb.ts): an LMDB data dir written by the sidecar's own stores, imported into
 * a fresh PostgreSQL database, answers every read of the audit trail, the replay store and Surface B as it did on
 * LMDB; a second import of it is refused; a key the database already holds keeps the database's row.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { confirmationKey, executionFingerprint, type ReplayStore } from "@writ/runtime";
import { LmdbReplayStore } from "@writ/runtime/lmdb";
import { PostgresReplayStore } from "../../../src/storage/postgres/replay-store.js";
import { open } from "lmdb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LmdbAuditLog } from "../../../src/storage/lmdb/audit-log.js";
import type { AuditLog } from "../../../src/audit/types.js";
import { PostgresAuditLog } from "../../../src/storage/postgres/audit-log.js";
import { AlreadyImportedError, importLmdb } from "../../../src/storage/postgres/import-lmdb.js";
import { migrate } from "../../../src/storage/postgres/migrations.js";
import { PostgresLogStorage } from "../../../src/storage/postgres/record-log-storage.js";
import { PostgresTrustRecordStore } from "../../../src/storage/postgres/record-store.js";
import { LmdbBundlePins } from "../../../src/storage/lmdb/bundle-pins.js";
import { PostgresBundlePins } from "../../../src/storage/postgres/bundle-pins.js";
import { LmdbTrustRecordStore } from "../../../src/storage/lmdb/record-store.js";
import type { TrustRecordStore } from "../../../src/trust-records/record-store.js";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../../test/support/postgres.js";
import { MANUAL_CHECKPOINTS } from "../../audit/record-log-contract.js";
import { at, decision } from "../../audit/support.js";
import { receiptOf, recordOf, verificationOf } from "../../surface-b/record-store-contract.js";

const unavailable = await postgresUnavailable();

/** The executionIds the LMDB sidecar decided: approved, rejected, and escalated ones, some overridden and confirmed. */
const DECIDED = Array.from({ length: 1_203 }, (_, i) => `moved-${i}`);
const TRUST_IDS = Array.from({ length: 40 }, (_, i) => `tx-${String(i).padStart(3, "0")}`);

interface Stores {
  readonly replay: ReplayStore;
  readonly audit: AuditLog;
  readonly trust: TrustRecordStore;
}

/** Everything a reader of the stores can see, for comparing two backends. */
async function observe(s: Stores): Promise<unknown> {
  const decisions = [];
  for (let offset = 0; ; offset += 500) {
    const page = await s.audit.listDecisions({ limit: 500, offset });
    decisions.push(...page);
    if (page.length < 500) break;
  }
  const details = await Promise.all(DECIDED.filter((_, i) => i % 37 === 0).map((id) => s.audit.getDecision(id)));
  const replay = await Promise.all(
    [...DECIDED, "pending-left", "reserved-left"].map(async (id) => s.replay.read(executionFingerprint(id))),
  );
  const confirmations = await Promise.all(DECIDED.slice(0, 10).map((id) => s.replay.read(confirmationKey(id))));
  const { total_api_calls: _calls, ...stats } = await s.audit.stats(new Date(Date.parse(at(0))));
  const security = (await s.audit.listSecurityEvents({ limit: 500 })).map(({ id: _id, ...row }) => row);
  const trust = await Promise.all(
    TRUST_IDS.map(async (id) => ({
      record: await s.trust.record(id),
      verification: await s.trust.latestVerification(id),
      receipt: await s.trust.latestReceipt(id),
    })),
  );
  return {
    decisions,
    details,
    replay,
    confirmations,
    stats,
    security,
    trust,
    ids: await s.trust.ids(0, 100),
    count: await s.trust.count(),
  };
}

const PIN_1 = "1".repeat(64);
const PIN_2 = "2".repeat(64);

if (unavailable !== null) {
  describe.skip(`importLmdb: ${unavailable}`, () => {
    it("moves an LMDB data dir into PostgreSQL", () => undefined);
  });
} else {
  describe("importLmdb", () => {
    let dir: string;
    let database: TestDatabase;
    let expected: unknown;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "writ-import-"));
      const root = open({ path: dir, maxDbs: 32, noSubdir: false });
      const audit = new LmdbAuditLog(root, { now: () => new Date(Date.parse(at(5_000))) });
      const replay = audit.recording(new LmdbReplayStore(root));
      const trust = new LmdbTrustRecordStore(root);
      for (const [i, executionId] of DECIDED.entries()) {
        const status = i % 3 === 0 ? "pending_override" : i % 3 === 1 ? "approved" : "rejected";
        const body = decision({ executionId, recordedAt: at(i), status, policyId: i % 2 === 0 ? "payments" : "refunds" });
        const context = status === "pending_override" ? { pending: i } : undefined;
        const consumed = await replay.consume(executionFingerprint(executionId), {
          now: Date.parse(body.recordedAt),
          ...(context ? { context } : {}),
          record: { kind: "decision", body },
        });
        expect(consumed.ok).toBe(true);
        if (i % 6 === 0 && consumed.ok) {
          const override = {
            executionId,
            approved: true,
            approvedBy: "ana",
            approverRole: "ops",
            reason: "checked",
            overrideId: `o-${i}`,
            record: { overrideId: `o-${i}` },
            recordedAt: at(i + 1),
          };
          expect(
            (
              await replay.resolveOverride(consumed.entry.fingerprint, consumed.entry.token, true, {
                now: Date.parse(at(i + 1)),
                record: { kind: "override", body: override as never },
              })
            ).ok,
          ).toBe(true);
        }
        if (i < 10) {
          const confirmation = { executionId, match: true, proof: { executionId, signature: "sig" }, recordedAt: at(i + 2) };
          expect(
            (
              await replay.consume(confirmationKey(executionId), {
                now: Date.parse(at(i + 2)),
                record: { kind: "confirmation", body: confirmation as never },
              })
            ).ok,
          ).toBe(true);
        }
      }
      // An escalation still pending and a reservation still live: both must stay blocking on the fleet.
      expect(
        (await replay.consume(executionFingerprint("pending-left"), { now: Date.parse(at(9_000)), context: { pending: true } })).ok,
      ).toBe(true);
      expect((await replay.reserve(executionFingerprint("reserved-left"), { now: Date.now(), ttlMs: 300_000 })).ok).toBe(true);
      for (let i = 0; i < 700; i++)
        audit.recordVerification({
          executionId: i % 2 ? DECIDED[i]! : null,
          valid: i % 5 !== 0,
          checks: { signature: "ok" },
          errors: [],
          recordedAt: at(i),
        });
      for (let i = 0; i < 30; i++)
        audit.recordSecurityEvent({
          type: "authentication_failed",
          method: "GET",
          path: `/audit/stats`,
          ip: `10.0.0.${i}`,
          detail: "wrong key",
        });
      for (const [i, id] of TRUST_IDS.entries()) {
        expect(await trust.create(recordOf(id, i), verificationOf(id, 0), receiptOf(id, 0))).toBe(true);
        for (let n = 1; n <= i % 4; n++) {
          await trust.appendVerification(id, verificationOf(id, n));
          await trust.appendReceipt(id, receiptOf(id, n));
        }
      }
      const pins = new LmdbBundlePins(root);
      await pins.claim("payments", "1.0.0", PIN_1);
      await pins.claim("refunds", "2.0.0-rc.1", PIN_2);
      await audit.flushed();
      expected = await observe({ replay, audit, trust });
      await audit.close();
      await replay.close();
      await root.close();
      database = await createTestDatabase();
      await migrate(database.pool);
    });
    afterAll(async () => {
      await database?.drop();
      await rm(dir, { recursive: true, force: true });
    });

    it("answers every read on PostgreSQL as the LMDB stores did, and refuses a second import of the same data dir", async () => {
      const progress: string[] = [];
      const counts = await importLmdb(database.pool, dir, (kind, rows) => progress.push(`${kind} ${rows}`));
      expect(counts.imported).toMatchObject({
        replay: DECIDED.length + 10 + 2,
        decisions: DECIDED.length,
        overrides: 201,
        confirmations: 10,
        verifications: 700,
        trustRecords: 40,
        bundlePins: 2,
      });
      expect(Object.values(counts.conflicts).every((n) => n === 0)).toBe(true);
      expect(progress).toContain(`replay ${DECIDED.length + 12}`);
      const audit = new PostgresAuditLog(database.pool, { now: () => new Date(Date.parse(at(5_000))) });
      try {
        expect(
          await observe({ replay: new PostgresReplayStore(database.pool), audit, trust: new PostgresTrustRecordStore(database.pool) }),
        ).toEqual(expected);
      } finally {
        await audit.close();
      }
      // The versions the host served keep their bytes for the whole fleet.
      const fleetPins = new PostgresBundlePins(database.pool);
      expect(await fleetPins.claim("payments", "1.0.0", "f".repeat(64))).toBe(PIN_1);
      expect(await fleetPins.claim("refunds", "2.0.0-rc.1", "f".repeat(64))).toBe(PIN_2);
      // The imported executions stay decided for the whole fleet.
      const again = await new PostgresReplayStore(database.pool).consume(executionFingerprint(DECIDED[5]!));
      expect(again).toMatchObject({ ok: false, reason: "conflict" });
      await expect(importLmdb(database.pool, dir)).rejects.toBeInstanceOf(AlreadyImportedError);
      const { rows } = await database.pool.query<{ n: string }>("SELECT count(*) AS n FROM writ_audit_verifications");
      expect(Number(rows[0]!.n)).toBe(700);

      // The imported records are in no log: the first sidecar to start with the record log takes every one of them in,
      // and its stats, counted from the log, are the data dir's.
      const { imported } = counts;
      const storage = new PostgresLogStorage(database.pool, "after-import");
      const audited = imported.decisions + imported.overrides + imported.confirmations + imported.verifications + imported.security;
      expect(await storage.adoptUnlogged(Date.now())).toBe(audited);
      expect(await storage.adoptUnlogged(Date.now())).toBe(0);
      const logged = new PostgresAuditLog(database.pool, { recordLog: { storage, checkpoints: MANUAL_CHECKPOINTS } });
      try {
        const { total_api_calls: _calls, ...stats } = await logged.stats(new Date(Date.parse(at(0))));
        expect(stats).toEqual((expected as { stats: unknown }).stats);
        await logged.recordLog!.checkpointNow();
        expect(await logged.stats(new Date(Date.parse(at(0))))).toMatchObject(stats);
        expect(await logged.recordLog!.status()).toMatchObject({ pending: 0, size: audited });
      } finally {
        await logged.close();
      }
    });

    it("keeps the database's row for a key it already holds and counts it as a conflict; an import fails as a whole", async () => {
      const other = await createTestDatabase();
      try {
        await migrate(other.pool);
        const fleet = new PostgresReplayStore(other.pool);
        const theirs = await fleet.consume(executionFingerprint(DECIDED[1]!), { now: 1 });
        const counts = await importLmdb(other.pool, dir);
        expect(counts.conflicts).toMatchObject({ replay: 1, decisions: 0 });
        expect(await fleet.read(executionFingerprint(DECIDED[1]!))).toEqual(theirs.ok ? theirs.entry : null);
      } finally {
        await other.drop();
      }
      const broken = await createTestDatabase();
      try {
        // No schema: the first statement fails, and nothing is left behind.
        await broken.pool.query(
          "CREATE TABLE writ_imports (source text PRIMARY KEY, imported_at timestamptz NOT NULL DEFAULT now(), counts text NOT NULL)",
        );
        await expect(importLmdb(broken.pool, dir)).rejects.toThrow(/importing replay failed/);
        expect((await broken.pool.query("SELECT * FROM writ_imports")).rowCount).toBe(0);
      } finally {
        await broken.drop();
      }
    });
  });
}
