/**
 * What a start checks of the pool's database sessions (docs/fleet.md, "Poolers"): that they are what writ asks for,
 * which a pooler (PgBouncer) may undo silently; unfit sessions refuse the start (UnfitSessionsError), saying why.
 * - THE SETTINGS. A pooler may drop the startup parameters of pool.ts (`ignore_startup_parameters`), and the server's
 *   defaults (no timeout at all) then apply: the effective values (`pg_settings`) must be the ones asked for; the remedy
 *   is to set them for writ's role.
 * - NAMED PREPARED STATEMENTS (SERVICE_DATABASE_PREPARED_STATEMENTS on). In a pooler's transaction mode a named
 *   statement runs on server connections that never prepared it, unless the pooler prepares it itself. The probe:
 *   client A prepares and runs a statement; client B, in a transaction, takes the server connection A used if the pooler
 *   shares it; A runs its statement again. Not found: refused. Found: the pooler prepares it. Same server connection (no
 *   pooler, session mode): no answer, asked again PROBE_ROUNDS times.
 */
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { StoreUnavailableError } from "@writ/runtime";
import type pg from "pg";
import type { DatabaseConfig } from "../config.js";
import { createPool } from "./pool.js";
import { checkOut, query, type CheckedOutClient } from "./query.js";
import { UnfitSessionsError } from "./unfit-sessions.js";

const WHAT = "checking the database sessions";
/** How many times the prepared-statement probe is asked before a session that never moved counts as fit. */
const PROBE_ROUNDS = 3;
/**
 * How long A's second run may wait for a server connection before B's transaction ends anyway: a pooler with no other
 * free server connection (a pool of 2, one the sidecar's own session holds) makes A wait for B's.
 */
const PROBE_WAIT_MS = 1_000;
/** SQLSTATE: the prepared statement does not exist (26000), or already exists on a shared server connection (42P05). */
const STATEMENT_LOST = new Set(["26000", "42P05"]);

/**
 * Checks on a pool of its own, of two connections whatever SERVICE_DATABASE_POOL_SIZE (the probe holds two at once),
 * made as the sidecar's pool is, and ended before it returns.
 * @throws UnfitSessionsError; StoreUnavailableError when the database fails meanwhile
 */
export async function checkSessions(database: DatabaseConfig): Promise<void> {
  const pool = createPool({ ...database, poolSize: 2 }, () => undefined);
  try {
    await checkOn(pool, database);
  } finally {
    await pool.end().catch(() => undefined);
  }
}

async function checkOn(pool: pg.Pool, database: DatabaseConfig): Promise<void> {
  await checkSettings(pool, database);
  if (database.preparedStatements !== false && !(await namedStatementsKept(pool))) {
    throw new UnfitSessionsError(
      "named prepared statements do not survive on this database's connections: a connection pooler runs each transaction on whichever server connection is free (PgBouncer with pool_mode = transaction, before 1.21 or with max_prepared_statements = 0), and writ's statements would fail on server connections that never prepared them; set SERVICE_DATABASE_PREPARED_STATEMENTS=off (statements are then planned at each call), or use pool_mode = session, or PgBouncer 1.21 or later with max_prepared_statements > 0",
    );
  }
}

/** The settings every connection asks for (pool.ts), with their values as `pg_settings` shows them (ms, on/off). */
function expectedSettings(database: DatabaseConfig): ReadonlyMap<string, string> {
  return new Map([
    ["statement_timeout", String(database.statementTimeoutMs)],
    ["lock_timeout", String(database.lockTimeoutMs)],
    ["idle_in_transaction_session_timeout", String(database.idleInTransactionTimeoutMs)],
    ["jit", "off"],
  ]);
}

async function checkSettings(pool: pg.Pool, database: DatabaseConfig): Promise<void> {
  const expected = expectedSettings(database);
  const { rows } = await query<{ name: string; setting: string; role: string; database: string }>(
    pool,
    WHAT,
    `SELECT name, setting, quote_ident(current_user) AS role, quote_ident(current_database()) AS database
     FROM pg_settings WHERE name = ANY($1::text[]) ORDER BY name`,
    [[...expected.keys()]],
  );
  const wrong = rows.filter((r) => expected.get(r.name) !== r.setting);
  if (wrong.length === 0) return;
  const { role, database: name } = rows[0]!;
  const valueOf = (name: string, value: string): string => (name === "jit" ? value : `${value}ms`);
  throw new UnfitSessionsError(
    `the database sessions do not have the settings writ asked for: ${wrong
      .map((r) => `${r.name} is ${valueOf(r.name, r.setting)}, not ${valueOf(r.name, expected.get(r.name)!)}`)
      .join(
        ", ",
      )}; a connection pooler dropped them (PgBouncer's ignore_startup_parameters), and without them a lost client's locks are held and a statement or lock wait is never cut short; set them for writ's role on the server: ${wrong
      .map((r) => `ALTER ROLE ${role} IN DATABASE ${name} SET ${r.name} = '${valueOf(r.name, expected.get(r.name)!)}';`)
      .join(
        " ",
      )} (the values of SERVICE_DATABASE_STATEMENT_TIMEOUT_MS, SERVICE_DATABASE_LOCK_TIMEOUT_MS and SERVICE_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS), then have the pooler open its server connections anew (PgBouncer: RECONNECT in its admin console)`,
  );
}

/** The header's probe: false when a named statement was not found on another server connection. */
async function namedStatementsKept(pool: pg.Pool): Promise<boolean> {
  const a = await checkOut(pool, WHAT);
  let b: CheckedOutClient | null = null;
  // A name of its own: nothing else prepares it, and the clients are destroyed afterwards (their sessions hold it).
  const statement = { name: `writ_probe_${randomBytes(8).toString("hex")}`, text: "SELECT pg_backend_pid() AS pid" };
  try {
    b = await checkOut(pool, WHAT);
    for (let round = 0; round < PROBE_ROUNDS; round++) {
      const first = await pidOf(a.client, statement);
      if (first === null) return false;
      await query(b.client, WHAT, "BEGIN");
      await query(b.client, WHAT, "SELECT pg_backend_pid()");
      const again = pidOf(a.client, statement);
      // Handled now: it may fail before it is awaited below.
      again.catch(() => undefined);
      await Promise.race([again.catch(() => undefined), sleep(PROBE_WAIT_MS)]);
      await query(b.client, WHAT, "ROLLBACK");
      const moved = await again;
      if (moved === null) return false;
      if (moved !== first) return true;
    }
    return true;
  } finally {
    a.release(true);
    b?.release(true);
  }
}

/** The server process that ran `statement` on `client`; null when the statement was lost (STATEMENT_LOST). */
async function pidOf(client: pg.PoolClient, statement: { readonly name: string; readonly text: string }): Promise<number | null> {
  try {
    const { rows } = await client.query<{ pid: number }>(statement);
    return rows[0]!.pid;
  } catch (error) {
    if (STATEMENT_LOST.has(String((error as { code?: unknown }).code))) return null;
    throw new StoreUnavailableError(`${WHAT} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
