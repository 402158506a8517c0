/**
 * A stopped sidecar's LMDB data dir, read for `writ-sidecar import-lmdb` (storage/postgres/import-lmdb.ts, docs/fleet.md,
 * "Moving an LMDB sidecar's data over"): the environment opened read-only and never changed, each kind of state it
 * holds answered as plain rows, decoded, in the order of its database.
 *
 * Every read is lazy: each method answers an iterable that opens its database and walks it as it is iterated (the
 * importer copies it in chunks), so no database is held in memory whole. A database the sidecar never created (a trail
 * it never wrote) answers no rows.
 */
import { realpathSync } from "node:fs";
import { DEFAULT_REPLAY_DB_NAME, decodeReplayEntry, loggedReplayEntries } from "@writ/runtime/lmdb";
import { open, type Database, type Key, type RootDatabase } from "lmdb";
import type { ConfirmationAudit, DecisionAudit, OverrideAudit, SecurityEventRow, VerificationAudit } from "../../audit/types.js";
import { AUDIT_DATABASES } from "./audit-databases.js";
import { BUNDLE_PINS_DATABASE } from "./bundle-pins.js";
import { openDecisionRecords } from "./decision-records.js";
import { hasDatabase } from "./named-databases.js";
import { SURFACE_B_DATABASES } from "./record-store.js";

/** A replay entry as the LMDB store keeps it (runtime lifecycle.ts). */
export interface LmdbReplayEntry {
  readonly state: string;
  readonly token: string;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly expiresAt: number | null;
  readonly context?: unknown;
  readonly resolution?: unknown;
}

export interface ExportedReplayEntry {
  /** The entry's key: an execution fingerprint, or a confirmation key. */
  readonly fingerprint: string;
  readonly entry: LmdbReplayEntry;
}

export interface ExportedDecision {
  /** The instant the trail sorts it by (ms). */
  readonly recordedAt: number;
  readonly decision: DecisionAudit;
}

export interface ExportedVerification {
  readonly recordedAt: number;
  readonly verification: VerificationAudit;
}

export interface ExportedSecurityEvent {
  /** The instant the trail sorts it by (ms). */
  readonly at: number;
  readonly event: SecurityEventRow;
}

export interface ExportedTrustRecord {
  readonly id: string;
  /** The sealed record's JSON text, as stored. */
  readonly body: string;
}

export type TrustHistoryKind = "verification" | "receipt";

export interface ExportedTrustHistory {
  /** The Trust Record's id. */
  readonly id: string;
  readonly kind: TrustHistoryKind;
  /** The verification's or receipt's JSON text, as stored. */
  readonly body: string;
}

export interface ExportedBundlePin {
  readonly policyId: string;
  readonly version: string;
  readonly bundleHash: string;
}

export interface ExportedCounter {
  readonly name: string;
  readonly value: number;
}

export interface LmdbDataDirExport {
  /** The data dir's real path (symbolic links resolved). */
  readonly source: string;
  /** Every replay entry, by key. */
  replayEntries(): Iterable<ExportedReplayEntry>;
  /** Every decision record, in time order. */
  decisions(): Iterable<ExportedDecision>;
  /** Every override record, by executionId. */
  overrides(): Iterable<OverrideAudit>;
  /** Every confirmation record, by executionId. */
  confirmations(): Iterable<ConfirmationAudit>;
  /** Every verification, in time order. */
  verifications(): Iterable<ExportedVerification>;
  /** Every security event, in time order. */
  securityEvents(): Iterable<ExportedSecurityEvent>;
  /** Surface B's Trust Records in their creation order (none unless both its order and its records are there). */
  trustRecords(): Iterable<ExportedTrustRecord>;
  /** Surface B's verifications or receipts, by Trust Record id then in their order. */
  trustHistory(kind: TrustHistoryKind): Iterable<ExportedTrustHistory>;
  /** Every bundle pin, by `policyId@version`. */
  bundlePins(): Iterable<ExportedBundlePin>;
  /** The counters of `/audit/stats` that outlive retention. */
  counters(): Iterable<ExportedCounter>;
  /** Closes the environment; call it once every iterable is done with. */
  close(): Promise<void>;
}

/** Opens the LMDB environment at `dataDir` read-only. */
export function openLmdbDataDir(dataDir: string): LmdbDataDirExport {
  const source = realpathSync(dataDir);
  const root = open({ path: source, readOnly: true, maxDbs: 32, noSubdir: false });
  const history = { verification: SURFACE_B_DATABASES.verifications, receipt: SURFACE_B_DATABASES.receipts } as const;
  return {
    source,
    *replayEntries() {
      // Entries of either stored form (runtime lmdb-entry-encoding.ts), as entries.
      const replay = hasDatabase(root, DEFAULT_REPLAY_DB_NAME)
        ? root.openDB<unknown, string>(DEFAULT_REPLAY_DB_NAME, { encoding: "json" })
        : null;
      if (replay)
        for (const { key, value } of replay.getRange({}))
          yield { fingerprint: key, entry: decodeReplayEntry(value, key) as LmdbReplayEntry };
      // And the entry log's, where this release stores the entry of each new fingerprint (docs/replay.md).
      if (hasDatabase(root, `${DEFAULT_REPLAY_DB_NAME}-log`))
        for (const { fingerprint, value } of loggedReplayEntries(root, DEFAULT_REPLAY_DB_NAME))
          yield { fingerprint, entry: decodeReplayEntry(value, fingerprint) as LmdbReplayEntry };
    },
    *decisions() {
      const decisions = hasDatabase(root, AUDIT_DATABASES.decisionRecords)
        ? openDecisionRecords<DecisionAudit, [number, string]>(root)
        : null;
      if (decisions) for (const { key, value } of decisions.getRange({})) yield { recordedAt: key[0], decision: value };
    },
    overrides: () => beside<OverrideAudit>(root, "/override"),
    confirmations: () => beside<ConfirmationAudit>(root, "/confirmation"),
    *verifications() {
      const verifications = openIfPresent<VerificationAudit, [number, number]>(root, AUDIT_DATABASES.verifications, "json");
      if (verifications) for (const { key, value } of verifications.getRange({})) yield { recordedAt: key[0], verification: value };
    },
    *securityEvents() {
      const security = openIfPresent<SecurityEventRow, [number, number]>(root, AUDIT_DATABASES.security, "json");
      if (security) for (const { key, value } of security.getRange({})) yield { at: key[0], event: value };
    },
    *trustRecords() {
      const order = openIfPresent<string, number>(root, SURFACE_B_DATABASES.order, "string");
      const records = openIfPresent<string, string>(root, SURFACE_B_DATABASES.records, "string");
      if (order && records) for (const { value: id } of order.getRange({})) yield { id, body: records.get(id)! };
    },
    *trustHistory(kind) {
      const entries = openIfPresent<string, [string, number]>(root, history[kind], "string");
      if (entries) for (const { key, value } of entries.getRange({})) yield { id: key[0], kind, body: value };
    },
    *bundlePins() {
      const pins = openIfPresent<string, string>(root, BUNDLE_PINS_DATABASE, "string");
      if (pins) for (const { key, value } of pins.getRange({})) yield { ...pinOf(key), bundleHash: value };
    },
    *counters() {
      const counters = openIfPresent<number, string>(root, AUDIT_DATABASES.counters, "json");
      if (counters) for (const { key, value } of counters.getRange({})) yield { name: key, value };
    },
    close: () => root.close(),
  };
}

/** The records kept beside the decisions (`<executionId>/override`, `<executionId>/confirmation`) whose key ends in `suffix`. */
function* beside<V>(root: RootDatabase, suffix: string): Generator<V> {
  const db = openIfPresent<V, string>(root, AUDIT_DATABASES.decisions, "json");
  if (db) for (const { key, value } of db.getRange({})) if (key.endsWith(suffix)) yield value;
}

/** A bundle pin's key, `policyId@version`, split at its last `@`. */
function pinOf(key: string): { readonly policyId: string; readonly version: string } {
  const at = key.lastIndexOf("@");
  return { policyId: key.slice(0, at), version: key.slice(at + 1) };
}

/** A named database of the environment, or null when the sidecar never created it (a trail it never wrote). */
function openIfPresent<V, K extends Key>(root: RootDatabase, name: string, encoding: "json" | "string"): Database<V, K> | null {
  if (!hasDatabase(root, name)) return null;
  return root.openDB<V, K>(name, { encoding });
}
