/**
 * LMDB walks in pages, for work run in slices (audit/slices.ts, docs/audit.md "Running for years").
 *
 * INVARIANT (no read transaction outlives a slice): every page is read with `Array.from(getRange({limit}))`, which
 * closes its cursor before the page is returned; the next page opens a new one after the last key. A request may
 * await between pages; no cursor stays open across that await, so LMDB can reuse the pages freed meanwhile.
 */
import type { Database, Key, RangeOptions } from "lmdb";

/** Entries read per page by `pages`: one page is well under a slice. */
export const PAGE = 256;

/** The first page of a walk is small (a query for one page of 50 reads little more), and each next one twice as large. */
const FIRST_PAGE = 32;

/**
 * The entries of `range` in `db`, page after page (the header's INVARIANT), the pages growing from FIRST_PAGE to
 * `pageSize`: a synchronous generator the caller may suspend across awaits, or abandon, without holding a cursor.
 * Entries written or removed between pages are seen or not, as the next page finds them; keys are read in order, each
 * once. `range` must not set `offset` or `limit`.
 */
export function* pages<K extends Key, V>(
  db: Database<V, K>,
  range: RangeOptions = {},
  pageSize = PAGE,
): Generator<{ readonly key: K; readonly value: V }> {
  for (const page of pagesOf(
    (options) => Array.from(db.getRange(options), ({ key, value }) => ({ key, value })),
    (entry) => entry.key,
    range,
    pageSize,
  ))
    yield* page;
}

/** The keys of `range` in `db`, read as `pages` reads entries. */
export function* keyPages<K extends Key>(db: Database<unknown, K>, range: RangeOptions = {}, pageSize = PAGE): Generator<K> {
  for (const page of pagesOf(
    (options) => Array.from(db.getKeys(options)) as K[],
    (key) => key,
    range,
    pageSize,
  ))
    yield* page;
}

function* pagesOf<T, K extends Key>(
  read: (options: RangeOptions) => T[],
  keyOf: (item: T) => K,
  range: RangeOptions,
  pageSize: number,
): Generator<T[]> {
  let after: K | undefined;
  for (let size = Math.min(FIRST_PAGE, pageSize); ; size = Math.min(size * 2, pageSize)) {
    const page = read(after === undefined ? { ...range, limit: size } : { ...range, start: after, exclusiveStart: true, limit: size });
    yield page;
    if (page.length < size) return;
    after = keyOf(page[page.length - 1]!);
  }
}

/** Keys LMDB skips natively per turn of the event loop when a query skips an offset. */
export const SKIP_STEP = 10_000;

/**
 * The first `limit` keys of `range` after its first `offset`, which LMDB skips natively (no key is decoded), at most
 * SKIP_STEP per turn of the event loop: a query's offset costs a cursor step per key skipped, never a long stretch.
 */
export async function keysAfter<K extends Key>(db: Database<unknown, K>, range: RangeOptions, offset: number, limit: number): Promise<K[]> {
  let from: RangeOptions = range;
  let left = offset;
  while (left > SKIP_STEP) {
    const [key] = Array.from(db.getKeys({ ...from, offset: SKIP_STEP - 1, limit: 1 })) as K[];
    if (key === undefined) return [];
    from = { ...range, start: key, exclusiveStart: true };
    left -= SKIP_STEP;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return Array.from(db.getKeys({ ...from, offset: left, limit })) as K[];
}
