/**
 * One transaction on one client of a pool, begun by its first statement: until then it holds no connection, so work
 * done before it (a policy bundle's first load, which claims the bundle's pin through the same pool) never waits
 * for a connection that this transaction holds. Its statements run one at a time on that client, in the order given.
 *
 * INVARIANT (committed only when asked): a transaction commits only in `commit`, which resolves once COMMIT is
 * acknowledged; `end` rolls back whatever was not committed and gives the client back. A COMMIT whose answer is lost
 * rejects (StoreUnavailableError, 503 at the HTTP edge), never resolves: the ambiguity of any commit over a network.
 */
import { StoreUnavailableError } from "@writ/runtime";
import type pg from "pg";
import { checkOut, query, type CheckedOutClient } from "./query.js";
import { statementUnderWay } from "./abandoned-statements.js";

export class LazyTransaction {
  readonly #pool: pg.Pool;
  readonly #what: string;
  #begun: Promise<CheckedOutClient> | null = null;
  #committed = false;
  #ended = false;

  /** `what` names the transaction in the errors it fails with. */
  constructor(pool: pg.Pool, what: string) {
    this.#pool = pool;
    this.#what = what;
  }

  /** The transaction's client: checked out, and the transaction begun, at the first call. */
  async client(): Promise<pg.PoolClient> {
    // A statement after COMMIT (or after `end`) would run outside the transaction, on its own.
    if (this.#committed || this.#ended) throw new Error(`${this.#what}: the transaction is over`);
    this.#begun ??= this.#begin();
    return (await this.#begun).client;
  }

  /**
   * The transaction as the one method of a pool that a store sending each statement through `pool.query(config)`
   * uses: each statement runs in the transaction.
   */
  queryable(): Pick<pg.Pool, "query"> {
    const run = async (config: pg.QueryConfig): Promise<pg.QueryResult> => (await this.client()).query(config);
    return { query: run as pg.Pool["query"] };
  }

  /** Commits what the transaction's statements wrote (nothing to do when none ran). */
  async commit(): Promise<void> {
    if (this.#begun === null) return;
    const { client } = await this.#begun;
    const result = await query(client, this.#what, "COMMIT");
    // A transaction that a failed statement aborted answers COMMIT with ROLLBACK, not with an error.
    if (result.command !== "COMMIT") throw new StoreUnavailableError(`${this.#what} failed: the transaction was rolled back`);
    this.#committed = true;
  }

  /**
   * Rolls back unless committed, and gives the client back: reused after a clean ROLLBACK or COMMIT, destroyed when
   * the ROLLBACK failed (the connection lost, or mid-protocol) or a statement is still under way. Never rejects.
   */
  async end(): Promise<void> {
    this.#ended = true;
    const begun = this.#begun;
    if (begun === null) return;
    this.#begun = null;
    const checkedOut = await begun.catch(() => null);
    // A transaction that never began gave its client back when BEGIN failed.
    if (checkedOut === null) return;
    // Never behind a statement still under way (a timed-out COMMIT waiting on a synchronous standby): destroyed now.
    const clean =
      this.#committed ||
      (!statementUnderWay(checkedOut.client) &&
        (await checkedOut.client.query("ROLLBACK").then(
          () => true,
          () => false,
        )));
    checkedOut.release(!clean);
  }

  async #begin(): Promise<CheckedOutClient> {
    const checkedOut = await checkOut(this.#pool, this.#what);
    try {
      await query(checkedOut.client, this.#what, "BEGIN");
      return checkedOut;
    } catch (error) {
      checkedOut.release(true);
      throw error;
    }
  }
}
