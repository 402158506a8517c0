/**
 * Surface B's records (record-store.ts) in the sidecar's LMDB environment, in named databases of their own beside the
 * replay store and the audit trail (`surface-b-records`, `-order`, `-verifications`, `-receipts`: docs/surface-b.md).
 * The sidecar opens and closes the environment; this store only opens its databases. Values are JSON text, readable by
 * any LMDB client and parsed strictly when read back.
 *
 * WRITES: each is one `root.transaction` (its reads see the transaction's own view, so the ordinals it takes and the
 * existence check it makes cannot race another writer), awaited through the environment's `LmdbDurability.durable`: a
 * method resolves only once its write is on disk (acknowledged means durable); a failed commit or a write refused
 * while writes are held (below the free-space reserve) rejects with StoreUnavailableError, answered 503. A callback
 * only throws before its first write (callbacks of one batch share the LMDB transaction).
 */
import { parseStrictJson } from "@writ/runtime";
import { LmdbDurability } from "@writ/runtime/lmdb";
import type { Database, RootDatabase } from "lmdb";
import { isRecordId } from "../../trust-records/ids.js";
import { storedRecord, type StoredRecord, type TrustRecordStore } from "../../trust-records/record-store.js";
import type { Receipt, SealedRecord, Verification } from "../../trust-records/types.js";

export const SURFACE_B_DATABASES = {
  records: "surface-b-records",
  order: "surface-b-order",
  verifications: "surface-b-verifications",
  receipts: "surface-b-receipts",
} as const;

type HistoryKey = [id: string, ordinal: number];

export class LmdbTrustRecordStore implements TrustRecordStore {
  readonly #root: RootDatabase;
  readonly #durability: LmdbDurability;
  readonly #records: Database<string, string>;
  readonly #order: Database<string, number>;
  readonly #verifications: Database<string, HistoryKey>;
  readonly #receipts: Database<string, HistoryKey>;

  constructor(root: RootDatabase) {
    this.#root = root;
    this.#durability = LmdbDurability.of(root);
    this.#records = root.openDB<string, string>(SURFACE_B_DATABASES.records, { encoding: "string" });
    this.#order = root.openDB<string, number>(SURFACE_B_DATABASES.order, { encoding: "string" });
    this.#verifications = root.openDB<string, HistoryKey>(SURFACE_B_DATABASES.verifications, { encoding: "string" });
    this.#receipts = root.openDB<string, HistoryKey>(SURFACE_B_DATABASES.receipts, { encoding: "string" });
  }

  async create(record: SealedRecord, verification: Verification, receipt: Receipt): Promise<boolean> {
    const id = record.businessTransactionId;
    // Encoded before the transaction: nothing may throw after a write in it.
    const texts = [JSON.stringify(record), JSON.stringify(verification), JSON.stringify(receipt)] as const;
    this.#durability.admit();
    return this.#durability.durable(
      this.#root.transaction(() => {
        if (this.#records.get(id) !== undefined) return false;
        this.#records.putSync(id, texts[0]);
        this.#order.putSync(this.#next(this.#order.getKeys({ reverse: true, limit: 1 })), id);
        this.#verifications.putSync([id, 0], texts[1]);
        this.#receipts.putSync([id, 0], texts[2]);
        return true;
      }),
    );
  }

  async record(id: string): Promise<StoredRecord | undefined> {
    return storedRecord(isRecordId(id) ? this.#records.get(id) : undefined);
  }

  appendVerification(id: string, verification: Verification): Promise<void> {
    return this.#append(this.#verifications, id, verification);
  }

  appendReceipt(id: string, receipt: Receipt): Promise<void> {
    return this.#append(this.#receipts, id, receipt);
  }

  async latestVerification(id: string): Promise<unknown> {
    return this.#latest(this.#verifications, id);
  }

  async latestReceipt(id: string): Promise<unknown> {
    return this.#latest(this.#receipts, id);
  }

  /** Ordinals are never reused (nothing is deleted): the count is the next ordinal. */
  async count(): Promise<number> {
    return this.#next(this.#order.getKeys({ reverse: true, limit: 1 }));
  }

  /** The ordinals are positions: `offset` to `offset + limit` (exclusive). */
  async ids(offset: number, limit: number): Promise<string[]> {
    return [...this.#order.getRange({ start: offset, end: offset + limit })].map((entry) => entry.value);
  }

  async #append(db: Database<string, HistoryKey>, id: string, entry: Verification | Receipt): Promise<void> {
    const text = JSON.stringify(entry);
    this.#durability.admit();
    await this.#durability.durable(
      this.#root.transaction(() => {
        const [last] = this.#lastKeys(db, id);
        db.putSync([id, last === undefined ? 0 : last[1] + 1], text);
      }),
    );
  }

  #latest(db: Database<string, HistoryKey>, id: string): unknown {
    if (!isRecordId(id)) return undefined;
    const [last] = this.#lastKeys(db, id);
    const text = last === undefined ? undefined : db.get(last);
    return text === undefined ? undefined : parseStrictJson(text);
  }

  #lastKeys(db: Database<string, HistoryKey>, id: string): HistoryKey[] {
    return [...db.getKeys({ start: [id, Number.MAX_SAFE_INTEGER], end: [id, -1], reverse: true, limit: 1 })];
  }

  #next(lastKeys: Iterable<number>): number {
    const [last] = lastKeys;
    return last === undefined ? 0 : last + 1;
  }
}
