/**
 * Group execution of independent operations that share a fixed cost (a database round trip, a statement, a commit):
 * items submitted while `maxInFlight` runs are under way wait, and leave together in the next run (up to `maxBatch`),
 * so under load the fixed cost is paid once for many, as in PostgreSQL's own group commit; at low load every item runs
 * alone and at once. Items of one tick leave together (drained in a microtask). A run that throws rejects every item it
 * carried; a run answers each item in the order given.
 *
 * DEADLINE (`deadlineMs`): an item not answered this long after it was submitted is rejected with
 * BatchDeadlineExceeded, whether it still waits (it is then never sent) or rides a run that has not answered; otherwise
 * an item queued behind hung runs would wait for their timeouts, then its own. One timer, armed for the oldest item.
 */
export interface BatcherLimits {
  /** Runs under way at once; at least 1. */
  readonly maxInFlight: number;
  /** Items per run; at least 1. */
  readonly maxBatch: number;
  /** The longest an item waits for its answer, from its submission (see DEADLINE above); none when absent. */
  readonly deadlineMs?: number;
}

/** An item's answer did not come within `deadlineMs` of its submission. */
export class BatchDeadlineExceeded extends Error {
  override readonly name = "BatchDeadlineExceeded";
  constructor(readonly deadlineMs: number) {
    super(`no answer within ${deadlineMs} ms`);
  }
}

interface Waiting<I, O> {
  readonly item: I;
  /** Unix ms past which it is rejected (Infinity without a deadline). */
  readonly deadline: number;
  settled: boolean;
  readonly resolve: (value: O) => void;
  readonly reject: (error: unknown) => void;
}

export class Batcher<I, O> {
  readonly #run: (items: readonly I[]) => Promise<readonly O[]>;
  readonly #limits: BatcherLimits;
  #queue: Waiting<I, O>[] = [];
  #inFlight = 0;
  #scheduled = false;
  /** Items submitted and not yet answered, oldest first (a Set keeps insertion order): what the deadline timer reads. */
  readonly #unanswered = new Set<Waiting<I, O>>();
  #timer: NodeJS.Timeout | null = null;

  /** `run` answers one output per item, in the order of the items. */
  constructor(run: (items: readonly I[]) => Promise<readonly O[]>, limits: BatcherLimits) {
    if (!(Number.isInteger(limits.maxInFlight) && limits.maxInFlight >= 1))
      throw new RangeError(`maxInFlight must be an integer of at least 1, not \`${limits.maxInFlight}\``);
    if (!(Number.isInteger(limits.maxBatch) && limits.maxBatch >= 1))
      throw new RangeError(`maxBatch must be an integer of at least 1, not \`${limits.maxBatch}\``);
    if (limits.deadlineMs !== undefined && !(Number.isInteger(limits.deadlineMs) && limits.deadlineMs >= 1))
      throw new RangeError(`deadlineMs must be an integer of at least 1, not \`${limits.deadlineMs}\``);
    this.#run = run;
    this.#limits = limits;
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const deadlineMs = this.#limits.deadlineMs;
      const waiting: Waiting<I, O> = {
        item,
        deadline: deadlineMs === undefined ? Infinity : Date.now() + deadlineMs,
        settled: false,
        resolve: (value) => this.#answer(waiting, () => resolve(value)),
        reject: (error) => this.#answer(waiting, () => reject(error)),
      };
      this.#queue.push(waiting);
      if (deadlineMs !== undefined) {
        this.#unanswered.add(waiting);
        if (this.#timer === null) this.#timer = setTimeout(() => this.#expire(), deadlineMs).unref();
      }
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

  /** Settles `waiting` once: a run answering an item its deadline already rejected changes nothing. */
  #answer(waiting: Waiting<I, O>, settle: () => void): void {
    if (waiting.settled) return;
    waiting.settled = true;
    this.#unanswered.delete(waiting);
    settle();
  }

  /** Rejects every item past its deadline (a waiting one leaves the queue unsent), then arms for the oldest left. */
  #expire(): void {
    this.#timer = null;
    const now = Date.now();
    let expired = false;
    for (const waiting of this.#unanswered) {
      if (waiting.deadline > now) break;
      expired = true;
      waiting.reject(new BatchDeadlineExceeded(this.#limits.deadlineMs!));
    }
    if (expired) this.#queue = this.#queue.filter((w) => !w.settled);
    const oldest = this.#unanswered.values().next();
    if (!oldest.done) this.#timer = setTimeout(() => this.#expire(), Math.max(1, oldest.value.deadline - now)).unref();
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
