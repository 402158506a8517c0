/**
 * How many bundle loads ended each way, and how long they took in all: data the registry (and a caller loading bundles
 * of its own, such as a remote source) adds to, and a metrics exporter reads (docs/sidecar.md, "Metrics").
 */

/**
 * `loaded`: read and verified; `not_found`: no such bundle; `refused`: it does not load (a bad hash or signature, an
 * unreadable file); `timeout`: it did not load within the load timeout; `abandoned`: shutdown abandoned it.
 */
export type BundleLoadOutcome = "loaded" | "not_found" | "refused" | "timeout" | "abandoned";

export interface BundleLoadTotal {
  readonly count: number;
  /** The sum of their durations. */
  readonly seconds: number;
}

export class BundleLoadTally {
  readonly #totals = new Map<BundleLoadOutcome, { count: number; seconds: number }>();

  /** One load that ended with `outcome` after `ms` milliseconds. */
  record(outcome: BundleLoadOutcome, ms: number): void {
    const total = this.#totals.get(outcome);
    if (total === undefined) this.#totals.set(outcome, { count: 1, seconds: ms / 1000 });
    else {
      total.count += 1;
      total.seconds += ms / 1000;
    }
  }

  /** The totals by outcome since the tally was made; an outcome no load had is absent. */
  totals(): ReadonlyMap<BundleLoadOutcome, BundleLoadTotal> {
    return new Map([...this.#totals].map(([outcome, total]) => [outcome, { ...total }]));
  }
}
