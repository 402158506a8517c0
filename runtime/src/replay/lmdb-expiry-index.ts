/**
 * The expiry index of an LmdbReplayStore (docs/replay.md, "The expiry index", with its keys): a named database
 * `<dbName>-expiry` of the same environment, holding `[expiresAt, fingerprint]` for each entry whose `expiresAt` is
 * not null (reservations and failed entries). `sweep` reads it from the start up to its `now`: what it reads is what
 * has expired, whatever the store holds. The bookkeeping keys (BACKFILLED, BACKFILL_AFTER) are strings, which
 * ordered-binary sorts after every index key.
 *
 * INVARIANT (the index is kept in step): every write of the store that creates, changes or removes an entry changes the
 * index in the same LMDB write transaction (`track`, `remove`), so no reader of any process sees one without the other,
 * and a crash keeps both or neither. Older data is indexed once by the backfill (`backfillSlice`): until the index is
 * `complete`, an entry may lack its key. A stale key (a hand-edited database) is removed by `sweep` when it comes.
 */
import { decodeEntry } from "./lmdb-entry-encoding.js";
import type { Database, RootDatabase } from "lmdb";
import { parseStoredEntry } from "./lifecycle.js";
import type { ReplayEntry } from "./store.js";

/** An index key: an entry's expiry and its fingerprint. */
export type ExpiryKey = [expiresAt: number, fingerprint: string];

type IndexKey = ExpiryKey | typeof BACKFILLED | typeof BACKFILL_AFTER;
type IndexValue = true | string;

const BACKFILLED = "backfilled";
const BACKFILL_AFTER = "backfill-after";

/**
 * The expiry an entry is indexed under, as it is stored: null when it never expires. JSON (the store's encoding) keeps
 * no infinity, and ordered-binary sorts -0 apart from 0, so the key is taken from the value the entry reads back as.
 */
export function indexedExpiry(entry: ReplayEntry | undefined): number | null {
  const expiresAt = entry?.expiresAt ?? null;
  return expiresAt === null || !Number.isFinite(expiresAt) ? null : expiresAt + 0;
}

export class LmdbExpiryIndex {
  readonly #index: Database<IndexValue, IndexKey>;

  constructor(root: RootDatabase, name: string) {
    this.#index = root.openDB<IndexValue, IndexKey>(name, { encoding: "json" });
  }

  /** Every entry written before the index existed is indexed (a new data dir is complete after its first backfill). */
  get complete(): boolean {
    return this.#index.get(BACKFILLED) === true;
  }

  /**
   * Inside the write transaction that replaces `before` by `after` (either absent) under `fingerprint`: the same change
   * to the index.
   */
  track(fingerprint: string, before: ReplayEntry | undefined, after: ReplayEntry | undefined): void {
    const was = indexedExpiry(before);
    const is = indexedExpiry(after);
    if (was === is) return;
    if (was !== null) this.#index.removeSync([was, fingerprint]);
    if (is !== null) this.#index.putSync([is, fingerprint], true);
  }

  /** Inside a write transaction: removes one key (its entry is gone, or the key is stale). */
  remove(key: ExpiryKey): void {
    this.#index.removeSync(key);
  }

  /**
   * Inside a write transaction: up to `limit` keys due at `now` (`expiresAt <= now`), in expiry order, after `after`
   * (exclusive) or from the start. Reads at most one key more than it returns.
   */
  due(now: number, after: ExpiryKey | undefined, limit: number): ExpiryKey[] {
    const keys: ExpiryKey[] = [];
    const range = this.#index.getKeys({ ...(after === undefined ? {} : { start: after, exclusiveStart: true }), limit });
    for (const key of range) {
      // A string is a bookkeeping key: every index key sorts before them.
      if (!Array.isArray(key) || (key as ExpiryKey)[0] > now) break;
      keys.push(key as ExpiryKey);
    }
    return keys;
  }

  /**
   * Inside a write transaction: indexes up to `limit` entries of `entries` after the backfill's resume point, reading
   * each as the transaction sees it (an entry changed since the index existed is indexed as it is now), and moves the
   * resume point past them, or marks the index complete when none are left. Returns how many entries it read, or null
   * when the index was already complete. A malformed entry is left out: no operation accepts it anyway.
   */
  backfillSlice(entries: Database<unknown, string>, limit: number): number | null {
    if (this.complete) return null;
    const after = this.#index.get(BACKFILL_AFTER);
    // Read whole before writing: no cursor is moved under the writes of its own transaction.
    const slice = Array.from(entries.getRange({ ...(typeof after === "string" ? { start: after, exclusiveStart: true } : {}), limit }));
    for (const { key, value } of slice) {
      let expiresAt: number | null;
      try {
        expiresAt = indexedExpiry(parseStoredEntry(decodeEntry(value, key), key));
      } catch {
        continue;
      }
      if (expiresAt !== null) this.#index.putSync([expiresAt, key], true);
    }
    if (slice.length < limit) {
      this.#index.putSync(BACKFILLED, true);
      this.#index.removeSync(BACKFILL_AFTER);
    } else {
      this.#index.putSync(BACKFILL_AFTER, slice[slice.length - 1]!.key);
    }
    return slice.length;
  }
}
