/**
 * Retention on LMDB: a trail's oldest records are read from its time index and its O(1) entry count (retention.ts
 * `dueCount`), and removed in transactions of at most PRUNE_SLICE records, the event loop served between them. Before
 * each transaction, every page its callback will touch is read into memory off the event loop: the records retention
 * removes are the oldest, which in a store larger than memory the OS no longer holds, and a disk read inside the
 * callback would stall the loop. Each transaction writes the record log's prune note of what it removed.
 */
import type { TrailName } from "../../audit/audit-store.js";
import { recordInstant } from "../../audit/audit-trail.js";
import { locators } from "../../audit/record-log/locator.js";
import { dueCount, type RetentionLimit } from "../../audit/retention.js";
import type { Database } from "lmdb";
import {
  COUNTERS,
  CONFIRMATION_SUFFIX,
  OVERRIDE_SUFFIX,
  appendCounted,
  confirmation,
  entryCount,
  override,
  type AuditDatabases,
  type DecisionTimeKey,
  type TimeKey,
} from "./audit-databases.js";
import type { LmdbAuditReads } from "./audit-reads.js";
import { filterKey, type FilterKey } from "./decision-filters.js";
import { prefetched } from "./prefetch.js";
import type { LmdbLogStorage, PrunedRecord } from "./record-log-storage.js";

/** Records removed per prune transaction: each costs a few B-tree writes in the callback, on the event loop. */
const PRUNE_SLICE = 128;

interface Chunk<K> {
  readonly prefetch: (keys: readonly K[]) => Promise<void>;
  /** Deletes one record inside the chunk's transaction and answers what it deleted, for the prune note. */
  readonly remove: (key: K) => PrunedRecord[];
}

export class LmdbAuditPrune {
  readonly #dbs: AuditDatabases;
  readonly #log: LmdbLogStorage | null;
  readonly #reads: LmdbAuditReads;
  readonly #now: () => Date;

  constructor(dbs: AuditDatabases, log: LmdbLogStorage | null, reads: LmdbAuditReads, now: () => Date) {
    this.#dbs = dbs;
    this.#log = log;
    this.#reads = reads;
    this.#now = now;
  }

  /** A decision goes with its filter entry, its override and its confirmation. */
  prune(trail: TrailName, limit: RetentionLimit, now: number, stopping: () => boolean): Promise<number> {
    const dbs = this.#dbs;
    switch (trail) {
      case "decisions":
        return this.#pruneTrail(dbs.decisionRecords, limit, now, stopping, {
          prefetch: (keys) => this.#prefetchDecisions(keys),
          remove: (key) => this.#removeDecision(key),
        });
      case "verifications":
        return this.#pruneTrail(dbs.verifications, limit, now, stopping, this.#timed(dbs.verifications, locators.verification));
      case "security":
        return this.#pruneTrail(dbs.security, limit, now, stopping, this.#timed(dbs.security, locators.security));
    }
  }

  async #pruneTrail<K extends [number, ...(string | number)[]]>(
    db: Database<unknown, K>,
    limit: RetentionLimit,
    now: number,
    stopping: () => boolean,
    chunk: Chunk<K>,
  ): Promise<number> {
    const { root, durability } = this.#dbs;
    let removed = 0;
    for (;;) {
      if (stopping()) return removed;
      const oldest = Array.from(db.getKeys({ limit: PRUNE_SLICE }));
      const due = oldest.slice(0, dueCount(oldest, entryCount(db), limit, now));
      if (due.length === 0) return removed;
      await chunk.prefetch(due);
      const log = this.#log;
      const commit = () =>
        durability.commit(
          root.transaction(() => {
            const removed = due.flatMap(chunk.remove);
            if (log) appendCounted(this.#dbs, COUNTERS.prunes, (ordinal) => log.notePruned(removed, now, ordinal));
          }),
        );
      // Alone with the log's sequencing (record-log-storage.ts, WRITTEN AS DATA): its note removes pending entries.
      await (log === null ? commit() : log.exclusively(commit));
      removed += due.length;
      if (due.length < PRUNE_SLICE) return removed;
    }
  }

  /** A verification or security event: its record, and its entry in the record log's index brought into memory first. */
  #timed(db: Database<unknown, TimeKey>, locatorOf: (ms: number, ordinal: number) => string): Chunk<TimeKey> {
    return {
      prefetch: async (keys) => {
        await Promise.all([prefetched(this.#dbs.root, db, keys), this.#log?.prefetchIndex(keys.map((key) => locatorOf(key[0], key[1])))]);
      },
      remove: (key) => {
        db.removeSync(key);
        return [{ locator: locatorOf(key[0], key[1]), ms: key[0] }];
      },
    };
  }

  /** What `#removeDecision` reads and removes for `keys`, and their entries in the record log's index, brought into memory. */
  async #prefetchDecisions(keys: readonly DecisionTimeKey[]): Promise<void> {
    await this.#reads.prefetchRows(keys);
    const filters: FilterKey[] = [];
    for (const key of keys) {
      const record = this.#dbs.decisionRecords.get(key);
      if (record !== undefined) filters.push(filterKey(record.attestation.policyId, record.status, key[0], key[1]));
    }
    await Promise.all([
      prefetched(this.#dbs.root, this.#dbs.decisionFilters, filters),
      this.#log?.prefetchIndex(keys.map((key) => locators.decision(key[0], key[1]))),
    ]);
  }

  /** Inside a write transaction: a decision, its index entries, its override and its confirmation; answers what it removed. */
  #removeDecision(key: DecisionTimeKey): PrunedRecord[] {
    const dbs = this.#dbs;
    const record = dbs.decisionRecords.get(key);
    if (record !== undefined) dbs.decisionFilters.removeSync(filterKey(record.attestation.policyId, record.status, key[0], key[1]));
    dbs.decisionRecords.removeSync(key);
    const removed: PrunedRecord[] = [{ locator: locators.decision(key[0], key[1]), ms: key[0] }];
    // An override or confirmation is pending (if it is) under its own time: read before it goes.
    const overridden = override(dbs, key[1]);
    if (overridden !== undefined && dbs.decisions.removeSync(key[1] + OVERRIDE_SUFFIX))
      removed.push({ locator: locators.override(key[1]), ms: recordInstant(overridden.recordedAt, this.#now) });
    const confirmed = confirmation(dbs, key[1]);
    if (confirmed !== undefined && dbs.decisions.removeSync(key[1] + CONFIRMATION_SUFFIX))
      removed.push({ locator: locators.confirmation(key[1]), ms: recordInstant(confirmed.recordedAt, this.#now) });
    return removed;
  }
}
