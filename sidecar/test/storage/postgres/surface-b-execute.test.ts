/**
 * Surface B on PostgreSQL (the fleet backend): a businessTransactionId is never consumed without its Trust Record.
 * A database fault while the record is written (its backend terminated, or the statement failing) is answered 503,
 * and then the id is either still free, so the retry decides it afresh and answers the record, or consumed with its
 * record; never consumed with no record, which would answer every retry 422 INV-013 and leave no record at all.
 *
 * The fault is a trigger on `writ_trust_records` armed for one insert by a sequence (a sequence is not rolled back, so
 * the retry's insert passes): it terminates its own backend or raises an error, inside the statement that writes
 * the record (after the decision's replay entry and audit record were written), or terminates it at that write's
 * COMMIT. An in-process sidecar with Surface B on a fresh test database; every answer is checked against the OpenAPI
 * document (support.ts).
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executionFingerprint } from "@writ/runtime";
import type { TrustRecord } from "@writ/sidecar";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../../test/support/postgres.js";
import { businessTransaction, startSurfaceB, without, type SurfaceB } from "../../surface-b/support.js";

const unavailable = await postgresUnavailable();

/** Where the fault is: in the record's statement (its backend terminated, or an error raised), or at COMMIT. */
type Fault = "terminate" | "raise" | "terminate at commit";

/**
 * The faults: the record's insert runs the trigger `BEFORE` (in its statement) and, deferred, `AFTER` (at COMMIT, whether
 * the statement commits on its own or in a transaction); the trigger armed by the mode fails the insert once.
 */
const FAULT_TRIGGERS = `
  CREATE SEQUENCE writ_test_fault;
  SELECT setval('writ_test_fault', 1);
  CREATE TABLE writ_test_fault_mode (mode text NOT NULL);
  INSERT INTO writ_test_fault_mode VALUES ('raise');
  CREATE FUNCTION writ_test_fault() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    fault text := (SELECT mode FROM writ_test_fault_mode);
  BEGIN
    IF (fault = 'terminate at commit') = (TG_WHEN = 'AFTER') THEN
      IF nextval('writ_test_fault') = 1 THEN
        IF fault <> 'raise' THEN
          PERFORM pg_terminate_backend(pg_backend_pid());
          -- The backend ends at its next check for interrupts: in this sleep at the latest.
          PERFORM pg_sleep(5);
        END IF;
        RAISE EXCEPTION 'injected fault while a trust record is written';
      END IF;
    END IF;
    RETURN NEW;
  END $$;
  CREATE TRIGGER writ_test_fault BEFORE INSERT ON writ_trust_records FOR EACH ROW EXECUTE FUNCTION writ_test_fault();
  CREATE CONSTRAINT TRIGGER writ_test_fault_at_commit AFTER INSERT ON writ_trust_records
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION writ_test_fault();`;

/** What the database holds for `id`: its replay entry, decision records, Trust Records and history rows. */
interface Stored {
  readonly replayEntries: number;
  readonly decisions: number;
  readonly records: number;
  readonly history: number;
}

if (unavailable !== null) {
  describe.skip(`Surface B on PostgreSQL: ${unavailable}`, () => {
    it("never consumes a businessTransactionId without its Trust Record", () => undefined);
  });
} else {
  let database: TestDatabase;
  let b: SurfaceB;

  beforeAll(async () => {
    database = await createTestDatabase();
    const url = (database.pool.options as { connectionString: string }).connectionString;
    b = await startSurfaceB({ env: { SERVICE_STORE: "postgres", SERVICE_DATABASE_URL: url } });
    // After the sidecar's migrations created the table.
    await database.pool.query(FAULT_TRIGGERS);
  });
  afterAll(async () => {
    await b?.close();
    await database?.drop();
  });

  /** The next insert of a Trust Record, from any session, fails with `fault`; later ones pass. */
  async function failNextRecordWrite(fault: Fault): Promise<void> {
    await database.pool.query("UPDATE writ_test_fault_mode SET mode = $1", [fault]);
    await database.pool.query("SELECT setval('writ_test_fault', 1, false)");
  }

  async function stored(id: string): Promise<Stored> {
    const fp = executionFingerprint(id);
    const count = async (sql: string, value: unknown): Promise<number> =>
      Number((await database.pool.query<{ n: string }>(sql, [value])).rows[0]!.n);
    return {
      replayEntries: await count("SELECT count(*) AS n FROM writ_replay WHERE fingerprint = $1", Buffer.from(fp, "utf8")),
      decisions: await count("SELECT count(*) AS n FROM writ_audit_records WHERE execution_fp = $1 AND kind = 'decision'", fp),
      records: await count("SELECT count(*) AS n FROM writ_trust_records WHERE id = $1", id),
      history: await count("SELECT count(*) AS n FROM writ_trust_history WHERE id = $1", id),
    };
  }

  describe("Surface B on PostgreSQL: a database fault while the Trust Record is written", () => {
    it.each([
      ["/execute", 200, "terminate"],
      ["/transactions", 201, "raise"],
      ["/execute", 200, "terminate at commit"],
    ] as const)(
      "POST %s (%i), a fault while the record is written (%s): 503, then the retry answers the record",
      async (path, created, fault) => {
        const body = businessTransaction();
        const id = body.businessTransactionId;
        await failNextRecordWrite(fault);

        const first = await b.call("POST", path, body);
        expect(first.status).toBe(503);
        // INVARIANT (no id consumed without its record): what committed, if anything, committed together.
        const afterFault = await stored(id);
        // Soft: a failure still shows what the retry gets.
        expect.soft(afterFault.replayEntries).toBe(afterFault.records);
        expect.soft(afterFault.decisions).toBe(afterFault.records);

        const retry = await b.call<TrustRecord>("POST", path, body);
        expect({ status: retry.status, id: retry.body.businessTransactionId }).toEqual({ status: created, id });
        expect(retry.body.verification.status).toBe("VERIFIED");
        const read = await b.call<TrustRecord>("GET", `/trust-records/${id}`);
        expect(read.status).toBe(200);
        expect(without(read.body, "verification", "receipt")).toEqual(without(retry.body, "verification", "receipt"));
        expect(await stored(id)).toEqual({ replayEntries: 1, decisions: 1, records: 1, history: 2 });

        // Used for good now: the next one is the replay it is.
        const again = await b.call("POST", path, body);
        expect(again.status).toBe(422);
        expect(again.body).toEqual({ error: "[INV-013@replay] execution already consumed: use a new executionId" });
      },
    );
  });

  describe("Surface B on PostgreSQL: one decision per id", () => {
    it("concurrent executions of one id: exactly one record, the others INV-013", async () => {
      const body = businessTransaction();
      const replies = await Promise.all(Array.from({ length: 8 }, () => b.call("POST", "/execute", body)));
      expect(replies.map((r) => r.status).sort()).toEqual([200, 422, 422, 422, 422, 422, 422, 422]);
      expect(await stored(body.businessTransactionId)).toEqual({ replayEntries: 1, decisions: 1, records: 1, history: 2 });
    });

    it("two sidecars on the database race one id: exactly one record, the others INV-013", async () => {
      const url = (database.pool.options as { connectionString: string }).connectionString;
      const other = await startSurfaceB({ env: { SERVICE_STORE: "postgres", SERVICE_DATABASE_URL: url } });
      try {
        const body = businessTransaction();
        const replies = await Promise.all(Array.from({ length: 8 }, (_, n) => (n % 2 ? b : other).call("POST", "/execute", body)));
        expect(replies.map((r) => r.status).sort()).toEqual([200, 422, 422, 422, 422, 422, 422, 422]);
        expect(await stored(body.businessTransactionId)).toEqual({ replayEntries: 1, decisions: 1, records: 1, history: 2 });
      } finally {
        await other.close();
      }
    });

    it("concurrent executions of distinct ids all succeed, each with its record", async () => {
      const bodies = Array.from({ length: 12 }, () => businessTransaction());
      const replies = await Promise.all(bodies.map((body) => b.call<TrustRecord>("POST", "/execute", body)));
      expect(replies.map((r) => r.status)).toEqual(bodies.map(() => 200));
      for (const body of bodies)
        expect(await stored(body.businessTransactionId)).toEqual({ replayEntries: 1, decisions: 1, records: 1, history: 2 });
    });

    it("an id used by Surface A's /evaluate first: 422 INV-013, nothing of Surface B stored", async () => {
      const id = randomUUID();
      const a = await b.running.call("POST", "/evaluate", {
        executionId: id,
        policyId: "conformance.transfer",
        policyVersion: "1.0.0",
        verifiedSignals: businessTransaction().signals,
      });
      expect(a.status).toBe(200);
      const refused = await b.call("POST", "/execute", businessTransaction({ businessTransactionId: id }));
      expect(refused.status).toBe(422);
      expect(await stored(id)).toEqual({ replayEntries: 1, decisions: 1, records: 0, history: 0 });
    });
  });
}
