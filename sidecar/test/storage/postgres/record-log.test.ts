/**
 * The record log contract (record-log-contract.ts) on the fleet's PostgreSQL database, with a Tamperer that changes the
 * trail's rows with SQL; and what only a fleet has: several logs in one database, read from any sidecar, and the log of
 * a sidecar that stopped for good taken over by another.
 */
import { ExportVerifier, executionFingerprint, verifyInclusionProof } from "@writ/runtime";
import { PostgresRecordTemplates } from "../../../src/storage/postgres/record-templates.js";
import { PostgresReplayStore } from "../../../src/storage/postgres/replay-store.js";
import { RECORDS_TABLE } from "../../../src/storage/postgres/tables.js";
import type pg from "pg";
import { afterAll, describe, expect, it, vi } from "vitest";
import { Checkpointer } from "../../../src/audit/record-log/checkpointer.js";
import type { AuditRetention } from "../../../src/audit/retention.js";
import { PostgresAuditLog } from "../../../src/storage/postgres/audit-log.js";
import { migrate } from "../../../src/storage/postgres/migrations.js";
import { PostgresLogStorage } from "../../../src/storage/postgres/record-log-storage.js";
import { createTestDatabase, postgresUnavailable } from "../../../../test/support/postgres.js";
import {
  LOG_KEY,
  LOG_SIGNER,
  MANUAL_CHECKPOINTS,
  recordLogContract,
  writeTrail,
  type RecordLogHarness,
  type Tamperer,
  type Undo,
} from "../../audit/record-log-contract.js";
import { at, decision } from "../../audit/support.js";

const unavailable = await postgresUnavailable();

const TABLES = [
  "writ_replay",
  RECORDS_TABLE,
  "writ_audit_verifications",
  "writ_audit_security",
  "writ_audit_counters",
  "writ_audit_log_pending",
  "writ_audit_log_entries",
  "writ_audit_log_nodes",
  "writ_audit_log_checkpoints",
  "writ_audit_log_state",
  "writ_audit_log_prunes",
  "writ_audit_log_outside",
  "writ_audit_log_days",
];

function harness(
  pool: pg.Pool,
  logId: string,
  options: { readonly retention?: AuditRetention } = {},
  templates: PostgresRecordTemplates | null = null,
): RecordLogHarness {
  const storage = new PostgresLogStorage(pool, logId, null, templates);
  const audit = new PostgresAuditLog(pool, {
    recordLog: { storage, checkpoints: MANUAL_CHECKPOINTS },
    templates,
    ...(options.retention ? { retention: options.retention } : {}),
  });
  const replay = new PostgresReplayStore(pool, { recordLog: { logId }, templates });
  const close = async () => {
    await audit.close();
    await replay.close();
  };
  return {
    audit,
    replay,
    tamper: sqlTamperer(pool, logId, templates),
    prune: (now) => audit.prune(now),
    reopen: async (next) => {
      await close();
      return harness(pool, logId, next, templates);
    },
    dispose: async () => {
      await close();
      await pool.query(`TRUNCATE ${TABLES.join(", ")}`);
    },
  };
}

/** Where the record at a position of the log is: its table and key, from the log's entry (kind, ref). */
function sqlTamperer(pool: pg.Pool, logId: string, templates: PostgresRecordTemplates | null): Tamperer {
  const place = async (position: number): Promise<{ table: string; where: string; key: unknown[]; kind: string }> => {
    const { rows } = await pool.query<{ kind: string; ref: string }>(
      "SELECT kind, ref FROM writ_audit_log_entries WHERE log_id = $1 AND position = $2",
      [logId, position],
    );
    const { kind, ref } = rows[0]!;
    if (kind === "decision" || kind === "override" || kind === "confirmation")
      return { table: RECORDS_TABLE, where: "execution_fp = $1 AND kind = $2", key: [ref, kind], kind };
    const table = { verification: "writ_audit_verifications", security: "writ_audit_security", prune: "writ_audit_log_prunes" }[kind]!;
    return { table, where: "seq = $1::bigint", key: [ref], kind };
  };
  const row = async (p: Awaited<ReturnType<typeof place>>): Promise<Record<string, unknown>> =>
    (await pool.query(`SELECT * FROM ${p.table} WHERE ${p.where}`, p.key)).rows[0]!;
  const setBody = (p: Awaited<ReturnType<typeof place>>, body: unknown) =>
    pool.query(`UPDATE ${p.table} SET body = $${p.key.length + 1} WHERE ${p.where}`, [...p.key, body]);
  const insertRow = async (table: string, values: Record<string, unknown>) => {
    const columns = Object.keys(values);
    await pool.query(
      `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(", ")})`,
      Object.values(values),
    );
  };
  return {
    kinds: async () =>
      (await pool.query<{ kind: never }>("SELECT kind FROM writ_audit_log_entries WHERE log_id = $1 ORDER BY position", [logId])).rows.map(
        (r) => r.kind,
      ),
    edit: async (position, t) => {
      const p = await place(position);
      const { body } = await row(p);
      // A coded decision is edited as the JSON it reads as.
      const [text] = templates === null ? [body as string] : await templates.texts([body as string]);
      await setBody(p, JSON.stringify({ ...(JSON.parse(text!) as object), tampered: t }));
      return async () => void (await setBody(p, body));
    },
    remove: async (position) => {
      const p = await place(position);
      const original = await row(p);
      await pool.query(`DELETE FROM ${p.table} WHERE ${p.where}`, p.key);
      return () => insertRow(p.table, original);
    },
    swap: async (a, b) => {
      const [first, second] = [await place(a), await place(b)];
      const [one, two] = [(await row(first)).body, (await row(second)).body];
      await setBody(first, two);
      await setBody(second, one);
      return async () => {
        await setBody(first, one);
        await setBody(second, two);
      };
    },
    insert: async (position, t): Promise<Undo> => {
      const p = await place(position);
      const { seq: _seq, ...copy } = await row(p);
      // A key no logged record has: another fingerprint, or the next seq.
      if (p.table === RECORDS_TABLE) copy["execution_fp"] = executionFingerprint(`forged-${t}`);
      await insertRow(p.table, copy);
      const forged =
        p.table === RECORDS_TABLE ? `execution_fp = '${String(copy["execution_fp"])}'` : `seq = (SELECT max(seq) FROM ${p.table})`;
      return async () => void (await pool.query(`DELETE FROM ${p.table} WHERE ${forged}`));
    },
  };
}

if (unavailable !== null) {
  describe.skip(`the record log on PostgreSQL: ${unavailable}`, () => {
    it("runs the record log contract on PostgreSQL", () => undefined);
  });
} else {
  const database = await createTestDatabase();
  afterAll(() => database.drop());
  await migrate(database.pool);
  const { pool } = database;

  recordLogContract("PostgreSQL", async (options) => harness(pool, "sidecar-a", options));
  const templates = await PostgresRecordTemplates.open(pool);
  recordLogContract("PostgreSQL, decision records coded against templates", async (options) =>
    harness(pool, "sidecar-a", options, templates),
  );

  it("codes decision records once their shape has a template, and a coded record whose indexed columns were changed fails the export", async () => {
    const h = harness(pool, "sidecar-coded", {}, templates);
    try {
      await writeTrail(h, 1_000, 30);
      const { rows } = await pool.query<{ coded: string }>(
        `SELECT count(*) FILTER (WHERE left(body, 1) = chr(1)) AS coded FROM ${RECORDS_TABLE} WHERE kind = 'decision'`,
      );
      expect(Number(rows[0]!.coded)).toBeGreaterThan(20);
      const log = h.audit.recordLog!;
      await log.checkpointNow();
      // A coded decision's status column changed behind the log: its record still hashes as logged, but the export names
      // the columns it is found by, and verification fails the entry.
      await pool.query(
        `UPDATE ${RECORDS_TABLE} SET status = 'approved' WHERE kind = 'decision' AND left(body, 1) = chr(1) AND status <> 'approved'
         AND execution_fp = (SELECT min(execution_fp) FROM ${RECORDS_TABLE} WHERE kind = 'decision' AND left(body, 1) = chr(1) AND status <> 'approved')`,
      );
      const verifier = new ExportVerifier([LOG_KEY.publicKey]);
      for await (const line of log.export(log.logId)) verifier.add(JSON.parse(JSON.stringify(line)));
      expect(verifier.finish()).toMatchObject({ valid: false });
    } finally {
      await h.dispose();
    }
  });

  it("an export decodes each coded record as it yields it, not its page of rows at once: the work between two turns stays one record's", async () => {
    const h = harness(pool, "sidecar-paged", {}, templates);
    const decoded = vi.spyOn(templates, "text");
    try {
      await writeTrail(h, 5_000, 600);
      const log = h.audit.recordLog!;
      await log.checkpointNow();
      decoded.mockClear();
      const verifier = new ExportVerifier([LOG_KEY.publicKey]);
      const lines = log.export(log.logId)[Symbol.asyncIterator]();
      let line = await lines.next();
      for (; !line.done && line.value.type !== "entry"; line = await lines.next()) verifier.add(JSON.parse(JSON.stringify(line.value)));
      // The page read holds every entry (PAGE rows); one has been decoded for the first entry.
      expect(decoded).toHaveBeenCalledTimes(1);
      let entries = 0;
      for (; !line.done; line = await lines.next()) {
        verifier.add(JSON.parse(JSON.stringify(line.value)));
        if (line.value.type === "entry") entries++;
      }
      expect(entries).toBeGreaterThan(500);
      expect(decoded.mock.calls.length).toBe(entries);
      expect(verifier.finish()).toMatchObject({ valid: true });
    } finally {
      decoded.mockRestore();
      await h.dispose();
    }
  });

  describe("the record logs of a fleet on PostgreSQL", () => {
    it("keep one log per sidecar; any sidecar lists them, proves a decision in the log that holds it, and exports each", async () => {
      const a = harness(pool, "sidecar-a");
      const b = harness(pool, "sidecar-b");
      try {
        await writeTrail(a, 0, 6);
        await writeTrail(b, 6, 6);
        const [ca, cb] = [(await a.audit.recordLog!.checkpointNow())!, (await b.audit.recordLog!.checkpointNow())!];
        expect([ca.logId, cb.logId]).toEqual(["sidecar-a", "sidecar-b"]);
        expect(await a.audit.recordLog!.logIds()).toEqual(["sidecar-a", "sidecar-b"]);
        // Sidecar a proves a decision that sidecar b made, in b's log.
        const proof = (await a.audit.recordLog!.decisionInclusionProof("exec-8"))!;
        expect(proof).toMatchObject({ logId: "sidecar-b", checkpoint: cb });
        expect(verifyInclusionProof(proof, [LOG_KEY.publicKey]).valid).toBe(true);
        expect(await a.audit.recordLog!.status("sidecar-b")).toMatchObject({ size: cb.size, pending: 0 });
      } finally {
        await b.audit.close();
        await a.dispose();
      }
    });

    it("a sidecar takes over the log of one that stopped for good: its pending records get sequenced and checkpointed", async () => {
      const gone = harness(pool, "sidecar-gone");
      const live = harness(pool, "sidecar-live");
      try {
        // Recorded long ago by a sidecar that never came back: pending, never sequenced.
        const body = decision({ executionId: "orphan-1", recordedAt: at(0) });
        expect(
          (
            await gone.replay.consume(executionFingerprint("orphan-1"), {
              now: Date.parse(body.recordedAt),
              record: { kind: "decision", body },
            })
          ).ok,
        ).toBe(true);
        await gone.audit.close();
        const storage = new PostgresLogStorage(pool, "sidecar-live");
        expect(await storage.stale(Date.now())).toEqual(["sidecar-gone"]);
        const checkpointer = new Checkpointer(
          storage,
          { signer: LOG_SIGNER, intervalMs: 100, everyRecords: 1 },
          { onError: () => undefined },
        );
        await new Promise((resolve) => setTimeout(resolve, 150));
        await checkpointer.now();
        await checkpointer.stop();
        expect(await storage.counts("sidecar-gone")).toMatchObject({ size: 1, pending: 0, latest: { logId: "sidecar-gone", size: 1 } });
        expect(await storage.stale(Date.now())).toEqual([]);
      } finally {
        await live.dispose();
      }
    });

    it("takes the records written while the log was off into the log of the next sidecar that starts with it", async () => {
      const off = new PostgresReplayStore(pool);
      try {
        for (let i = 0; i < 3; i++) {
          const body = decision({ executionId: `unlogged-${i}`, recordedAt: at(i) });
          expect(
            (
              await off.consume(executionFingerprint(body.executionId), {
                now: Date.parse(body.recordedAt),
                record: { kind: "decision", body },
              })
            ).ok,
          ).toBe(true);
        }
        const storage = new PostgresLogStorage(pool, "sidecar-a");
        expect(await storage.adoptUnlogged(Date.now())).toBe(3);
        expect(await storage.adoptUnlogged(Date.now())).toBe(0);
        expect(await storage.counts("sidecar-a")).toMatchObject({ pending: 3 });
      } finally {
        await off.close();
        await pool.query(`TRUNCATE ${TABLES.join(", ")}`);
      }
    });
  });
}
