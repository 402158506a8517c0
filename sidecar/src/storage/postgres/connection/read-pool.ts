/**
 * The pool of the read database (SERVICE_DATABASE_READ_URL, database-url.ts), usually a hot standby of the primary. The
 * reads that scan the trail's history run on it, so an auditor's listing or export does not load the database that
 * takes the decisions: `GET /audit/decisions`, `GET /audit/security` (audit-store.ts), `GET /audit/stats` when it
 * counts the records table, and `GET /audit/export` (record-log-storage.ts `exportSession`).
 *
 * Everything else stays on the primary, because it must be fresh or it writes: a decision read by id (a client that got
 * a 503 learns whether it committed), every write and what a write reads, the probes, and the log, checkpoint and proof
 * routes (small reads that must agree with a checkpoint just given); the table: docs/fleet.md, "Read replicas". A
 * failure of the read database fails those reads alone (503), with no fallback to the primary, which a replica that is
 * down would otherwise load with every history scan at once, unseen.
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
