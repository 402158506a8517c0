/**
 * The LMDB record log's ACCOUNTING (record-log-storage.ts): every record the store holds is, in an untouched store,
 * exactly one of in the log with its record (`size − pruned` of them), pending (a row of `audit-log-pending`), or held
 * in memory by this process (record-log-held.ts), so comparing LMDB's O(1) counts of the sides in one read snapshot says
 * whether any record was put into the store around the log; only then is the trail walked, in slices (slices.ts), to
 * find which. ADOPTION takes what the log lacks into the pending set: the records written while the log was off, and
 * those a process held in memory when it crashed (its open mark is left, record-log-open.ts).
 */
import { entryLeafHash, type LogEntryKind } from "@writ/runtime";
import { Slicer } from "../../audit/slices.js";
import type { UnloggedRecord } from "../../audit/record-log/log-storage.js";
import { LOCATOR_KIND, locators, parseLocator } from "../../audit/record-log/locator.js";
import { pages } from "./pages.js";
import { entryCount, logState, prunedCount, type LogDatabases } from "./record-log-databases.js";
import type { HeldRecords } from "./record-log-held.js";
import type { LoggedTrail, StoredRecord } from "./logged-trail.js";
import { asStored } from "./stored-bytes.js";

/** Records taken into the pending set per transaction when the log adopts records it lacks. */
const ADOPT_CHUNK = 256;

export class LmdbLogAccounting {
  readonly #dbs: LogDatabases;
  readonly #trail: LoggedTrail;
  readonly #held: HeldRecords;

  constructor(dbs: LogDatabases, trail: LoggedTrail, held: HeldRecords) {
    this.#dbs = dbs;
    this.#trail = trail;
    this.#held = held;
  }

  /** Every prune note, with its locator, newest first, in pages (slices.ts). */
  *prunes(): Generator<StoredRecord> {
    for (const { key, value } of pages(this.#dbs.prunes, { reverse: true })) yield { locator: locators.prune(key[0], key[1]), raw: value };
  }

  /** Nothing to read when the store's counts add up; else the trail, walked in slices. */
  async *unlogged(): AsyncGenerator<UnloggedRecord> {
    if (this.#unaccounted() === 0) return;
    const slicer = new Slicer();
    for (const record of this.#everyStored()) {
      if (!this.#accountedFor(record))
        yield { kind: LOCATOR_KIND[record.locator[0]!]! as LogEntryKind, record: record.raw.toString("utf8") };
      await slicer.pause();
    }
  }

  /**
   * Takes every stored record that the log lacks into the pending set, key [0, locator]. Nothing is read when the counts
   * add up. Otherwise the trail is walked in slices, newest decisions first, each slice's records checked again and
   * taken in one write transaction (run `exclusively` of the log's other writers); after a crash (`complete` set
   * before it), the walk stops once it has found as many as the counts miss. Then `complete` is set and the `crashed`
   * marks removed. Answers how many records it took.
   */
  async adopt(crashed: readonly string[], exclusively: <T>(work: () => Promise<T>) => Promise<T>): Promise<number> {
    const complete = this.#dbs.meta.get("complete") === true;
    if (complete && crashed.length === 0) return 0;
    const missing = this.#unaccounted();
    let adopted = 0;
    if (missing !== 0) {
      // After a crash (the log complete before it), the records missing are the ones it held: enough once found.
      const enough = complete && missing > 0 ? missing : Infinity;
      const slicer = new Slicer();
      let chunk: StoredRecord[] = [];
      for (const record of this.#everyStored()) {
        if (!this.#accountedFor(record)) chunk.push(record);
        if (chunk.length >= ADOPT_CHUNK || adopted + chunk.length >= enough || (chunk.length > 0 && slicer.due())) {
          adopted += await exclusively(() => this.#pendAdopted(chunk));
          chunk = [];
          if (adopted >= enough) break;
        }
        await slicer.pause();
      }
      if (chunk.length > 0) adopted += await exclusively(() => this.#pendAdopted(chunk));
    }
    await this.#dbs.root.transaction(() => {
      this.#dbs.meta.putSync("complete", true);
      for (const mark of crashed) this.#dbs.meta.removeSync(mark);
    });
    return adopted;
  }

  /** In one write transaction: each of `records` still unaccounted for enters the pending set. Answers how many did. */
  #pendAdopted(records: readonly StoredRecord[]): Promise<number> {
    return this.#dbs.root.transaction(() => {
      let taken = 0;
      for (const record of records) {
        if (this.#accountedFor(record)) continue;
        const leaf = entryLeafHash({ kind: LOCATOR_KIND[record.locator[0]!]!, record: record.raw });
        this.#dbs.pending.putSync([0, record.locator], asStored(leaf));
        taken += 1;
      }
      return taken;
    });
  }

  /**
   * How many stored records are neither in the log nor pending nor held in memory, read in one snapshot: 0 in an
   * untouched store. Costs a few counts and one read per record held in memory.
   */
  #unaccounted(): number {
    const stored = this.#trail.storedCount() + entryCount(this.#dbs.prunes);
    const logged = logState(this.#dbs).size - prunedCount(this.#dbs);
    let inMemory = 0;
    for (const locator of this.#held.locators())
      if (this.#dbs.index.get(locator) === undefined && this.#trail.raw(locator) !== undefined) inMemory += 1;
    return stored - logged - entryCount(this.#dbs.pending) - inMemory;
  }

  /** Whether `record` is in the log, pending, or held in memory. */
  #accountedFor(record: StoredRecord): boolean {
    const { locator } = record;
    if (this.#dbs.index.get(locator) !== undefined) return true;
    const at = pendingTime(record);
    if (this.#dbs.pending.doesExist([0, locator]) || (Number.isFinite(at) && this.#dbs.pending.doesExist([at, locator]))) return true;
    return this.#held.has(locator);
  }

  /** Every record the store holds: the trail's, then the prune notes. */
  *#everyStored(): Generator<StoredRecord> {
    yield* this.#trail.stored();
    yield* this.prunes();
  }
}

/**
 * The time a record's pending entry is keyed by when the trail wrote it: the key's time for a decision, verification,
 * security event or prune note; an override's or confirmation's `recordedAt` (transition-records.ts).
 */
function pendingTime(record: StoredRecord): number {
  const { kind, fields } = parseLocator(record.locator);
  if (kind !== "override" && kind !== "confirmation") return Number(fields[0]);
  const recordedAt = (JSON.parse(record.raw.toString("utf8")) as { recordedAt?: unknown }).recordedAt;
  return typeof recordedAt === "string" ? Date.parse(recordedAt) : NaN;
}
