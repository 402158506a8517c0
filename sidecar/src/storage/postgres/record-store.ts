/**
 * Surface B's records (surface-b/record-store.ts) on PostgreSQL, shared by every sidecar of a fleet: a Trust Record
 * made through one sidecar is read, verified and replayed through any other (tables: record-schema.ts).
 *
 * - `create` is ONE statement: a data-modifying CTE inserts the record (`ON CONFLICT (id) DO NOTHING`) and, only for
 *   the row it inserted, its first verification and receipt; so of racing creates of one id, from any sidecar, exactly
 *   one resolves true, and a record never exists without its first verification and receipt.
 * - Appends are plain inserts: their order is `seq` (a sequence, never two equal values), so racing appends never
 *   collide or get lost, and the latest is the one with the highest `seq`.
 * - Paging (`ids`) is by `seq`: a sequence value is taken when a row is inserted, not when it commits, so a create that
 *   commits later can appear behind a newer one; pages are stable once concurrent creates have committed.
 * Every statement goes through `query` (query.ts): a database failure is StoreUnavailableError (503), and a method
 * resolves only once its statement committed.
 */
import { parseStrictJson } from "@writ/runtime";
import type pg from "pg";
import { isRecordId } from "../../surface-b/ids.js";
import { storedRecord, type StoredRecord, type TrustRecordStore } from "../../surface-b/record-store.js";
import type { Receipt, SealedRecord, Verification } from "../../surface-b/types.js";
import { query } from "./query.js";

type HistoryKind = "verification" | "receipt";

export class PostgresTrustRecordStore implements TrustRecordStore {
  readonly #pool: pg.Pool;

  /** Uses `pool` (its owner ends it); the schema must be migrated (migrations.ts). */
  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async create(record: SealedRecord, verification: Verification, receipt: Receipt): Promise<boolean> {
    const { rowCount } = await query(
      this.#pool,
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

  async record(id: string): Promise<StoredRecord | undefined> {
    if (!isRecordId(id)) return undefined;
    const { rows } = await query<{ body: string }>(this.#pool, "reading a trust record", "SELECT body FROM writ_trust_records WHERE id = $1", [id]);
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
    const { rows } = await query<{ id: string }>(this.#pool, "listing trust records", "SELECT id FROM writ_trust_records ORDER BY seq LIMIT $1 OFFSET $2", [limit, offset]);
    return rows.map((row) => row.id);
  }

  async #append(id: string, kind: HistoryKind, entry: Verification | Receipt): Promise<void> {
    await query(this.#pool, `storing a ${kind}`, "INSERT INTO writ_trust_history (id, kind, body) VALUES ($1, $2, $3)", [id, kind, JSON.stringify(entry)]);
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
