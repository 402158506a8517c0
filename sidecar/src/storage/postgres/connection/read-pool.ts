/**
 * The pool of the read database (SERVICE_DATABASE_READ_URL, database-url.ts; docs/fleet.md, "Read replicas"), usually a
 * hot standby of the primary. The reads that scan the trail's history run on it, so an auditor's listing or export
 * does not load the database that takes the decisions: `GET /audit/decisions` and `GET /audit/security` (audit-store.ts),
 * `GET /audit/stats` when it counts the records table (the record log off), and `GET /audit/export`
 * (record-log-storage.ts `exportSession`).
 *
 * Everything else stays on the primary, because it must be fresh or it writes:
 * - `GET /audit/decisions/:executionId` (and Surface B's `GET /trust-records/:id`): a client that got a 503 reads it to
 *   learn whether its decision committed; a standby behind the primary would answer "not decided" for one that was.
 * - every write and what a write reads (replay transitions, Surface B records, sequencing, checkpoints, retention,
 *   taking over stale logs), and the audit log's probe (`audit_db`).
 * - the `/audit/log*` and `/audit/checkpoints*` routes and the proofs: small reads by key, and a proof combines several
 *   reads that must agree with the checkpoint a client was just given.
 *
 * A failure of the read database fails those reads alone: 503, logged as a failure "on the read database". No
 * fallback to the primary: the point of the replica is that a reader never loads the primary, and a replica that
 * is down would otherwise turn every history scan onto the primary at once, unseen. `audit_db` and readiness do not
 * follow it: the sidecar still decides and records; `/metrics` shows the read pool (`writ_postgres_read_pool_*`).
 */
import type pg from "pg";
import type { DatabaseConfig } from "../config.js";
import { createPool } from "./pool.js";

/** Added to what a statement on the read database does: its error (logged with the 503) names the database that failed. */
export const ON_READ_DATABASE = " on the read database (SERVICE_DATABASE_READ_URL)";

/**
 * A quarter of the primary's, at least one: history reads are few at a time (auditors, dashboards, exports), and an
 * export holds its connection for its whole length.
 */
export function readPoolSize(poolSize: number): number {
  return Math.max(1, Math.ceil(poolSize / 4));
}

/** The read database's pool: the primary's settings (timeouts, TLS in the URL's parameters) with its URL, smaller. */
export function createReadPool(database: DatabaseConfig, readUrl: string): pg.Pool {
  // An idle connection's error is the pool's to drop (and count, `writ_postgres_read_pool_errors_total`).
  return createPool({ ...database, url: readUrl, poolSize: readPoolSize(database.poolSize) }, () => undefined);
}
