/**
 * The LMDB audit trail as its record log reads it (`LoggedTrail`, record-log-storage.ts): each record's exact stored
 * bytes by locator (record-log/locator.ts), their pages prefetched, and every record with its locator for the log's
 * accounting, counted in O(1) by LMDB's entry counts.
 */
import type { Database, Key } from "lmdb";
import { locators, parseLocator, type LogKind } from "../../audit/record-log/locator.js";
import {
  CONFIRMATION_SUFFIX,
  OVERRIDE_SUFFIX,
  entryCount,
  recordBytes,
  type AuditDatabases,
  type DecisionTimeKey,
} from "./audit-databases.js";
import { keyPages } from "./pages.js";
import { prefetched } from "./prefetch.js";

/** A record of the trail as the log reads it. */
export interface StoredRecord {
  readonly locator: string;
  readonly raw: Buffer;
}

/** What the log reads of the trail it logs. */
export interface LoggedTrail {
  /** The exact stored bytes of the record `locator` names; undefined when it is gone. */
  raw(locator: string): Buffer | undefined;
  /** Reads the pages of the records `locators` name into memory off the event loop, so that `raw` of them costs no disk read. */
  prefetch(locators: readonly string[]): Promise<void>;
  /** How many records the trail stores (prune notes aside: the log's own), in O(1) (record-log-accounting.ts). */
  storedCount(): number;
  /**
   * Every record the trail stores (prune notes aside), decisions newest first, read lazily and in pages (slices.ts
   * `pages`): the caller may await between records without holding a read transaction.
   */
  stored(): Iterable<StoredRecord>;
  /** The locator of the decision of `executionId`; undefined when the trail has none. */
  decisionLocator(executionId: string): Promise<string | undefined>;
}

/**
 * `decisionKey`: the key of an execution's decision (audit-reads.ts); `readPrune`: the stored bytes of a prune note,
 * which the log keeps itself.
 */
export function loggedTrail(
  dbs: AuditDatabases,
  decisionKey: (executionId: string) => Promise<DecisionTimeKey | undefined>,
  readPrune: (ms: number, ordinal: number) => Buffer | undefined,
): LoggedTrail {
  return {
    raw(locator) {
      const { kind, fields } = parseLocator(locator);
      if (kind === "prune") return readPrune(Number(fields[0]), Number(fields[1]));
      const { db, key } = placeOf(dbs, kind, fields);
      const raw = db.getBinary(key) ?? undefined;
      return raw !== undefined && kind === "decision" ? recordBytes(dbs.root, raw) : raw;
    },
    // Prune notes are not prefetched: a record the OS has evicted would otherwise stall the loop on the disk.
    async prefetch(wanted) {
      const keys = new Map<Database<unknown, Key>, Key[]>();
      for (const locator of wanted) {
        const { kind, fields } = parseLocator(locator);
        if (kind === "prune") continue;
        const { db, key } = placeOf(dbs, kind, fields);
        const list = keys.get(db);
        if (list === undefined) keys.set(db, [key]);
        else list.push(key);
      }
      await Promise.all(Array.from(keys, ([db, list]) => prefetched(dbs.root, db, list)));
    },
    storedCount: () =>
      entryCount(dbs.decisionRecords) + entryCount(dbs.decisions) + entryCount(dbs.verifications) + entryCount(dbs.security),
    stored: () => stored(dbs),
    async decisionLocator(executionId) {
      const key = await decisionKey(executionId);
      return key === undefined ? undefined : locators.decision(key[0], key[1]);
    },
  };
}

/** Every record the trail stores, with its locator, newest first where keyed by time, in pages (slices.ts). */
function* stored(dbs: AuditDatabases): Generator<StoredRecord> {
  for (const key of keyPages(dbs.decisionRecords, { reverse: true }))
    yield* present(locators.decision(key[0], key[1]), recordBytes(dbs.root, dbs.decisionRecords.getBinary(key)));
  for (const key of keyPages(dbs.decisions)) {
    const fingerprint = key.slice(0, key.indexOf("/"));
    yield* present(
      key.endsWith(OVERRIDE_SUFFIX) ? locators.override(fingerprint) : locators.confirmation(fingerprint),
      dbs.decisions.getBinary(key),
    );
  }
  for (const key of keyPages(dbs.verifications, { reverse: true }))
    yield* present(locators.verification(key[0], key[1]), dbs.verifications.getBinary(key));
  for (const key of keyPages(dbs.security, { reverse: true }))
    yield* present(locators.security(key[0], key[1]), dbs.security.getBinary(key));
}

/** The record at `locator`, when its bytes were read. */
function* present(locator: string, raw: Buffer | undefined): Generator<StoredRecord> {
  if (raw !== undefined) yield { locator, raw };
}

/** The database and key of a record other than a prune note (record-log/locator.ts). */
function placeOf(
  dbs: AuditDatabases,
  kind: Exclude<LogKind, "prune">,
  fields: readonly string[],
): { readonly db: Database<unknown, Key>; readonly key: Key } {
  const ms = Number(fields[0]);
  const second = fields[1] ?? "";
  switch (kind) {
    case "decision":
      return { db: dbs.decisionRecords as Database<unknown, Key>, key: [ms, second] };
    case "override":
      return { db: dbs.decisions as Database<unknown, Key>, key: fields[0] + OVERRIDE_SUFFIX };
    case "confirmation":
      return { db: dbs.decisions as Database<unknown, Key>, key: fields[0] + CONFIRMATION_SUFFIX };
    case "verification":
      return { db: dbs.verifications as Database<unknown, Key>, key: [ms, Number(second)] };
    case "security":
      return { db: dbs.security as Database<unknown, Key>, key: [ms, Number(second)] };
  }
}
