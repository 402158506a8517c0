/**
 * Decisions, overrides and confirmations on LMDB, encoded AS DATA for the replay store: each record becomes the puts
 * that store it (the record, and a decision's filter index entry), which the replay store writes in the write
 * transaction of the transition they record (replay-store.ts, runtime lmdb-puts.ts): committed exactly when it is,
 * flushed in its fsync; the record log holds its leaf once the transition's answer says it committed, or, where several
 * processes share the data dir, its pending entry is one of the puts (record-log-storage.ts, SHARED). Each key is
 * written once: only one such transition succeeds per execution. Encoded before the transition, on the event loop, once.
 */
import { entryLeafHash, executionFingerprint, type LogEntryKind, type TransitionRecord } from "@writ/runtime";
import type { LmdbPut } from "@writ/runtime/lmdb";
import type { Database, Key } from "lmdb";
import { recordInstant } from "../../audit/audit-trail.js";
import { shapeOf } from "../../audit/record-coding.js";
import { locators } from "../../audit/record-log/locator.js";
import type { ConfirmationAudit, DecisionAudit, OverrideAudit } from "../../audit/types.js";
import { CONFIRMATION_SUFFIX, OVERRIDE_SUFFIX, type AuditDatabases, type DecisionTimeKey } from "./audit-databases.js";
import type { LmdbAuditWriter } from "./audit-writer.js";
import { filterKey } from "./decision-filters.js";
import type { LmdbLogStorage } from "./record-log-storage.js";
import type { RecordTemplates } from "./record-templates.js";
import { asStored, encoded } from "./stored-bytes.js";

export class LmdbTransitionRecords {
  readonly #dbs: AuditDatabases;
  readonly #writer: LmdbAuditWriter;
  /** Whether decision records are coded against templates (audit/record-coding.ts), else stored as JSON. */
  readonly #templates: RecordTemplates | null;
  readonly #log: LmdbLogStorage | null;
  readonly #now: () => Date;

  constructor(
    dbs: AuditDatabases,
    writer: LmdbAuditWriter,
    templates: RecordTemplates | null,
    log: LmdbLogStorage | null,
    now: () => Date,
  ) {
    this.#dbs = dbs;
    this.#writer = writer;
    this.#templates = templates;
    this.#log = log;
    this.#now = now;
  }

  /**
   * `record` encoded for the write of the transition it records; undefined when it is not to be stored: the trail is
   * closed, or its encoding failed (recorded as the trail's failure: the transition goes ahead without it, as a record
   * whose write fails).
   */
  encode(record: TransitionRecord): EncodedRecord | undefined {
    if (!this.#writer.accepting()) return undefined;
    try {
      if (record.kind === "decision") return this.#decision(record.body, record.json);
      if (record.kind === "override") return this.#override(record.body);
      return this.#confirmation(record.body);
    } catch (error) {
      this.#writer.fail(error);
      return undefined;
    }
  }

  /**
   * Into the record log once `written` (the outcome of the write that stored `encoded`: true when it committed, false
   * when it did not, null when it failed; it never rejects) says it committed: held in memory until sequenced
   * (record-log-storage.ts, PENDING RECORDS).
   */
  logOnCommit(encoded: EncodedRecord, written: Promise<boolean | null>): void {
    if (encoded.leaf !== null && !this.#log!.pendsWithRecord) this.#log!.holdOnCommit(written, encoded.locator, encoded.leaf);
  }

  /** `record` stored on its own, with its pending entry, in the next write batch: for a store that shares no write (in memory). */
  writeAlone(record: TransitionRecord): void {
    const encoded = this.encode(record);
    if (encoded === undefined) return;
    this.#writer.queue(() => {
      for (const { db, key, value } of encoded.puts) this.#writer.watch(db.put(key, value));
      if (encoded.leaf !== null && !this.#log!.pendsWithRecord)
        this.#writer.watch(this.#log!.pend(encoded.ms, encoded.locator, encoded.leaf));
    });
  }

  /** `json`: the entry's JSON text when the runtime made it with the record (runtime `TransitionRecord`), stored as it is. */
  #decision(entry: DecisionAudit, json: string | undefined): EncodedRecord {
    // The attestation's own fingerprint of its executionId, not hashed a second time (runtime `recordFingerprint`).
    const fingerprint = entry.attestation.execution_fingerprint;
    const at: DecisionTimeKey = [recordInstant(entry.recordedAt, this.#now), fingerprint];
    const text = json ?? JSON.stringify(declaredDecision(entry));
    const bytes = Buffer.from(text, "utf8");
    const coded = this.#templates?.encode(shapeOf(entry), text) ?? null;
    const puts = [
      put(this.#dbs.decisionRecords, at, asStored(coded === null ? bytes : Buffer.from(coded, "utf8"))),
      put(this.#dbs.decisionFilters, filterKey(entry.attestation.policyId, entry.status, at[0], fingerprint), 0),
    ];
    return this.#encoded(puts, at[0], locators.decision(at[0], fingerprint), "decision", bytes);
  }

  #override(entry: OverrideAudit): EncodedRecord {
    const record: OverrideAudit = {
      executionId: entry.executionId,
      approved: entry.approved,
      approvedBy: entry.approvedBy,
      approverRole: entry.approverRole,
      reason: entry.reason,
      overrideId: entry.overrideId,
      record: entry.record,
      recordedAt: entry.recordedAt,
    };
    return this.#beside(entry.executionId, OVERRIDE_SUFFIX, record);
  }

  #confirmation(entry: ConfirmationAudit): EncodedRecord {
    const record: ConfirmationAudit = {
      executionId: entry.executionId,
      match: entry.match,
      proof: entry.proof,
      recordedAt: entry.recordedAt,
    };
    return this.#beside(entry.executionId, CONFIRMATION_SUFFIX, record);
  }

  /** An override or confirmation, beside the decision it follows (an override never replaces the decision, spec 1.8). */
  #beside(executionId: string, suffix: string, record: OverrideAudit | ConfirmationAudit): EncodedRecord {
    const fingerprint = executionFingerprint(executionId);
    const bytes = encoded(record);
    const kind: LogEntryKind = suffix === OVERRIDE_SUFFIX ? "override" : "confirmation";
    const locator = kind === "override" ? locators.override(fingerprint) : locators.confirmation(fingerprint);
    const puts = [put(this.#dbs.decisions, fingerprint + suffix, asStored(bytes))];
    return this.#encoded(puts, recordInstant(record.recordedAt, this.#now), locator, kind, bytes);
  }

  /**
   * With its leaf in the record log, hashed from the bytes stored (null when the log is off), and its pending entry
   * among the puts where several processes share the data dir.
   */
  #encoded(puts: LmdbPut[], ms: number, locator: string, kind: LogEntryKind, bytes: Uint8Array): EncodedRecord {
    const log = this.#log;
    const leaf = log === null ? null : entryLeafHash({ kind, record: bytes });
    if (leaf !== null && log!.pendsWithRecord) puts.push(log!.pendingPut(ms, locator, leaf));
    return { puts, ms, locator, leaf };
  }
}

/** A record encoded for the write that stores it: its puts, and what the record log keeps of it. */
export interface EncodedRecord {
  readonly puts: readonly LmdbPut[];
  /** The time its pending entry is keyed by, its locator (locator.ts), and its leaf hash (null: the record log is off). */
  readonly ms: number;
  readonly locator: string;
  readonly leaf: Uint8Array | null;
}

function put<V, K extends Key>(db: Database<V, K>, key: K, value: V): LmdbPut {
  return { db: db as unknown as Database<unknown, Key>, key, value };
}

/** Copied by name: only the declared fields are stored, whatever else the caller's object carries. */
function declaredDecision(entry: DecisionAudit): DecisionAudit {
  return {
    executionId: entry.executionId,
    endpoint: entry.endpoint,
    status: entry.status,
    ruleMatched: entry.ruleMatched,
    attestation: entry.attestation,
    ...(entry.signalProvenance === undefined ? {} : { signalProvenance: entry.signalProvenance }),
    recordedAt: entry.recordedAt,
  };
}
