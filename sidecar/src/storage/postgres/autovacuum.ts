/**
 * What a database without autovacuum does to the sidecar's tables (docs/running-for-years.md, "PostgreSQL"): the record
 * log's pending set (`writ_audit_log_pending`) is a queue, a row inserted per record and deleted when it is sequenced,
 * and the replay and trail tables lose rows to sweeps and retention. Their dead rows stay until a VACUUM; with none,
 * each sequencing round's `DELETE … ORDER BY seq LIMIT` walks every dead entry of the queue's index first, so the log
 * slows as the count of records ever sequenced grows (docs/benchmarks.md, "At 10 million"). The sidecar cannot vacuum
 * for the operator (VACUUM needs the tables' owner and runs outside a transaction), so it says so at start.
 */
import type pg from "pg";
import { query } from "./connection/query.js";

export const AUTOVACUUM_OFF =
  "PostgreSQL's autovacuum is off: the record log's pending set (writ_audit_log_pending) and the replay and audit tables keep their dead rows, and sequencing slows as they grow; turn autovacuum on, or VACUUM those tables regularly (docs/running-for-years.md)";

/** The warning for the database `pool` reaches when its autovacuum is off; null when it is on. */
export async function autovacuumWarning(pool: pg.Pool): Promise<string | null> {
  const { rows } = await query<{ autovacuum: string }>(
    pool,
    "reading the autovacuum setting",
    "SELECT current_setting('autovacuum') AS autovacuum",
  );
  return rows[0]?.autovacuum === "off" ? AUTOVACUUM_OFF : null;
}
