/**
 * The filter columns of the audit trail on PostgreSQL (docs/audit.md, "What a read checks"): `status` and `policy_id`
 * of `writ_audit_records` are what filtered queries find decisions by, kept beside each record's body and outside the
 * record log's proof. A real sidecar on a fresh database decides; then the rows are edited with SQL, as someone with
 * write access to the database could:
 *
 * - a column edited so that a filter finds a decision its record does not match: that query answers 500
 *   AUDIT_TRAIL_DISAGREES, and the export names the columns (`indexed`), which `writ audit verify` fails;
 * - a column edited so that a filter no longer finds the decision: the query cannot tell, the export and its
 *   verification do;
 * - a body forged to disagree with its attestation: every read of it answers 500, and verification fails it.
 *
 * Each edit is undone after its checks, and the untouched trail reads and verifies before and after.
 */
import { ExportVerifier, createTrustRoot, decisionAttestationSigned, executionFingerprint, type ExportReport } from "@writ/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RECORDS_TABLE } from "../../../src/storage/postgres/tables.js";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../../test/support/postgres.js";
import { TRANSFER_SIGNALS } from "../../support/policies.js";
import { AUTH, evaluate, publicKeyOf, startE2eSidecar, type E2eSidecar } from "../../support/e2e.js";
import { checkExport } from "../../support/export-check.js";
import { databaseUrlOf } from "../../fleet/support.js";

const unavailable = await postgresUnavailable();

if (unavailable !== null) {
  describe.skip(`the audit trail's filter columns: ${unavailable}`, () => {
    it("detects edited filter columns", () => undefined);
  });
} else {
  let database: TestDatabase;
  let s: E2eSidecar;
  let approved: string;
  let rejected: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    s = await startE2eSidecar({ SERVICE_STORE: "postgres", SERVICE_DATABASE_URL: databaseUrlOf(database.pool) });
    approved = (await evaluate(s, TRANSFER_SIGNALS.approved)).body.attestation.executionId;
    rejected = (await evaluate(s, TRANSFER_SIGNALS.rejected)).body.attestation.executionId;
    await evaluate(s, TRANSFER_SIGNALS.pending);
  });
  afterAll(async () => {
    await s?.close();
    await database?.drop();
  });

  const list = (query: string) =>
    s.send<{ executionId: string }[] | { error: string }>("GET", `/audit/decisions?${query}`, { headers: AUTH });

  /** `sql` on the decision record of `executionId`, undone after `checks`. */
  async function edited(executionId: string, set: string, checks: () => Promise<void>): Promise<void> {
    const where = `WHERE kind = 'decision' AND execution_fp = $1`;
    const fp = executionFingerprint(executionId);
    const { rows } = await database.pool.query<{ status: string; policy_id: string; body: string }>(
      `SELECT status, policy_id, body FROM ${RECORDS_TABLE} ${where}`,
      [fp],
    );
    expect(rows).toHaveLength(1);
    await database.pool.query(`UPDATE ${RECORDS_TABLE} SET ${set} ${where}`, [fp]);
    try {
      await checks();
    } finally {
      await database.pool.query(`UPDATE ${RECORDS_TABLE} SET status = $2, policy_id = $3, body = $4 ${where}`, [
        fp,
        rows[0]!.status,
        rows[0]!.policy_id,
        rows[0]!.body,
      ]);
    }
  }

  /** The whole export, checked as `writ audit verify --key` checks it. */
  async function verifiedExport(): Promise<ExportReport> {
    const text = (await s.send<string>("GET", "/audit/export", { headers: AUTH })).text;
    const key = await publicKeyOf(s);
    return checkExport(text, new ExportVerifier([key], decisionAttestationSigned(createTrustRoot("check", [key])))).report;
  }

  const ids = (reply: { body: unknown }) => (reply.body as { executionId: string }[]).map((r) => r.executionId);

  it("the untouched trail: every filter answers, and the export verifies", async () => {
    for (const query of ["decision=approved", "decision=rejected", "decision=pending_override", `policyId=conformance.transfer`])
      expect((await list(query)).status).toBe(200);
    expect(ids(await list("decision=approved"))).toEqual([approved]);
    expect(await verifiedExport()).toMatchObject({ valid: true, failures: [] });
  });

  it("a status column edited into a filter: that query answers 500 AUDIT_TRAIL_DISAGREES, and the export fails verification", async () => {
    await edited(approved, "status = 'rejected'", async () => {
      const reply = await list("decision=rejected");
      expect(reply.status).toBe(500);
      expect(reply.body).toEqual({ error: "audit trail disagrees with its own records" });
      // Out of the filter it belonged to: that query cannot tell.
      expect(ids(await list("decision=approved"))).toEqual([]);
      const report = await verifiedExport();
      expect(report.valid).toBe(false);
      expect(report.failures[0]?.reason).toMatch(
        /^the decision record at position \d+: its store keeps it for filtered queries as status rejected and policy conformance\.transfer, not as the record states \(status approved/,
      );
    });
    expect(await verifiedExport()).toMatchObject({ valid: true });
  });

  it("a policy_id column edited: the query by the new policy answers 500, and the export fails verification", async () => {
    await edited(rejected, "policy_id = 'conformance.other'", async () => {
      expect((await list("policyId=conformance.other")).status).toBe(500);
      expect(ids(await list("policyId=conformance.transfer"))).not.toContain(rejected);
      const report = await verifiedExport();
      expect(report.failures.map((f) => f.reason)).toEqual([expect.stringContaining("as status rejected and policy conformance.other")]);
    });
  });

  it("a body forged to disagree with its attestation: every read of it answers 500, and the export fails verification", async () => {
    await edited(approved, `body = replace(body, '"status":"approved"', '"status":"rejected"'), status = 'rejected'`, async () => {
      expect((await s.send("GET", `/audit/decisions/${approved}`, { headers: AUTH })).status).toBe(500);
      expect((await list("limit=10")).status).toBe(500);
      const report = await verifiedExport();
      expect(report.valid).toBe(false);
      // Its leaf no longer matches the forged body; the record check names the disagreement as well.
      expect(report.failures.map((f) => f.reason).join("\n")).toMatch(/is not the one logged there/);
    });
    expect((await s.send("GET", `/audit/decisions/${approved}`, { headers: AUTH })).status).toBe(200);
  });
}
