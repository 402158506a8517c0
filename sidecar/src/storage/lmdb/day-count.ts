/**
 * `decisions_today` of `GET /audit/stats` on LMDB, counted as the day goes rather than all over again at each call: a
 * busy day holds millions of decisions, and counting them at every call would cost what the day holds.
 *
 * The decisions of the day before `settledBefore` are counted once and kept (`settled`); each call counts the keys from
 * there to the end of the day, and moves `settledBefore` up to SETTLE_MS before now. INVARIANT (a settled millisecond
 * gains no decision): a decision is keyed by its attestation's `issuedAt` and written within the request that signed it,
 * far less than SETTLE_MS later. Retention removes the oldest decisions first, so it has removed one of the day exactly
 * when the oldest key is within the day: then every decision kept is of the day or later, and the count is LMDB's O(1)
 * entry count less the few keyed after the day, whichever process of the data dir removed them. Keys are read in pages
 * with the event loop served between slices (slices.ts).
 */
import type { Database } from "lmdb";
import { DAY_MS } from "../../audit/retention.js";
import { Slicer } from "../../audit/slices.js";
import { entryCount } from "./audit-databases.js";
import { keyPages } from "./pages.js";

/** How long after its millisecond a decision may still be written: the counted part of the day stops this far back. */
export const SETTLE_MS = 30_000;

type TimeKey = [ms: number, ...rest: (string | number)[]];

export class DayCount {
  readonly #times: Database<unknown, TimeKey>;
  #day = -1;
  #settledBefore = -1;
  #settled = 0;
  /** Counts run one after another: each moves the settled part once. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(times: Database<unknown, TimeKey>) {
    this.#times = times;
  }

  /** The decisions keyed within the UTC day of `now`. */
  count(now: number): Promise<number> {
    const counted = this.#queue.then(() => this.#count(now));
    this.#queue = counted.catch(() => undefined);
    return counted;
  }

  async #count(now: number): Promise<number> {
    const day = Math.floor(now / DAY_MS) * DAY_MS;
    const [oldest] = this.#times.getKeys({ limit: 1 });
    if (oldest === undefined || oldest[0] >= day) {
      // Retention has reached the day (or the trail starts in it): what was settled may be gone.
      this.#day = -1;
      return entryCount(this.#times) - (await this.#keys(day + DAY_MS, null, new Slicer()));
    }
    if (day !== this.#day) {
      this.#day = day;
      this.#settledBefore = day;
      this.#settled = 0;
    }
    const settleTo = Math.min(Math.max(now - SETTLE_MS, this.#settledBefore), day + DAY_MS);
    const slicer = new Slicer();
    this.#settled += await this.#keys(this.#settledBefore, settleTo, slicer);
    this.#settledBefore = settleTo;
    return this.#settled + (await this.#keys(settleTo, day + DAY_MS, slicer));
  }

  /** How many keys have their time in [from, to) (to null: from `from` on). */
  async #keys(from: number, to: number | null, slicer: Slicer): Promise<number> {
    if (to !== null && from >= to) return 0;
    let n = 0;
    for (const _ of keyPages(this.#times, to === null ? { start: [from] } : { start: [from], end: [to] })) {
      n += 1;
      await slicer.pause();
    }
    return n;
  }
}
