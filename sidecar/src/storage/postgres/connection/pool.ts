/**
 * The connection pool of a sidecar on PostgreSQL, sized and bounded from the configuration (docs/fleet.md, "Sizing the
 * pool" and "Timeouts", with why each limit): `max` connections, a connect timeout, and startup options on every
 * connection: `statement_timeout` (watched by the client too, `query_timeout` a little longer, for a server that stops
 * answering), `lock_timeout`, `idle_in_transaction_session_timeout` (what ends the session of a client lost mid-
 * transaction, holding its row locks) and `jit = off`. INVARIANT: between two statements of a transaction on the pool
 * the sidecar waits on nothing outside itself, only its own work of milliseconds, so the idle limit, seconds, ends only
 * transactions whose client is gone or stalled.
 * TLS settings pass through in the URL, as libpq reads them; several hosts or `target_session_attrs` make each new
 * connection walk the hosts (host-walk.ts) within the connect timeout. Failed connections are counted by the clients
 * (`CountingClient`); a statement abandoned under way has its backend canceled (abandoned-statements.ts).
 */
import pg from "pg";
import type { DatabaseConfig } from "../config.js";
import { connector } from "./host-walk.js";
import { cancelingClient } from "./abandoned-statements.js";
import type { PoolStats } from "./pool-stats.js";

/** The client gives up this long after the server's own statement timeout would have fired. */
export const CLIENT_TIMEOUT_MARGIN_MS = 1_000;

/** The startup option of every connection: no JIT compilation (see the header). */
const NO_JIT = "-c jit=off";

/** The failed connections of each pool `createPool` made. */
const failures = new WeakMap<pg.Pool, { count: number }>();

/**
 * A client of the pool that counts itself into `failed` once, the first time it fails: its connection attempt is
 * refused or times out (pg-pool then destroys its socket, and the attempt's callback has the error), or once open it
 * emits `error` (the connection lost or cut), or the server sends it a FATAL message (terminated, shutting down). The
 * last is counted apart: a FATAL that reaches a query fails it, pg-pool ends the client the failed query released, and
 * the socket's close then emits no `error`. Counting wraps `connect` and `emit` and listens to the connection's
 * messages: it adds no `error` listener, so an unhandled client error stays what it was (query.ts `checkOut`).
 */
function countingClient(failed: { count: number }, Base: typeof pg.Client): new (config?: pg.ClientConfig) => pg.Client {
  return class CountingClient extends Base {
    #counted = false;

    constructor(config?: pg.ClientConfig) {
      super(config);
      this.connection.on("errorMessage", (message: { severity?: string }) => {
        if (message.severity === "FATAL") this.#fail();
      });
    }

    #fail(): void {
      if (this.#counted) return;
      this.#counted = true;
      failed.count += 1;
    }

    override emit(event: string | symbol, ...args: unknown[]): boolean {
      if (event === "error") this.#fail();
      return super.emit(event, ...args);
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void;
    override connect(callback?: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): Promise<pg.Client> | void {
      if (callback === undefined) {
        return super.connect().catch((error: unknown) => {
          this.#fail();
          throw error;
        });
      }
      const answer = callback as (err: Error | null, c?: pg.Client) => void;
      super.connect((error: Error | null, client?: pg.Client) => {
        if (error) this.#fail();
        answer(error, client);
      });
    }
  };
}

export function createPool(database: DatabaseConfig, onIdleError: (error: Error) => void): pg.Pool {
  const failed = { count: 0 };
  const { Client, connectionString, walkMs } = connector(database.url, database.connectTimeoutMs);
  const pool = new pg.Pool({
    Client: countingClient(failed, cancelingClient(Client)) as unknown as new () => pg.ClientBase,
    connectionString,
    max: database.poolSize,
    connectionTimeoutMillis: walkMs + database.connectTimeoutMs,
    statement_timeout: database.statementTimeoutMs,
    query_timeout: database.statementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS,
    // Sent by pg as startup parameters, as the statement timeout is (never 0: the configuration's minimums are above it).
    lock_timeout: database.lockTimeoutMs,
    idle_in_transaction_session_timeout: database.idleInTransactionTimeoutMs,
    idleTimeoutMillis: 30_000,
    // TCP keepalive: a connection a network device dropped silently is found dead and replaced, not waited on.
    keepAlive: true,
    application_name: "writ-sidecar",
    options: NO_JIT,
  });
  // An idle client's error (the server restarting, a proxy cutting the connection) is emitted on the pool: without a
  // listener it would be an uncaught exception. The client is discarded; the next query connects again.
  pool.on("error", onIdleError);
  failures.set(pool, failed);
  return pool;
}

/** The pool's counts now (pool-stats.ts). */
export function poolStats(pool: pg.Pool): PoolStats {
  return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, errors: failures.get(pool)?.count ?? 0 };
}
