/**
 * The in-process replay store (spec 2.12): for development and tests only. It keeps nothing across restarts and is not
 * shared between processes, so it cannot protect a fleet or survive a crash. Atomicity is by construction: every method
 * reads, decides and writes synchronously, with no `await` in between. Expired entries are found through an ExpiryHeap
 * (expiry-heap.ts): `sweep` costs what has expired, not what the store holds.
 *
 * Capacity (spec 8, docs/replay.md "MemoryReplayStore"): every stored entry counts, expired ones included, until
 * `expire` or `sweep` removes it. A `reserve` that would add an entry past the capacity rejects with
 * `ReplayCapacityError`; one that replaces an expired entry of the same fingerprint does not grow the store.
 */
import { randomUUID } from "node:crypto";
import { ReplayCapacityError, ReplayStoreClosedError } from "./errors.js";
import { ExpiryHeap } from "./expiry-heap.js";
import {
  checkApproved,
  checkFailedTtl,
  checkFingerprint,
  checkNow,
  checkReserveTtl,
  checkToken,
  decideConfirm,
  decideConsume,
  decideFail,
  decideMarkPendingOverride,
  decideReserve,
  decideResolveOverride,
  decideStartExecution,
  isExpired,
  normalizeContext,
  type Transition,
} from "./lifecycle.js";
import type { RecordWriter } from "./records.js";
import type { ReplayEntry, ReplayResult, ReplayStore, ReserveOptions, ConsumeOptions, ResolveOverrideOptions } from "./store.js";

export const DEFAULT_MEMORY_CAPACITY = 1_000_000;

/** A record is written right after its transition succeeded: it exists (records.ts `RecordWriter`). */
const WRITTEN: Promise<boolean | null> = Promise.resolve(true);

export interface MemoryReplayStoreOptions {
  /** Maximum number of stored entries; default 1,000,000 (spec 8). */
  readonly capacity?: number;
  /** Receives the record of each transition that succeeds, right after it (nothing in memory is durable anyway). */
  readonly writeRecord?: RecordWriter;
}

export class MemoryReplayStore implements ReplayStore {
  readonly capacity: number;
  readonly #entries = new Map<string, ReplayEntry>();
  /** An item for every expiry an entry took; items whose entry changed since are stale, skipped by `sweep`. */
  readonly #expiring = new ExpiryHeap();
  readonly #writeRecord: RecordWriter | undefined;
  #closed = false;

  constructor(options: MemoryReplayStoreOptions = {}) {
    const capacity = options.capacity ?? DEFAULT_MEMORY_CAPACITY;
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError("capacity must be a positive integer");
    this.capacity = capacity;
    this.#writeRecord = options.writeRecord;
  }

  /** Number of stored entries, expired ones included until they are swept. */
  get size(): number {
    return this.#entries.size;
  }

  async reserve(fingerprint: string, options: ReserveOptions = {}): Promise<ReplayResult> {
    this.#assertOpen();
    const fp = checkFingerprint(fingerprint);
    const ttlMs = checkReserveTtl(options.ttlMs);
    const now = checkNow(options.now);
    const current = this.#entries.get(fp);
    const t = decideReserve(fp, current, randomUUID(), ttlMs, now);
    if (t.next !== undefined && current === undefined && this.#entries.size >= this.capacity) {
      throw new ReplayCapacityError(this.capacity);
    }
    return this.#apply(fp, t);
  }

  async consume(fingerprint: string, options: ConsumeOptions = {}): Promise<ReplayResult> {
    this.#assertOpen();
    const fp = checkFingerprint(fingerprint);
    const now = checkNow(options.now);
    const context = options.context === undefined ? undefined : normalizeContext(options.context);
    const current = this.#entries.get(fp);
    const t = decideConsume(fp, current, randomUUID(), context, now);
    if (t.next !== undefined && current === undefined && this.#entries.size >= this.capacity) {
      throw new ReplayCapacityError(this.capacity);
    }
    const result = this.#apply(fp, t);
    if (result.ok && options.record !== undefined) this.#writeRecord?.(options.record, WRITTEN);
    return result;
  }

  async startExecution(fingerprint: string, token: string, now?: number): Promise<ReplayResult> {
    this.#assertOpen();
    const fp = checkFingerprint(fingerprint);
    return this.#apply(fp, decideStartExecution(this.#entries.get(fp), checkToken(token), checkNow(now)));
  }

  async confirm(fingerprint: string, token: string, now?: number): Promise<ReplayResult> {
    this.#assertOpen();
    const fp = checkFingerprint(fingerprint);
    return this.#apply(fp, decideConfirm(this.#entries.get(fp), checkToken(token), checkNow(now)));
  }

  async fail(fingerprint: string, token: string, options: { readonly ttlMs?: number; readonly now?: number } = {}): Promise<ReplayResult> {
    this.#assertOpen();
    const fp = checkFingerprint(fingerprint);
    const ttlMs = checkFailedTtl(options.ttlMs);
    return this.#apply(fp, decideFail(this.#entries.get(fp), checkToken(token), ttlMs, checkNow(options.now)));
  }

  async markPendingOverride(fingerprint: string, token: string, context: unknown, now?: number): Promise<ReplayResult> {
    this.#assertOpen();
    const fp = checkFingerprint(fingerprint);
    const normalized = normalizeContext(context);
    return this.#apply(fp, decideMarkPendingOverride(this.#entries.get(fp), checkToken(token), normalized, checkNow(now)));
  }

  async resolveOverride(
    fingerprint: string,
    token: string,
    approved: boolean,
    options: ResolveOverrideOptions = {},
  ): Promise<ReplayResult> {
    this.#assertOpen();
    const fp = checkFingerprint(fingerprint);
    const normalized = normalizeContext(options.resolution);
    const result = this.#apply(
      fp,
      decideResolveOverride(this.#entries.get(fp), checkToken(token), checkApproved(approved), normalized, checkNow(options.now)),
    );
    if (result.ok && options.record !== undefined) this.#writeRecord?.(options.record, WRITTEN);
    return result;
  }

  async expire(fingerprint: string, now?: number): Promise<boolean> {
    this.#assertOpen();
    const fp = checkFingerprint(fingerprint);
    const at = checkNow(now);
    const current = this.#entries.get(fp);
    if (current === undefined || !isExpired(current, at)) return false;
    this.#entries.delete(fp);
    return true;
  }

  async sweep(now?: number): Promise<number> {
    this.#assertOpen();
    const at = checkNow(now);
    let removed = 0;
    for (let due = this.#expiring.takeDue(at); due !== undefined; due = this.#expiring.takeDue(at)) {
      const entry = this.#entries.get(due.fingerprint);
      // Still the entry the item was pushed for (not one that changed or took another expiry since), and expired.
      if (entry !== undefined && entry.expiresAt === due.at && isExpired(entry, at)) {
        this.#entries.delete(due.fingerprint);
        removed += 1;
      }
    }
    return removed;
  }

  async read(fingerprint: string): Promise<ReplayEntry | null> {
    this.#assertOpen();
    return this.#entries.get(checkFingerprint(fingerprint)) ?? null;
  }

  /** Drops every entry: nothing survives the store (spec 2.12). Later calls reject with ReplayStoreClosedError. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#entries.clear();
    this.#expiring.clear();
  }

  #apply(fingerprint: string, t: Transition): ReplayResult {
    // Entries are deeply frozen (lifecycle.makeEntry), so handing the stored object out is safe.
    if (t.next !== undefined) {
      this.#entries.set(fingerprint, t.next);
      if (t.next.expiresAt !== null) this.#expiring.push({ at: t.next.expiresAt, fingerprint });
    }
    return t.result;
  }

  #assertOpen(): void {
    if (this.#closed) throw new ReplayStoreClosedError();
  }
}
