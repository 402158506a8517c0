/**
 * The PostgreSQL audit trail filled in bulk for tests at volume: records written by SQL (`generate_series`) exactly as
 * the sidecar writes them (the record's JSON text, its pending row with its true leaf hash `sha256(0x00 || kind "\n"
 * || text)`, or no pending row for a trail written with the record log off), then sequenced and checkpointed by the
 * store itself. Times start at `at(0)` (support.ts) and advance by `stepMs` per record.
 */
import { executionFingerprint } from "@writ/runtime";
import type { CheckpointSigner } from "../../../src/audit/record-log/log-storage.js";
import { RECORDS_TABLE } from "../../../src/storage/postgres/tables.js";
import type pg from "pg";
import { securityEventRow } from "../../../src/audit/security-event.js";
import type { DecisionStatus } from "../../../src/audit/types.js";
import type { PostgresLogStorage } from "../../../src/storage/postgres/record-log-storage.js";
import { at, decision } from "../../audit/support.js";

/** Rows per seeding statement. */
const CHUNK = 50_000;
const DAY0 = Date.parse(at(0));
const STATUSES: readonly DecisionStatus[] = ["approved", "rejected", "pending_override"];
/** How many policies the decisions are spread over: `policy-0` … `policy-19`. */
export const POLICIES = 20;

/** `text` as an SQL string literal. */
function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

const ISO = (ms: string): string => `to_char(to_timestamp(${ms} / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const LEAF = (kind: string, body: string): string => `sha256('\\x00'::bytea || convert_to(${kind} || E'\\n' || ${body}, 'UTF8'))`;
/** runtime `executionFingerprint` of `id` (an id with no character JSON escapes). */
const FINGERPRINT = (id: string): string =>
  `encode(sha256(convert_to('{"domain":"writ.execution-fingerprint.v1","executionId":"' || ${id} || '"}', 'UTF8')), 'hex')`;

export interface Seeding {
  /** The first record's number: decision `vol-<n>` at `at(n * stepMs)`. */
  readonly from: number;
  readonly count: number;
  readonly stepMs: number;
  /** The log whose pending set the records enter; null: written with the record log off. */
  readonly logId: string | null;
}

/** In chunks of CHUNK numbers from `from`: `[first, last]` of each. */
function* chunks(seeding: Seeding): Generator<[number, number]> {
  for (let first = seeding.from; first < seeding.from + seeding.count; first += CHUNK)
    yield [first, Math.min(first + CHUNK, seeding.from + seeding.count) - 1];
}

/**
 * Decisions `vol-<n>` of policy `policy-<n % POLICIES>` and status STATUSES[n % 3], in the records table (with their
 * pending rows when `logId` is set).
 */
export async function seedDecisions(pool: pg.Pool, seeding: Seeding): Promise<void> {
  const templates = STATUSES.map((status) => {
    const text = JSON.stringify(decision({ executionId: "@ID@", recordedAt: "@AT@", policyId: "@POLICY@", status }));
    return `replace(replace(replace(replace(${literal(text)}, ${literal(executionFingerprint("@ID@"))}, fp), '@ID@', id), '@AT@', ${ISO("t")}), '@POLICY@', policy)`;
  });
  for (const [first, last] of chunks(seeding)) {
    await pool.query(
      `WITH g AS (SELECT n, 'vol-' || n AS id, $3::bigint + n * $4::bigint AS t, 'policy-' || (n % ${POLICIES}) AS policy FROM generate_series($1::bigint, $2::bigint) AS n),
         f AS (SELECT g.*, ${FINGERPRINT("id")} AS fp FROM g),
         b AS (SELECT f.*, (ARRAY[${STATUSES.map(literal).join(", ")}])[(n % 3)::int + 1] AS status,
                 CASE n % 3 ${templates.map((t, i) => `WHEN ${i} THEN ${t}`).join(" ")} END AS body FROM f),
         recorded AS (INSERT INTO ${RECORDS_TABLE} (execution_fp, kind, recorded_at, policy_id, status, body) SELECT fp, 'decision', t, policy, status, body FROM b)
       ${pendedFrom("b", "'decision'", "fp", "t", seeding.logId)}`,
      [first, last, DAY0, seeding.stepMs],
    );
  }
}

/** Verifications of `vol-<n>` at `at(n * stepMs)`. */
export async function seedVerifications(pool: pg.Pool, seeding: Seeding): Promise<void> {
  const text = JSON.stringify({ executionId: "@ID@", valid: true, checks: { signature: "verified" }, errors: [], recordedAt: "@AT@" });
  await seedSeqRecords(
    pool,
    seeding,
    "writ_audit_verifications",
    "recorded_at",
    "verification",
    `replace(replace(${literal(text)}, '@ID@', 'vol-' || n), '@AT@', ${ISO("t")})`,
  );
}

/** Security events (aggregated rows, as the limiter writes them) at `at(n * stepMs)`. */
export async function seedSecurityEvents(pool: pg.Pool, seeding: Seeding): Promise<void> {
  const {
    id: _id,
    at: _at,
    ...stored
  } = securityEventRow({ type: "authentication_failed", method: "GET", path: "/audit/stats", ip: "@IP@", detail: "wrong key" }, "", "", 3);
  await seedSeqRecords(
    pool,
    seeding,
    "writ_audit_security",
    "at",
    "security",
    `replace(${literal(JSON.stringify(stored))}, '@IP@', '10.0.' || (n % 250) || '.1')`,
  );
}

async function seedSeqRecords(pool: pg.Pool, seeding: Seeding, table: string, time: string, kind: string, body: string): Promise<void> {
  for (const [first, last] of chunks(seeding)) {
    await pool.query(
      `WITH g AS (SELECT n, $3::bigint + n * $4::bigint AS t FROM generate_series($1::bigint, $2::bigint) AS n),
         recorded AS (INSERT INTO ${table} (${time}, body) SELECT t, ${body} FROM g ORDER BY n RETURNING seq, ${time} AS t, body)
       ${pendedFrom("recorded", literal(kind), "seq::text", "t", seeding.logId)}`,
      [first, last, DAY0, seeding.stepMs],
    );
  }
}

/** The statement's last part: the pending rows of `rows` for `logId`, or nothing (the record log off). */
function pendedFrom(rows: string, kind: string, ref: string, time: string, logId: string | null): string {
  if (logId === null) return "SELECT 1";
  return `INSERT INTO writ_audit_log_pending (log_id, kind, ref, leaf, pended_at) SELECT ${literal(logId)}, ${kind}, ${ref}, ${LEAF(kind, "body")}, ${time} FROM ${rows}`;
}

/** Sequences every pending record of `storage`'s log, signing a checkpoint every `every` entries (and at the end). */
export async function sequenceAll(storage: PostgresLogStorage, signer: CheckpointSigner, every: number): Promise<void> {
  while ((await storage.sequence(storage.logId, every)) > 0) await storage.checkpoint(storage.logId, signer, new Date());
}
