/**
 * Bounds what unauthenticated traffic can write: security events are aggregated per source and interval (docs/audit.md,
 * "Bounds"). The first event of a type from an ip in an interval is written as it happens; later ones are counted and
 * written as one row with `count` when the interval ends (keyed by ip, not path, so varying paths escapes nothing). At
 * most `maxSources` (type, ip) pairs are tracked per interval, further sources counted in one overflow row per type
 * (ip and path `*`): an interval writes at most 2 × maxSources + 4 rows, however many requests arrive.
 *
 * INVARIANT (every security event is counted): each event admitted is either written at once or counted in exactly
 * one aggregate returned by `drain`; `drain(now, true)` (on close) returns what is still pending.
 */
import type { SecurityEventInput } from "./types.js";

export interface SecurityEventLimits {
  /** Length of an aggregation interval, in ms. */
  readonly intervalMs: number;
  /** Distinct (type, ip) pairs tracked per interval; more are counted in the overflow rows. */
  readonly maxSources: number;
}

export const DEFAULT_SECURITY_EVENT_LIMITS: SecurityEventLimits = { intervalMs: 60_000, maxSources: 1_000 };

/** Events counted but not yet written: one row standing for `count` of them. */
export interface SecurityEventAggregate {
  readonly event: SecurityEventInput;
  readonly count: number;
}

interface Tracked {
  readonly event: SecurityEventInput;
  /** Events after the first (which was written): what the aggregate row stands for. */
  count: number;
}

export class SecurityEventLimiter {
  readonly #limits: SecurityEventLimits;
  #windowStart: number | null = null;
  readonly #sources = new Map<string, Tracked>();
  readonly #overflow = new Map<string, Tracked>();
  readonly #ended: SecurityEventAggregate[] = [];

  constructor(limits: SecurityEventLimits = DEFAULT_SECURITY_EVENT_LIMITS) {
    if (!(limits.intervalMs > 0) || !(limits.maxSources >= 1)) throw new RangeError("intervalMs must be > 0 and maxSources >= 1");
    this.#limits = limits;
  }

  /** True: write `event` now. False: it is counted, and written in an aggregate returned by a later `drain`. */
  admit(event: SecurityEventInput, now: number): boolean {
    this.#roll(now);
    const key = `${event.type}\u0000${event.ip}`;
    const tracked = this.#sources.get(key);
    if (tracked !== undefined) {
      tracked.count += 1;
      return false;
    }
    if (this.#sources.size < this.#limits.maxSources) {
      this.#sources.set(key, { event, count: 0 });
      return true;
    }
    const overflow = this.#overflow.get(event.type);
    if (overflow !== undefined) overflow.count += 1;
    else {
      const detail = `from more than ${this.#limits.maxSources} sources in one interval: counted together`;
      this.#overflow.set(event.type, { event: { type: event.type, method: event.method, path: "*", ip: "*", detail }, count: 1 });
    }
    return false;
  }

  /** Events counted and not yet returned by `drain`. */
  pending(): number {
    let pending = 0;
    for (const { count } of this.#sources.values()) pending += count;
    for (const { count } of this.#overflow.values()) pending += count;
    for (const { count } of this.#ended) pending += count;
    return pending;
  }

  /** The aggregates of intervals that have ended by `now`; with `all`, also those of the current one. */
  drain(now: number, all = false): SecurityEventAggregate[] {
    this.#roll(now);
    if (all) this.#close();
    return this.#ended.splice(0);
  }

  #roll(now: number): void {
    if (this.#windowStart === null || now < this.#windowStart) this.#windowStart = now;
    else if (now - this.#windowStart >= this.#limits.intervalMs) {
      this.#close();
      this.#windowStart = now;
    }
  }

  #close(): void {
    for (const { event, count } of this.#sources.values()) {
      if (count > 0) this.#ended.push({ event: { ...event, detail: `${count} more like this in the interval: ${event.detail}` }, count });
    }
    for (const { event, count } of this.#overflow.values()) this.#ended.push({ event, count });
    this.#sources.clear();
    this.#overflow.clear();
  }
}
