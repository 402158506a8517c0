/**
 * The LMDB audit store's listings and lookups. Nothing reads in proportion to the trail on the event loop: walks are
 * read in pages and sliced (slices.ts), and what a page answers is prefetched off the event loop first: the records a
 * query pages through may be old ones, which in a store larger than memory the OS no longer holds. A decision is found
 * by executionId through `decisionInstant` (its replay entry's `createdAt`), since records are keyed by time.
 */
import { executionFingerprint } from "@writ/runtime";
import { decisionDetail, decisionRow } from "../../audit/decision-row.js";
import { Slicer } from "../../audit/slices.js";
import { timeRange } from "../../audit/time-range.js";
import type { DecisionDetail, DecisionQuery, DecisionRow, SecurityEventRow, SecurityQuery } from "../../audit/types.js";
import {
  CONFIRMATION_SUFFIX,
  OVERRIDE_SUFFIX,
  confirmation,
  override,
  type AuditDatabases,
  type DecisionTimeKey,
} from "./audit-databases.js";
import type { LmdbAuditWriter } from "./audit-writer.js";
import { matchingRecordKeys } from "./decision-filters.js";
import { keyPages, keysAfter } from "./pages.js";
import { prefetched } from "./prefetch.js";

export class LmdbAuditReads {
  readonly #dbs: AuditDatabases;
  readonly #writer: LmdbAuditWriter;
  readonly #decisionInstant: ((fingerprint: string) => Promise<number | undefined>) | null;
  /** Settles once every decision of the trail is in the filter index (older environments are indexed at open). */
  readonly #filtersReady: Promise<void>;

  constructor(
    dbs: AuditDatabases,
    writer: LmdbAuditWriter,
    decisionInstant: ((fingerprint: string) => Promise<number | undefined>) | null,
    filtersReady: Promise<void>,
  ) {
    this.#dbs = dbs;
    this.#writer = writer;
    this.#decisionInstant = decisionInstant;
    this.#filtersReady = filtersReady;
  }

  async listDecisions(query: DecisionQuery): Promise<DecisionRow[]> {
    const { policyId, decision, offset, limit } = query;
    const filtered = policyId !== undefined || decision !== undefined;
    if (filtered) await this.#filtersReady;
    return this.#writer.read(async () => {
      // The time index skips `offset` natively; the filter index's walk (a merge of ranges) reads pages (slices.ts).
      // Either way the event loop is served between slices, and a walk left early, or one that throws, holds no cursor.
      const keys: Iterable<DecisionTimeKey> = filtered
        ? matchingRecordKeys(this.#dbs.decisionFilters, query)
        : await keysAfter(this.#dbs.decisionRecords, timeRange(query.from, query.to), offset, limit);
      const skip = filtered ? offset : 0;
      const slicer = new Slicer();
      const wanted: DecisionTimeKey[] = [];
      let skipped = 0;
      for (const key of keys) {
        if (wanted.length === limit) break;
        await slicer.pause();
        if (skipped < skip) skipped += 1;
        else wanted.push(key);
      }
      await this.prefetchRows(wanted);
      const rows: DecisionRow[] = [];
      for (const key of wanted) {
        await slicer.pause();
        const stored = this.#dbs.decisionRecords.get(key);
        if (stored === undefined) throw new Error(`audit index entry without a decision record: ${key[1]}`);
        rows.push(decisionRow(stored, override(this.#dbs, key[1]), confirmation(this.#dbs, key[1])));
      }
      return rows;
    });
  }

  async getDecision(executionId: string): Promise<DecisionDetail | null> {
    const fingerprint = executionFingerprint(executionId);
    const instant = this.#decisionInstant === null ? undefined : await this.#decisionInstant(fingerprint);
    if (instant !== undefined) await this.prefetchRows([[instant, fingerprint]]);
    return this.#writer.read(async () => {
      const key =
        this.#decisionInstant === null
          ? await this.#walkForDecision(fingerprint)
          : instant === undefined
            ? undefined
            : ([instant, fingerprint] as DecisionTimeKey);
      const stored = key === undefined ? undefined : this.#dbs.decisionRecords.get(key);
      return stored === undefined ? null : decisionDetail(stored, override(this.#dbs, fingerprint), confirmation(this.#dbs, fingerprint));
    });
  }

  listSecurityEvents(query: SecurityQuery): Promise<SecurityEventRow[]> {
    return this.#writer.read(() =>
      Array.from(this.#dbs.security.getRange({ ...timeRange(query.from, query.to), limit: query.limit }), ({ value }) => value),
    );
  }

  /** The time key of the decision of `executionId` in this trail (the record log's lookup); undefined when there is none. */
  async decisionKey(executionId: string): Promise<DecisionTimeKey | undefined> {
    if (!executionId.isWellFormed()) return undefined;
    const fingerprint = executionFingerprint(executionId);
    await this.#writer.readable();
    if (this.#decisionInstant === null) return this.#walkForDecision(fingerprint);
    const instant = await this.#decisionInstant(fingerprint);
    return instant === undefined ? undefined : [instant, fingerprint];
  }

  /** What a decision's row reads (its record, its override and its confirmation), brought into memory off the event loop. */
  async prefetchRows(keys: readonly DecisionTimeKey[]): Promise<void> {
    await Promise.all([
      prefetched(this.#dbs.root, this.#dbs.decisionRecords, keys),
      prefetched(
        this.#dbs.root,
        this.#dbs.decisions,
        keys.flatMap((key) => [key[1] + OVERRIDE_SUFFIX, key[1] + CONFIRMATION_SUFFIX]),
      ),
    ]);
  }

  /**
   * The time key of the decision of `fingerprint`, found by walking the time index in slices: only without
   * `decisionInstant` (the development memory replay store), where the walk is linear in the trail.
   */
  async #walkForDecision(fingerprint: string): Promise<DecisionTimeKey | undefined> {
    const slicer = new Slicer();
    for (const key of keyPages(this.#dbs.decisionRecords)) {
      if (key[1] === fingerprint) return key;
      await slicer.pause();
    }
    return undefined;
  }
}
