/**
 * Long work over a store in slices (docs/audit.md, "Running for years"): a walk of a trail, an export, a count runs for
 * as long as the store is large, but never holds the event loop or an LMDB read transaction for more than one slice.
 *
 * INVARIANT (no read transaction outlives a slice): every page is read with `Array.from(getRange({limit}))`, which
 * closes its cursor before the page is returned; the next page opens a new one after the last key. A request may
 * await between pages; no cursor stays open across that await, so LMDB can reuse the pages freed meanwhile.
 */
import type { Database, Key, RangeOptions } from "lmdb";

/** The longest stretch, in ms, that sliced work runs before it lets the event loop serve others. */
export const SLICE_MS = 2;

/** Entries read per page by `pages`: one page is well under a slice. */
export const PAGE = 256;

/**
 * Cooperative slicing: `await slicer.pause()` between items; it yields to the event loop (a macrotask: I/O and timers
 * run) once `budgetMs` have passed since the last yield, and is a cheap clock check otherwise.
 *
 * With a `share` below 1, the work also takes at most that share of the loop's time while others have work: when a
 * yield finds the loop busy (it came back after more than BUSY_MS), the next slice waits until the others have had
 * `(1 / share − 1)` times the slice's length. On an idle loop a yield comes straight back, and the work runs at full
 * speed. A bulk job (a whole-log export) is so kept from saturating a core that requests share with it.
 */
export class Slicer {
  readonly #budgetMs: number;
  readonly #share: number;
  #since = performance.now();

  constructor(budgetMs = SLICE_MS, share = 1) {
    if (!(share > 0 && share <= 1)) throw new RangeError(`a Slicer's share is in (0, 1], not ${share}`);
    this.#budgetMs = budgetMs;
    this.#share = share;
  }

  /** Whether the slice is used up: the caller should `yield` before going on. */
  due(): boolean {
    return performance.now() - this.#since >= this.#budgetMs;
  }

  /** Yields to the event loop now (and for longer when its share asks, see the header), and starts a new slice. */
  async yield(): Promise<void> {
    const yielded = performance.now();
    const ran = yielded - this.#since;
    await new Promise<void>((resolve) => setImmediate(resolve));
    const owed = owedMs(ran, performance.now() - yielded, this.#share);
    if (owed >= 1) await new Promise<void>((resolve) => setTimeout(resolve, owed));
    this.#since = performance.now();
  }

  /** Yields when the slice is used up. */
  async pause(): Promise<void> {
    if (this.due()) await this.yield();
  }
}

/** A yield that takes longer than this found other work waiting on the loop (an idle turn takes a few microseconds). */
export const BUSY_MS = 0.25;

/**
 * How long sliced work that ran `ranMs`, then yielded for `othersMs`, waits more before its next slice so that it takes
 * at most `share` of the loop's time while others have work (the Slicer's header): 0 when the loop was idle.
 */
export function owedMs(ranMs: number, othersMs: number, share: number): number {
  if (share >= 1 || othersMs <= BUSY_MS) return 0;
  return Math.max(0, ranMs * (1 / share - 1) - othersMs);
}

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
