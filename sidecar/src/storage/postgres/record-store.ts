/**
 * Surface B's records (trust-records/record-store.ts) on PostgreSQL, shared by every sidecar of a fleet (tables:
 * migrations/0001-replay-audit-trust.sql). `create` is ONE statement, a data-modifying CTE inserting the record
 * (`ON CONFLICT (id) DO NOTHING`) and, only for the row it inserted, its first verification and receipt: of racing
 * creates of one id exactly one resolves true, and no record exists without them. Appends are ordered by `seq`, so
 * racing appends never collide; `ids` pages by `seq`, taken at insert, not commit: stable once concurrent creates commit.
 * `inOneTransaction`: Surface B's decision and its record in ONE transaction (docs/fleet.md, "Failure behaviour"): a
 * replay store on the transaction's client consumes the id with the fleet's statements, then `create` inserts the
 * record and commits; a fault before COMMIT rolls all of it back, so the id stays free. The transaction begins at the
 * decision's statement (lazy-transaction.ts) and holds its connection while the record is sealed, verified and
 * receipted; concurrent executions of one id queue on its row lock. Failures are StoreUnavailableError (query.ts).
 */
import { parseStrictJson, type ReplayStore } from "@writ/runtime";
import { PostgresReplayStore, type PostgresReplayStoreOptions } from "./replay-store.js";
import type pg from "pg";
import { isRecordId } from "../../trust-records/ids.js";
import { storedRecord, type ExecutionUnit, type StoredRecord, type TrustRecordStore } from "../../trust-records/record-store.js";
import type { Receipt, SealedRecord, Verification } from "../../trust-records/types.js";
import { LazyTransaction } from "./connection/lazy-transaction.js";
import { query } from "./connection/query.js";

type HistoryKind = "verification" | "receipt";

export interface PostgresTrustRecordStoreOptions {
  /**
   * The options the sidecar's replay store on this database was made with (its tables, its record log): given, the
   * store offers `inOneTransaction`, whose decisions are written exactly as that store writes them.
   */
  readonly replay?: PostgresReplayStoreOptions;
}

export class PostgresTrustRecordStore implements TrustRecordStore {
  readonly #pool: pg.Pool;
  readonly inOneTransaction?: <T>(work: (unit: ExecutionUnit) => Promise<T>) => Promise<T>;

  /** Uses `pool` (its owner ends it); the schema must be migrated (migrations.ts). */
  constructor(pool: pg.Pool, options: PostgresTrustRecordStoreOptions = {}) {
    this.#pool = pool;
    const replay = options.replay;
    if (replay !== undefined) this.inOneTransaction = (work) => this.#inOneTransaction(replay, work);
  }

  create(record: SealedRecord, verification: Verification, receipt: Receipt): Promise<boolean> {
    return createOn(this.#pool, record, verification, receipt);
  }

  async record(id: string): Promise<StoredRecord | undefined> {
    if (!isRecordId(id)) return undefined;
    const { rows } = await query<{ body: string }>(
      this.#pool,
      "reading a trust record",
      "SELECT body FROM writ_trust_records WHERE id = $1",
      [id],
    );
    return storedRecord(rows[0]?.body);
  }

  appendVerification(id: string, verification: Verification): Promise<void> {
    return this.#append(id, "verification", verification);
  }

  appendReceipt(id: string, receipt: Receipt): Promise<void> {
    return this.#append(id, "receipt", receipt);
  }

  latestVerification(id: string): Promise<unknown> {
    return this.#latest(id, "verification");
  }

  latestReceipt(id: string): Promise<unknown> {
    return this.#latest(id, "receipt");
  }

  async count(): Promise<number> {
    const { rows } = await query<{ n: string }>(this.#pool, "counting trust records", "SELECT count(*) AS n FROM writ_trust_records");
    return Number(rows[0]!.n);
  }

  async ids(offset: number, limit: number): Promise<string[]> {
    const { rows } = await query<{ id: string }>(
      this.#pool,
      "listing trust records",
      "SELECT id FROM writ_trust_records ORDER BY seq LIMIT $1 OFFSET $2",
      [limit, offset],
    );
    return rows.map((row) => row.id);
  }

  async #inOneTransaction<T>(replay: PostgresReplayStoreOptions, work: (unit: ExecutionUnit) => Promise<T>): Promise<T> {
    const transaction = new LazyTransaction(this.#pool, "executing a business transaction");
    try {
      return await work({
        replay: replayIn(transaction, replay),
        create: async (record, verification, receipt) => {
          const created = await createOn(await transaction.client(), record, verification, receipt);
          // Not created: `end` rolls the decision back with the rest (the id's existing record keeps it used).
          if (created) await transaction.commit();
          return created;
        },
      });
    } finally {
      await transaction.end();
    }
  }

  async #append(id: string, kind: HistoryKind, entry: Verification | Receipt): Promise<void> {
    await query(this.#pool, `storing a ${kind}`, "INSERT INTO writ_trust_history (id, kind, body) VALUES ($1, $2, $3)", [
      id,
      kind,
      JSON.stringify(entry),
    ]);
  }

  async #latest(id: string, kind: HistoryKind): Promise<unknown> {
    if (!isRecordId(id)) return undefined;
    const { rows } = await query<{ body: string }>(
      this.#pool,
      `reading the latest ${kind}`,
      "SELECT body FROM writ_trust_history WHERE id = $1 AND kind = $2 ORDER BY seq DESC LIMIT 1",
      [id, kind],
    );
    return rows[0] === undefined ? undefined : parseStrictJson(rows[0].body);
  }
}

/**
 * ONE statement: a data-modifying CTE inserts the record (`ON CONFLICT (id) DO NOTHING`) and, only for the row it
 * inserted, its first verification and receipt. True when it inserted the record.
 */
async function createOn(db: pg.Pool | pg.PoolClient, record: SealedRecord, verification: Verification, receipt: Receipt): Promise<boolean> {
  const { rowCount } = await query(
    db,
    "storing a trust record",
    `WITH created AS (
       INSERT INTO writ_trust_records (id, body) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING id
     )
     INSERT INTO writ_trust_history (id, kind, body)
     SELECT id, kind, body FROM created, (VALUES (1, 'verification', $3), (2, 'receipt', $4)) AS first (n, kind, body)
     ORDER BY n`,
    [record.businessTransactionId, JSON.stringify(record), JSON.stringify(verification), JSON.stringify(receipt)],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * A replay store whose statements run in `transaction`: PostgresReplayStore uses nothing of its pool but
 * `query(config)`, each statement through it. One statement at a time (`claimStatements` 1): one client.
 */
function replayIn(transaction: LazyTransaction, options: PostgresReplayStoreOptions): ReplayStore {
  return new PostgresReplayStore(transaction.queryable() as pg.Pool, { ...options, claimStatements: 1 });
}
