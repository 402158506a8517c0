/**
 * The decision counts of `/audit/stats` on PostgreSQL (storage/postgres/decision-counts.ts) are the trail's own: after
 * any sequence of decisions written with the record log on or off, sequencing, adoption, retention by age or count,
 * a decision deleted by hand and overrides, `total_decisions` and `decisions_today` read from the counters equal what
 * counting the records table answers.
 */
import { confirmationKey, executionFingerprint } from "@writ/runtime";
import { PostgresReplayStore } from "../../../src/storage/postgres/replay-store.js";
import { RECORDS_TABLE } from "../../../src/storage/postgres/tables.js";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { DAY_MS } from "../../../src/audit/retention.js";
import { PostgresAuditLog } from "../../../src/storage/postgres/audit-log.js";
import { migrate } from "../../../src/storage/postgres/migrations.js";
import { PostgresLogStorage } from "../../../src/storage/postgres/record-log-storage.js";
import { createTestDatabase, postgresUnavailable } from "../../../../test/support/postgres.js";
import { MANUAL_CHECKPOINTS } from "../../audit/record-log-contract.js";
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

type Step =
  | { readonly op: "decide"; readonly logged: 0 | 1 | null; readonly day: number; readonly ms: number; readonly escalate: boolean }
  | { readonly op: "sequence"; readonly log: 0 | 1; readonly max: number }
  | { readonly op: "adopt" }
  | { readonly op: "prune"; readonly maxAgeDays: number | null; readonly maxRecords: number | null }
  | { readonly op: "delete"; readonly pick: number };

/** `logged`: into log a or b, or with the record log off (null). */
const decideArb = fc.record({
  op: fc.constant("decide" as const),
  logged: fc.constantFrom(0 as const, 1 as const, null),
  day: fc.integer({ min: 0, max: 3 }),
  ms: fc.integer({ min: 0, max: DAY_MS - 1 }),
  escalate: fc.boolean(),
});
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: decideArb },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("sequence" as const),
      log: fc.constantFrom(0 as const, 1 as const),
      max: fc.integer({ min: 1, max: 6 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("adopt" as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("prune" as const),
      maxAgeDays: fc.option(fc.integer({ min: 1, max: 4 }), { nil: null }),
      maxRecords: fc.option(fc.integer({ min: 0, max: 8 }), { nil: null }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("delete" as const), pick: fc.nat() }) },
);

if (unavailable !== null) {
  describe.skip(`decision counts on PostgreSQL: ${unavailable}`, () => {
    it("equal counting the records table", () => undefined);
  });
} else {
  const database = await createTestDatabase();
  afterAll(() => database.drop());
  await migrate(database.pool);
  const { pool } = database;

  describe("decision counts on PostgreSQL", () => {
    it("equal counting the records table after any sequence of writes, sequencing, adoption, retention and deletes", async () => {
      const logs = ["counts-a", "counts-b"] as const;
      const storages = logs.map((id) => new PostgresLogStorage(pool, id));
      const replays = [...logs.map((logId) => new PostgresReplayStore(pool, { recordLog: { logId } })), new PostgresReplayStore(pool)];
      // Counting the table (the record log off): the reference.
      const scanned = new PostgresAuditLog(pool);
      let serial = 0;

      /** A decision; escalated ones get an override and a confirmation, which share its key and are never counted. */
      const decide = async (step: Extract<Step, { op: "decide" }>): Promise<void> => {
        const executionId = `count-${serial++}`;
        const body = decision({
          executionId,
          recordedAt: at(step.day * DAY_MS + step.ms),
          status: step.escalate ? "pending_override" : "approved",
        });
        const now = Date.parse(body.recordedAt);
        const replay = replays[step.logged ?? 2]!;
        const consumed = await replay.consume(executionFingerprint(executionId), {
          now,
          ...(step.escalate ? { context: { pending: true } } : {}),
          record: { kind: "decision", body },
        });
        expect(consumed.ok).toBe(true);
        if (!step.escalate || !consumed.ok) return;
        const override = {
          executionId,
          approved: true,
          approvedBy: "ana",
          approverRole: "ops",
          reason: "ok",
          overrideId: `o-${executionId}`,
          record: {},
          recordedAt: body.recordedAt,
        };
        expect(
          (
            await replay.resolveOverride(consumed.entry.fingerprint, consumed.entry.token, true, {
              now,
              record: { kind: "override", body: override as never },
            })
          ).ok,
        ).toBe(true);
        const confirmation = { executionId, match: true, proof: { executionId, signature: "sig" }, recordedAt: body.recordedAt };
        expect(
          (await replay.consume(confirmationKey(executionId), { now, record: { kind: "confirmation", body: confirmation as never } })).ok,
        ).toBe(true);
      };

      const apply = async (step: Step, now: Date): Promise<void> => {
        if (step.op === "decide") return decide(step);
        if (step.op === "sequence") return void (await storages[step.log]!.sequence(logs[step.log], step.max));
        if (step.op === "adopt") return void (await storages[1]!.adoptUnlogged(now.getTime()));
        if (step.op === "prune") {
          const keep = { maxAgeMs: null, maxRecords: null };
          const decisions = { maxAgeMs: step.maxAgeDays === null ? null : step.maxAgeDays * DAY_MS, maxRecords: step.maxRecords };
          return void (await new PostgresAuditLog(pool, { retention: { decisions, verifications: keep, security: keep } }).prune(now));
        }
        // A decision deleted by hand.
        const { rows } = await pool.query<{ fp: string }>(
          `SELECT execution_fp AS fp FROM ${RECORDS_TABLE} WHERE kind = 'decision' ORDER BY execution_fp`,
        );
        if (rows.length > 0)
          await pool.query(`DELETE FROM ${RECORDS_TABLE} WHERE execution_fp = $1 AND kind = 'decision'`, [
            rows[step.pick % rows.length]!.fp,
          ]);
      };

      try {
        await fc.assert(
          fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 30 }), fc.integer({ min: 0, max: 4 }), async (steps, today) => {
            await pool.query(`TRUNCATE ${TABLES.join(", ")}`);
            const now = new Date(Date.parse(at(today * DAY_MS + 1_000)));
            // Counted, with the record log on: its checkpointer sequences log a meanwhile, every 200 ms.
            const counted = new PostgresAuditLog(pool, { recordLog: { storage: storages[0]!, checkpoints: MANUAL_CHECKPOINTS } });
            try {
              for (const step of steps) {
                await apply(step, now);
                const [mine, reference] = [await counted.stats(now), await scanned.stats(now)];
                expect({ total: mine.total_decisions, today: mine.decisions_today }, JSON.stringify(step)).toEqual({
                  total: reference.total_decisions,
                  today: reference.decisions_today,
                });
              }
            } finally {
              await counted.close();
            }
          }),
          { numRuns: 25 },
        );
      } finally {
        await scanned.close();
        await Promise.all(replays.map((r) => r.close()));
      }
    }, 300_000);
  });
}
