/**
 * How late the event loop runs (docs/sidecar.md, "Event-loop delay"): a timer due every SAMPLE_INTERVAL_MS notes how
 * much later than due it ran; a request that arrived meanwhile waited that long, so a stall shows here before any probe
 * times out. Not `perf_hooks.monitorEventLoopDelay`: it hands out only an aggregate, not a histogram's bucket counts,
 * and reading it afresh takes `reset()`, which discards the interval under way (a stall right after a reset is lost).
 *
 * INVARIANT (no stall unseen): from `hold` to the last release, every instant lies in exactly one sampled interval and
 * the delay of each is recorded when it ends; `takeMaxMs` and `recentMaxMs` also count the interval under way, so a
 * stall that ended just before a scrape or a `/health` is in its answer even before the timer ran again. The timer is
 * unref'd: it keeps no process alive.
 */

/** How often the loop is sampled: the finest delay told apart from none. */
export const SAMPLE_INTERVAL_MS = 10;

/** `recentMaxMs` looks back over this many one-second slots: the current second and the ones before it. */
export const RECENT_SECONDS = 5;

export class EventLoopDelay {
  readonly #record: (delayMs: number) => void;
  #timer: NodeJS.Timeout | null = null;
  #holders = 0;
  /** When the interval under way started (`performance.now()`). */
  #last = 0;
  /** The largest delay recorded since `takeMaxMs`. */
  #maxSinceTaken = 0;
  /** What `takeMaxMs` counted of the interval under way: its end is not counted again for the next take. */
  #takenOfCurrent = 0;
  /** The largest delay of each recent second, in slot `second % RECENT_SECONDS`. */
  readonly #recent = Array.from({ length: RECENT_SECONDS }, () => ({ second: -1, maxMs: 0 }));

  /** `record`: called with each interval's delay in milliseconds (0 when the timer ran on time). */
  constructor(record: (delayMs: number) => void) {
    this.#record = record;
  }

  /** Samples until every holder has released (each release counts once). */
  hold(): () => void {
    if (this.#holders++ === 0) {
      this.#last = performance.now();
      this.#timer = setInterval(() => this.#sample(), SAMPLE_INTERVAL_MS);
      this.#timer.unref();
    }
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      if (--this.#holders === 0 && this.#timer !== null) {
        clearInterval(this.#timer);
        this.#timer = null;
      }
    };
  }

  /** The largest delay since the previous call (the interval under way included), in milliseconds; then starts over. */
  takeMaxMs(): number {
    const pending = this.#pending(performance.now());
    const max = Math.max(this.#maxSinceTaken, pending);
    this.#maxSinceTaken = 0;
    this.#takenOfCurrent = pending;
    return max;
  }

  /** The largest delay in the current second and the RECENT_SECONDS − 1 before it (the interval under way included). */
  recentMaxMs(): number {
    const now = performance.now();
    const second = Math.floor(now / 1000);
    let max = this.#pending(now);
    for (const slot of this.#recent) if (slot.second > second - RECENT_SECONDS && slot.maxMs > max) max = slot.maxMs;
    return max;
  }

  /** How late the timer is now: the delay of the interval under way so far. */
  #pending(now: number): number {
    return this.#timer === null ? 0 : Math.max(0, now - this.#last - SAMPLE_INTERVAL_MS);
  }

  #sample(): void {
    const now = performance.now();
    const delay = Math.max(0, now - this.#last - SAMPLE_INTERVAL_MS);
    this.#last = now;
    this.#record(delay);
    this.#maxSinceTaken = Math.max(this.#maxSinceTaken, delay - this.#takenOfCurrent);
    this.#takenOfCurrent = 0;
    const second = Math.floor(now / 1000);
    const slot = this.#recent[second % RECENT_SECONDS]!;
    if (slot.second !== second) {
      slot.second = second;
      slot.maxMs = delay;
    } else if (delay > slot.maxMs) {
      slot.maxMs = delay;
    }
  }
}
