/**
 * Every statement of the sidecar's PostgreSQL stores goes through `query`: a database failure (unreachable, restarting,
 * a statement timeout, a connection lost during COMMIT) becomes StoreUnavailableError, which the HTTP edge answers 503
 * (runtime `answerOf`), never a 500 and never a success.
 */
import { StoreUnavailableError } from "@writ/runtime";
import type pg from "pg";
import { statementUnderWay } from "./abandoned-statements.js";

export async function query<R extends pg.QueryResultRow>(
  db: pg.Pool | pg.PoolClient,
  what: string,
  text: string,
  values: readonly unknown[] = [],
): Promise<pg.QueryResult<R>> {
  try {
    return await db.query<R>(text, values as unknown[]);
  } catch (error) {
    throw unavailable(what, error);
  }
}

function unavailable(what: string, error: unknown): StoreUnavailableError {
  return new StoreUnavailableError(`${what} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
}

/** A client taken from the pool; `release(destroy)` gives it back, or destroys it (its session may be broken). */
export interface CheckedOutClient {
  readonly client: pg.PoolClient;
  /** The error the connection emitted while checked out, if any: the client must then be destroyed. */
  broken(): unknown;
  release(destroy: boolean): void;
}

/**
 * A client of `pool`, guarded while checked out. INVARIANT (no unhandled client error): a checked-out client has no
 * 'error' listener of the pool's, and a server that restarts or cuts the connection makes it emit one, which would end
 * the process; here it is kept (`broken`), and the statement under way fails with it anyway.
 */
export async function checkOut(pool: pg.Pool, what: string): Promise<CheckedOutClient> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw unavailable(what, error);
  }
  let broken: unknown = undefined;
  const onError = (error: unknown): void => {
    broken ??= error;
  };
  client.on("error", onError);
  return {
    client,
    broken: () => broken,
    release(destroy) {
      client.removeListener("error", onError);
      client.release(destroy || broken !== undefined ? true : undefined);
    },
  };
}

/**
 * Runs `body` in one transaction on one client of `pool`: COMMIT when it returns, ROLLBACK when it throws. Resolves only
 * after COMMIT is acknowledged; a COMMIT whose answer is lost rejects (StoreUnavailableError), never resolves.
 */
export async function transaction<T>(pool: pg.Pool, what: string, body: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const { client, release } = await checkOut(pool, what);
  let failed = false;
  try {
    await query(client, what, "BEGIN");
    const result = await body(client);
    await query(client, what, "COMMIT");
    return result;
  } catch (error) {
    failed = true;
    // Not behind a statement still under way (a timed-out COMMIT waiting on a synchronous standby): destroyed now,
    // its backend canceled (abandoned-statements.ts), the server rolls back what did not commit.
    if (!statementUnderWay(client)) await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    // A client whose transaction failed may be mid-protocol: it is destroyed rather than reused.
    release(failed);
  }
}
