/**
 * A bound on a bulk reader's disk reads a second (docs/audit.md, "Export"): an export of a store larger than memory
 * reads it from the disk as fast as the disk answers, where the decisions' own commits wait on the same disk. The reads
 * are the process's major page faults (`getrusage`, every thread: the prefetches run on libuv's pool), which requests
 * no longer cause (the replay check reads no disk), so they are the reader's.
 */

/** The default bound of SERVICE_EXPORT_DISK_READS. */
export const DEFAULT_EXPORT_DISK_READS = 400;

/** Reads a second as a token bucket holding at most one second's worth: a reader idle for a while may not burst longer. */
export class DiskReadPacer {
  readonly #perSecond: number;
  readonly #readsNow: () => number;
  #reads: number;
  #at: number;
  /** Reads still allowed now; negative: owed. */
  #allowance: number;

  /** `readsNow`: the process's disk reads so far (major page faults by default). */
  constructor(perSecond: number, readsNow: () => number = () => process.resourceUsage().majorPageFault, now = performance.now()) {
    if (!(perSecond > 0)) throw new RangeError(`a DiskReadPacer's bound is above 0 reads a second, not ${perSecond}`);
    this.#perSecond = perSecond;
    this.#readsNow = readsNow;
    this.#reads = readsNow();
    this.#at = now;
    this.#allowance = perSecond;
  }

  /** How long, in ms, to wait before reading more so that the reads so far keep within the bound. */
  owedMs(now = performance.now()): number {
    const reads = this.#readsNow();
    const refill = ((now - this.#at) * this.#perSecond) / 1000;
    this.#allowance = Math.min(this.#perSecond, this.#allowance + refill) - (reads - this.#reads);
    this.#reads = reads;
    this.#at = now;
    return this.#allowance >= 0 ? 0 : (-this.#allowance * 1000) / this.#perSecond;
  }
}
