/**
 * The audit trail's named databases in the LMDB environment (docs/audit.md, "Storage (LMDB)"), their key shapes and
 * counters. The ordinal of a verification or security event is its counter's value before the record, read in the
 * same transaction: keys are unique, and order one millisecond's records by arrival even with several writers.
 */
import { LmdbDurability } from "@writ/runtime/lmdb";
import type { Database, RootDatabase } from "lmdb";
import type { ConfirmationAudit, DecisionAudit, OverrideAudit, SecurityEventRow, VerificationAudit } from "../../audit/types.js";
import type { FilterKey } from "./decision-filters.js";
import { DECISION_RECORDS_DATABASE, RECORD_COMPRESSION_DATABASE, openDecisionRecords } from "./decision-records.js";
import { hasDatabase } from "./named-databases.js";
import { RecordTemplates } from "./record-templates.js";

/** The named databases of the log: the environment's `maxDbs` (lmdb-js default 12) must leave room for them. */
export const AUDIT_DATABASES = {
  decisions: "audit-decisions",
  decisionRecords: DECISION_RECORDS_DATABASE,
  recordCompression: RECORD_COMPRESSION_DATABASE,
  decisionFilters: "audit-decision-filters",
  verifications: "audit-verifications",
  security: "audit-security",
  counters: "audit-counters",
} as const;

/**
 * The time index of decisions before records were coded: each record's key, again, with its policy and status. The
 * records' own keys serve as the time index now, and a data dir that has it drops it at open.
 */
export const FORMER_DECISION_TIMES = "audit-decision-times";

export const COUNTERS = {
  prunes: "prunes",
  verifications: "verifications",
  validVerifications: "verifications_valid",
  securityEvents: "security_events",
  apiCalls: "api_calls",
} as const;

export type Counter = (typeof COUNTERS)[keyof typeof COUNTERS];

export type TimeKey = [ms: number, ordinal: number];
/** Decisions are keyed by time and fingerprint: unique without a counter, so a decision needs no read to be written. */
export type DecisionTimeKey = [ms: number, fingerprint: string];

/** `audit-decisions` keys: `<fingerprint>/override`, `<fingerprint>/confirmation`, beside the decision they follow. */
export const OVERRIDE_SUFFIX = "/override";
export const CONFIRMATION_SUFFIX = "/confirmation";

export interface AuditDatabases {
  readonly root: RootDatabase;
  readonly durability: LmdbDurability;
  /** Overrides and confirmations, under their two key shapes (`override`, `confirmation` read each). */
  readonly decisions: Database<unknown, string>;
  readonly decisionRecords: Database<DecisionAudit, DecisionTimeKey>;
  readonly decisionFilters: Database<number, FilterKey>;
  readonly verifications: Database<VerificationAudit, TimeKey>;
  readonly security: Database<SecurityEventRow, TimeKey>;
  readonly counters: Database<number, Counter>;
}

/** Opens the databases in `root`; throws when they cannot be opened (e.g. `maxDbs` is exhausted). */
export function openAuditDatabases(root: RootDatabase, compressRecords: boolean): AuditDatabases {
  return {
    root,
    durability: LmdbDurability.of(root),
    decisions: root.openDB<unknown, string>(AUDIT_DATABASES.decisions, { encoding: "json" }),
    decisionRecords: openDecisionRecords<DecisionAudit, DecisionTimeKey>(root, { compress: compressRecords }),
    decisionFilters: root.openDB<number, FilterKey>(AUDIT_DATABASES.decisionFilters, { encoding: "json" }),
    verifications: root.openDB<VerificationAudit, TimeKey>(AUDIT_DATABASES.verifications, { encoding: "json" }),
    security: root.openDB<SecurityEventRow, TimeKey>(AUDIT_DATABASES.security, { encoding: "json" }),
    counters: root.openDB<number, Counter>(AUDIT_DATABASES.counters, { encoding: "json" }),
  };
}

export function count(dbs: AuditDatabases, counter: Counter): number {
  return dbs.counters.get(counter) ?? 0;
}

/** Inside a write transaction: `write(ordinal)` stores a record, then the counter moves past the `events` it stands for. */
export function appendCounted(dbs: AuditDatabases, counter: Counter, write: (ordinal: number) => void, events = 1): void {
  const ordinal = count(dbs, counter);
  write(ordinal);
  dbs.counters.putSync(counter, ordinal + events);
}

export function override(dbs: AuditDatabases, fingerprint: string): OverrideAudit | undefined {
  return dbs.decisions.get(fingerprint + OVERRIDE_SUFFIX) as OverrideAudit | undefined;
}

export function confirmation(dbs: AuditDatabases, fingerprint: string): ConfirmationAudit | undefined {
  return dbs.decisions.get(fingerprint + CONFIRMATION_SUFFIX) as ConfirmationAudit | undefined;
}

/** The entries of `db`, counted by LMDB in O(1). */
export function entryCount(db: { getStats(): unknown }): number {
  return (db.getStats() as { entryCount: number }).entryCount;
}

/** A decision record's JSON bytes, as the record log hashes them, from its stored bytes (coded or not). */
export function recordBytes(root: RootDatabase, raw: Buffer): Buffer;
export function recordBytes(root: RootDatabase, raw: Buffer | undefined): Buffer | undefined;
export function recordBytes(root: RootDatabase, raw: Buffer | undefined): Buffer | undefined {
  return raw === undefined ? undefined : RecordTemplates.of(root).jsonBytes(raw);
}

/**
 * Drops the former time index (FORMER_DECISION_TIMES) of a data dir written before records were coded: one write
 * transaction, which frees its pages without reading its leaves. Nothing reads it any more.
 */
export function dropFormerTimes(root: RootDatabase, onError: (error: unknown) => void): void {
  if ((root as { readOnly?: boolean }).readOnly === true || !hasDatabase(root, FORMER_DECISION_TIMES)) return;
  LmdbDurability.of(root)
    .commit(root.openDB({ name: FORMER_DECISION_TIMES }).drop())
    .catch(onError);
}
