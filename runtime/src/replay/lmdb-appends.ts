/**
 * The fast path of an LmdbReplayStore's `consume` (docs/replay.md, "Other processes on the same data dir"): a
 * fingerprint the set does not hold has no entry (fingerprint-set.ts INVARIANT (no false negative)), so its entry is
 * appended to the log without reading anything, in a conditional block that LMDB's write thread carries out without a
 * JavaScript callback, on the condition that no other process appended since this one last looked (lmdb-replay-log.ts,
 * THE HEAD), with the transition's puts (lmdb-puts.ts). A refused block is tried again once the set has taken in the
 * other's appends, up to FAST_TRIES blocks; a consume whose fingerprint the set then holds, or whose tries are spent,
 * answers false, and the store goes through its full transition. One group in flight at a time: the consumes made
 * meanwhile make the next. Any other operation on a fingerprint waiting or in flight waits for it (`settled`).
 */
import { ReplayStoreClosedError, StoreUnavailableError } from "./errors.js";
import type { FingerprintHash } from "./fingerprint-set.js";
import type { LmdbDurability } from "./lmdb-durability.js";
import type { LmdbEntries } from "./lmdb-entries.js";
import { queuePuts, type LmdbPut } from "./lmdb-puts.js";
import { MAX_SEQUENCE } from "./lmdb-replay-log.js";
import type { ReplayEntry } from "./store.js";

/** A consume of a fingerprint the set does not hold, waiting for its group's block (`#issue`). */
interface Append {
  readonly fingerprint: string;
  readonly hash: FingerprintHash;
  readonly entry: ReplayEntry;
  readonly puts: readonly LmdbPut[];
  readonly settle: (written: Promise<boolean>) => void;
  /** Blocks it was in that another process's appends refused. */
  readonly refusals: number;
}

const NO_PUTS: readonly LmdbPut[] = [];
const WRITTEN = Promise.resolve(true);
const NOT_WRITTEN = Promise.resolve(false);
/**
 * Blocks a consume is tried in before it goes through the transition: with two processes appending under load, one of
 * two blocks was refused, and a transition costs a write transaction's callback and a read per consume
 * (docs/benchmarks.md, "Several event loops").
 */
const FAST_TRIES = 4;

export class LmdbAppends {
  readonly #entries: LmdbEntries;
  readonly #durability: LmdbDurability;
  /** Whether the store is closed: the consumes still waiting are then refused. */
  readonly #closed: () => boolean;
  /** Consumes waiting for the next group; the group in flight, when there is one, is `#inFlight`. */
  #waiting: Append[] = [];
  #inFlight = false;
  /** Fingerprints of the consumes waiting or in flight, each with the end of its append. */
  readonly #pending = new Map<string, Promise<unknown>>();

  constructor(entries: LmdbEntries, durability: LmdbDurability, closed: () => boolean) {
    this.#entries = entries;
    this.#durability = durability;
    this.#closed = closed;
  }

  /** Whether a consume of `fingerprint` is waiting or in flight. */
  has(fingerprint: string): boolean {
    return this.#pending.has(fingerprint);
  }

  /** Once the consumes of `fingerprint` waiting or in flight have settled. */
  async settled(fingerprint: string): Promise<void> {
    for (let pending = this.#pending.get(fingerprint); pending !== undefined; pending = this.#pending.get(fingerprint)) await pending;
  }

  /**
   * Queues a consume's new entry, and its puts, for the next group; resolves with whether they were appended, false when
   * the group was refused or the set took in the fingerprint meanwhile (the caller then goes through its transition).
   */
  append(fingerprint: string, hash: FingerprintHash, entry: ReplayEntry, puts: readonly LmdbPut[] = NO_PUTS): Promise<boolean> {
    const written = new Promise<boolean>((resolve, reject) => {
      this.#waiting.push({ fingerprint, hash, entry, puts, settle: (outcome) => outcome.then(resolve, reject), refusals: 0 });
    });
    const settled = written.then(
      () => undefined,
      () => undefined,
    );
    this.#pending.set(fingerprint, settled);
    void settled.then(() => {
      if (this.#pending.get(fingerprint) === settled) this.#pending.delete(fingerprint);
    });
    if (!this.#inFlight) this.#issue();
    return written;
  }

  /** At close: the consumes waiting are refused; the group in flight commits first (lmdb-js closes after it). */
  close(): void {
    if (!this.#inFlight) this.#issue();
  }

  /**
   * Appends the waiting consumes' entries in one conditional block: at the sequence numbers after `synced`, on the
   * condition that the head is still `synced` when LMDB's write thread commits it, so that no fingerprint another process
   * stored since this one's set last took the log in can be stored twice.
   */
  #issue(): void {
    // Closed, or writes held (a full disk) since the consumes were admitted: refused as any write then is.
    const refusal = this.#closed() ? new ReplayStoreClosedError() : this.#durability.admits() ? null : this.#heldError();
    if (refusal !== null) {
      for (const append of this.#waiting) append.settle(Promise.reject(refusal));
      this.#waiting = [];
      return;
    }
    // Checked against the set again now: it may have taken in entries since the consume looked (a catch-up), and the
    // block's condition only covers what is appended after `synced`. One found goes through the transition.
    const set = this.#entries.set!;
    const group: Append[] = [];
    for (const append of this.#waiting) {
      if (set.find(append.hash).length === 0) group.push(append);
      else append.settle(Promise.resolve(false));
    }
    this.#waiting = [];
    if (group.length === 0) return;
    this.#inFlight = true;
    const log = this.#entries.log;
    const expected = this.#entries.synced;
    const last = expected + group.length;
    let outcome: Promise<boolean>;
    if (last > MAX_SEQUENCE) {
      outcome = Promise.reject(new StoreUnavailableError(`the replay log is full: ${MAX_SEQUENCE} entries`));
    } else {
      // In the set before the block commits: a consume of the same fingerprint made meanwhile reads the entry; if the
      // block is refused, these are false positives.
      group.forEach((append, i) => set.add(append.hash, expected + 1 + i));
      // Each queued write fails with the conditional block it belongs to: settled (recorded), never an unhandled rejection.
      const settle = (written: Promise<boolean>) => this.#durability.settle(written);
      const block = log.ifHead(expected, () => {
        group.forEach((append, i) => {
          settle(log.put(expected + 1 + i, append.hash, append.entry));
          queuePuts(append.puts, settle);
        });
        settle(log.setHead(last));
      });
      // Committed is not durable (lmdb-store.ts, DURABILITY): `durable` waits for the fsync before answering.
      outcome = this.#durability.durable(block);
    }
    const next = () => {
      this.#inFlight = false;
      this.#issue();
    };
    outcome.then(
      (written) => {
        if (written) {
          this.#entries.appended(last);
          for (const append of group) append.settle(WRITTEN);
        } else {
          this.#refused(group, expected);
        }
        next();
      },
      (error: unknown) => {
        for (const append of group) append.settle(Promise.reject(error));
        next();
      },
    );
  }

  /**
   * After `group`'s block, conditioned on the head at `expected`, was refused (another process appended first): the set
   * forgets the locations it gave the group, then takes in the log's new entries (one of them may be a fingerprint of
   * the group, appended by the other); a consume whose fingerprint it still does not hold joins the next group, at the
   * front, unless its tries are spent.
   */
  #refused(group: readonly Append[], expected: number): void {
    const set = this.#entries.set!;
    group.forEach((append, i) => set.remove(append.hash, expected + 1 + i));
    this.#entries.catchUp(false);
    const again: Append[] = [];
    for (const append of group) {
      const refusals = append.refusals + 1;
      if (refusals < FAST_TRIES && set.find(append.hash).length === 0) again.push({ ...append, refusals });
      else append.settle(NOT_WRITTEN);
    }
    this.#waiting = [...again, ...this.#waiting];
  }

  /** The error `admit` throws while writes are held. */
  #heldError(): unknown {
    try {
      this.#durability.admit();
      return null;
    } catch (error) {
      return error;
    }
  }
}
