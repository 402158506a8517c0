/**
 * Group execution of independent operations that share a fixed cost (a database round trip, a statement, a commit).
 * Items submitted while `maxInFlight` runs are under way wait, and leave together in the next run, up to `maxBatch`
 * per run. At low load every item runs alone and at once (nothing waits for a timer); under load, one run carries
 * many, so the fixed cost is paid once for all of them: the same idea as PostgreSQL's own group commit.
 *
 * Items submitted in the same tick of the event loop leave together (the queue is drained in a microtask). A run that
 * throws rejects every item it carried; a run answers each item in the order given.
 */
export interface BatcherLimits {
  /** Runs under way at once; at least 1. */
  readonly maxInFlight: number;
  /** Items per run; at least 1. */
  readonly maxBatch: number;
}

interface Waiting<I, O> {
  readonly item: I;
  readonly resolve: (value: O) => void;
  readonly reject: (error: unknown) => void;
}

export class Batcher<I, O> {
  readonly #run: (items: readonly I[]) => Promise<readonly O[]>;
  readonly #limits: BatcherLimits;
  #queue: Waiting<I, O>[] = [];
  #inFlight = 0;
  #scheduled = false;

  /** `run` answers one output per item, in the order of the items. */
  constructor(run: (items: readonly I[]) => Promise<readonly O[]>, limits: BatcherLimits) {
    if (!(Number.isInteger(limits.maxInFlight) && limits.maxInFlight >= 1))
      throw new RangeError(`maxInFlight must be an integer of at least 1, not \`${limits.maxInFlight}\``);
    if (!(Number.isInteger(limits.maxBatch) && limits.maxBatch >= 1))
      throw new RangeError(`maxBatch must be an integer of at least 1, not \`${limits.maxBatch}\``);
    this.#run = run;
    this.#limits = limits;
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        queueMicrotask(() => {
          this.#scheduled = false;
          this.#pump();
        });
      }
    });
  }

  #pump(): void {
    while (this.#inFlight < this.#limits.maxInFlight && this.#queue.length > 0) {
      const batch = this.#queue.length <= this.#limits.maxBatch ? this.#queue : this.#queue.slice(0, this.#limits.maxBatch);
      this.#queue = batch === this.#queue ? [] : this.#queue.slice(this.#limits.maxBatch);
      this.#inFlight += 1;
      void this.#settle(batch);
    }
  }

  async #settle(batch: readonly Waiting<I, O>[]): Promise<void> {
    try {
      const outputs = await this.#run(batch.map((w) => w.item));
      if (outputs.length !== batch.length) throw new Error(`a batch of ${batch.length} items was answered with ${outputs.length} outputs`);
      batch.forEach((w, i) => w.resolve(outputs[i]!));
    } catch (error) {
      for (const w of batch) w.reject(error);
    } finally {
      this.#inFlight -= 1;
      this.#pump();
    }
  }
}
