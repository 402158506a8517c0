/**
 * Long work over a store in slices (docs/audit.md, "Running for years"): a walk of a trail, an export, a count runs for
 * as long as the store is large, but never holds the event loop or an LMDB read transaction for more than one slice.
 * A store's walks read in pages that hold no cursor across a slice (LMDB: storage/lmdb/pages.ts).
 */

/** The longest stretch, in ms, that sliced work runs before it lets the event loop serve others. */
export const SLICE_MS = 2;

/**
 * Cooperative slicing: `await slicer.pause()` between items; it yields to the event loop (a macrotask: I/O and timers
 * run) once `budgetMs` have passed since the last yield, and is a cheap clock check otherwise.
 *
 * With a `share` below 1, the work also takes at most that share of the loop's time while others have work: once a
 * yield finds the loop busy (it came back after more than BUSY_MS), every slice for the next LOADED_HOLD_MS waits until
 * the others have had `(1 / share − 1)` times its length, whether or not the next yield finds work waiting: under a
 * paced load requests arrive between yields, and a slice started on a loop idle for an instant is as much theirs. A loop
 * that stays idle that long lets the work run at full speed. A bulk job (a whole-log export) is so kept from
 * saturating a core that requests share with it.
 */
export class Slicer {
  readonly #budgetMs: number;
  readonly #pacer: SharePacer;
  #since = performance.now();

  constructor(budgetMs = SLICE_MS, share = 1) {
    if (!(share > 0 && share <= 1)) throw new RangeError(`a Slicer's share is in (0, 1], not ${share}`);
    this.#budgetMs = budgetMs;
    this.#pacer = new SharePacer(share);
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
    const back = performance.now();
    const owed = this.#pacer.owed(ran, back - yielded, back);
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

/** How long the loop counts as loaded after a yield that found it busy (the Slicer's header). */
export const LOADED_HOLD_MS = 1_000;

/** A Slicer's share rule (its header), time given rather than read: what it owes after each slice. */
export class SharePacer {
  readonly #share: number;
  #loadedUntil = -Infinity;

  constructor(share: number) {
    this.#share = share;
  }

  /** The wait owed after a slice of `ranMs` whose yield gave others `othersMs` and came back at `nowMs`. */
  owed(ranMs: number, othersMs: number, nowMs: number): number {
    if (othersMs > BUSY_MS) this.#loadedUntil = nowMs + LOADED_HOLD_MS;
    return owedMs(ranMs, othersMs, this.#share, nowMs < this.#loadedUntil);
  }
}

/**
 * How long sliced work that ran `ranMs`, then yielded for `othersMs`, waits more before its next slice so that it takes
 * at most `share` of the loop's time while the loop is `loaded` (the Slicer's header): 0 on an idle loop.
 */
export function owedMs(ranMs: number, othersMs: number, share: number, loaded: boolean): number {
  if (share >= 1 || !loaded) return 0;
  return Math.max(0, ranMs * (1 / share - 1) - othersMs);
}
