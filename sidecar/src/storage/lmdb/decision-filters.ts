/**
 * The filter index of the decision trail: `GET /audit/decisions?policyId=…&decision=…` reads what it
 * answers, not the whole trail.
 *
 * LAYOUT of `audit-decision-filters` (keys only; the value is 0): [policyId, status, ms, fingerprint], a policy's
 * decisions of one status by time; [ms, fingerprint] at its end is the decision record's own key. One key per
 * decision, so recording a decision costs one more write, not one per filter (docs/benchmarks.md, "Hardening").
 * A query with both filters walks one range; policyId alone merges the policy's three status ranges newest first;
 * status alone merges one range per policy in the trail, the policies found by skipping from one to the next (one
 * read each). A page costs offset + limit entries read, plus one per range, whatever the size of the trail.
 * Ranges are read in pages (slices.ts `keyPages`): a walk stopped early, or one that throws, leaves no cursor open.
 */
import type { Database, RootDatabase } from "lmdb";
import { keyPages } from "./pages.js";
import { timeRange } from "../../audit/time-range.js";
import type { DecisionStatus } from "../../audit/types.js";

export const DECISION_STATUSES: readonly DecisionStatus[] = ["approved", "pending_override", "rejected"];

export type FilterKey = (string | number)[];
export type RecordKey = [ms: number, fingerprint: string];

/** The index key of one decision. */
export function filterKey(policyId: string, status: DecisionStatus, ms: number, fingerprint: string): FilterKey {
  return [policyId, status, ms, fingerprint];
}

/**
 * Sorts after every key of its policy and before the next policy's: statuses are ASCII, U+FFFF encodes above them, and
 * an array key compares element by element.
 */
const AFTER_POLICY = "\uffff";

/** The policyIds of the trail, in order, one read each (a skip from one policy's keys to the next's). */
function* policiesOf(index: Database<number, FilterKey>): Generator<string> {
  let start: FilterKey | undefined;
  for (;;) {
    const [next] = Array.from(index.getKeys({ ...(start === undefined ? {} : { start }), limit: 1 }));
    if (next === undefined || typeof next[0] !== "string") return;
    yield next[0];
    start = [next[0], AFTER_POLICY];
  }
}

export interface DecisionFilter {
  readonly policyId?: string;
  readonly decision?: DecisionStatus;
  /** Inclusive bounds, Unix ms. */
  readonly from?: number;
  readonly to?: number;
}

/**
 * The longest policyId, in UTF-8 bytes, that an index key can hold (LMDB keys are at most 1,978 bytes, and the key
 * also holds the status, the time and the fingerprint): a longer one was never indexed, so it matches nothing. Checked
 * before any read: lmdb-js leaks the read transaction of a range whose start key it cannot encode.
 */
export const MAX_INDEXED_POLICY_ID_BYTES = 1_024;

/** The record keys of the decisions matching `filter` (policyId and/or decision given), newest first, lazily. */
export function* matchingRecordKeys(index: Database<number, FilterKey>, filter: DecisionFilter): Generator<RecordKey> {
  if (filter.policyId !== undefined && Buffer.byteLength(filter.policyId) > MAX_INDEXED_POLICY_ID_BYTES) return;
  const statuses = filter.decision === undefined ? DECISION_STATUSES : [filter.decision];
  const policies = filter.policyId === undefined ? Array.from(policiesOf(index)) : [filter.policyId];
  const prefixes: FilterKey[] = policies.flatMap((policyId) => statuses.map((status) => [policyId, status]));
  yield* mergeNewestFirst(prefixes.map((prefix) => recordKeys(index, prefix, filter)));
}

/** One prefix's record keys, newest first, within the time bounds. */
function* recordKeys(index: Database<number, FilterKey>, prefix: FilterKey, filter: DecisionFilter): Generator<RecordKey> {
  for (const key of keyPages(index, timeRange(filter.from, filter.to, prefix))) {
    const ms = key[prefix.length];
    const fingerprint = key[prefix.length + 1];
    if (typeof ms === "number" && typeof fingerprint === "string") yield [ms, fingerprint];
  }
}

/** Merges iterators that each yield [ms, fingerprint] newest first into one, newest first. */
function* mergeNewestFirst(sources: readonly Iterator<RecordKey>[]): Generator<RecordKey> {
  const heads = sources.map((source) => source.next());
  for (;;) {
    let best = -1;
    for (let i = 0; i < heads.length; i++) {
      const head = heads[i]!;
      if (head.done) continue;
      const chosen = best === -1 ? undefined : (heads[best] as IteratorYieldResult<RecordKey>).value;
      if (chosen === undefined || newer(head.value, chosen)) best = i;
    }
    if (best === -1) return;
    yield (heads[best] as IteratorYieldResult<RecordKey>).value;
    heads[best] = sources[best]!.next();
  }
}

/** The order of the time index read in reverse: by ms, then by fingerprint. */
function newer(a: RecordKey, b: RecordKey): boolean {
  return a[0] !== b[0] ? a[0] > b[0] : a[1] > b[1];
}

/** The marker, in `audit-counters`, that every decision of the trail is in the filter index. */
export const FILTERS_INDEXED = "decision_filters_indexed";

/**
 * Indexes the decisions of a trail written before the filter index existed (read from its records), in transactions of `chunk` decisions, so
 * the environment is never locked for long. Resumable: an interrupted backfill starts over (puts are idempotent).
 * Returns how many decisions it indexed.
 */
export async function backfillFilters<V>(
  root: RootDatabase,
  records: Database<V, RecordKey>,
  fields: (record: V) => { readonly policyId: string; readonly status: DecisionStatus },
  index: Database<number, FilterKey>,
  counters: Database<number, string>,
  chunk = 1_000,
): Promise<number> {
  if (counters.get(FILTERS_INDEXED) === 1) return 0;
  let indexed = 0;
  let after: RecordKey | undefined;
  for (;;) {
    const batch = Array.from(records.getRange({ ...(after === undefined ? {} : { start: after, exclusiveStart: true }), limit: chunk }));
    if (batch.length === 0) break;
    await root.transaction(() => {
      for (const { key, value } of batch) {
        const { policyId, status } = fields(value);
        index.putSync(filterKey(policyId, status, key[0], key[1]), 0);
      }
    });
    indexed += batch.length;
    after = batch[batch.length - 1]!.key;
  }
  await counters.put(FILTERS_INDEXED, 1);
  return indexed;
}
