/**
 * The records of replay transitions held in memory until sequenced (record-log-storage.ts, PENDING RECORDS): a decision,
 * override or confirmation is written with its replay transition, and its locator and leaf are held here once the
 * transition's answer says it committed, with no write of their own (a pending row per record on the request's path, with
 * its read and removal when sequenced, costs more than the budget allows: docs/benchmarks.md, "One-way write path"). A process
 * that crashes with records held leaves its open mark, and the next open takes them in (record-log-accounting.ts).
 */

/** How long `settled` waits for the outcome of the writes under way. */
const SETTLE_WAIT_MS = 5_000;

export class HeldRecords {
  /** Records whose write committed, not yet appended: locator → leaf, oldest first (a Map keeps insertion order). */
  readonly #committed = new Map<string, Uint8Array>();
  /** The locators of the records whose write's outcome is not known yet (a locator may be awaited twice). */
  readonly #awaiting = new Map<string, number>();
  #awaitingCount = 0;
  #allSettled: (() => void) | null = null;
  /** A record left memory without entering the log (its write's outcome unknown, or retention): keep the mark at close. */
  incomplete = false;

  /**
   * `written`: whether the write that stores the record committed, once known (true), did not (false) or cannot be told
   * (null: its write failed); never rejects. Held once it says true.
   */
  holdOnCommit(written: Promise<boolean | null>, locator: string, leaf: Uint8Array): void {
    this.#awaitingCount += 1;
    this.#awaiting.set(locator, (this.#awaiting.get(locator) ?? 0) + 1);
    void written.then((committed) => {
      if (committed === true) this.#committed.set(locator, leaf);
      else if (committed === null) this.incomplete = true;
      const left = this.#awaiting.get(locator)! - 1;
      if (left === 0) this.#awaiting.delete(locator);
      else this.#awaiting.set(locator, left);
      this.#awaitingCount -= 1;
      if (this.#awaitingCount === 0) this.#allSettled?.();
    });
  }

  /** How many are held, committed and not yet appended. */
  get committedSize(): number {
    return this.#committed.size;
  }

  /** How many are held or awaited. */
  get size(): number {
    return this.#committed.size + this.#awaitingCount;
  }

  /** The records held, committed and not yet appended, oldest first. */
  committed(): IterableIterator<[string, Uint8Array]> {
    return this.#committed.entries();
  }

  /** The locators held or awaited. */
  *locators(): Generator<string> {
    yield* this.#committed.keys();
    yield* this.#awaiting.keys();
  }

  has(locator: string): boolean {
    return this.#awaiting.has(locator) || this.#committed.has(locator);
  }

  /** Once appended (its batch committed), or removed by retention (then, should that fail, the next open adopts it). */
  release(locator: string, byRetention = false): void {
    if (this.#committed.delete(locator) && byRetention) this.incomplete = true;
  }

  /** Once every write under way has its outcome, or SETTLE_WAIT_MS (a write whose outcome never comes: incomplete). */
  async settled(): Promise<void> {
    if (this.#awaitingCount === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const settled = await Promise.race([
      new Promise<boolean>((resolve) => (this.#allSettled = () => resolve(true))),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), SETTLE_WAIT_MS))),
    ]);
    clearTimeout(timer);
    if (!settled) this.incomplete = true;
  }
}
