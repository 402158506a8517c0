/**
 * Decisions, overrides and confirmations on LMDB: queued by the replay store's record writer (runtime `RecordWriter`)
 * inside the write transaction of the transition they record, with the environment's asynchronous `put`, so each
 * commits and flushes with its transition or not at all, with no round trip through a JavaScript transaction
 * callback. Each key is written once: only one such transition succeeds per execution. (Issue 42 item 2 replaces this
 * callback from the runtime with a store that writes them itself.)
 */
import { entryLeafHash, executionFingerprint, type LogEntryKind, type TransitionRecord } from "@writ/runtime";
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

  /** The replay store's record writer: `written` is the outcome of the transition the record is written with. */
  readonly write = (record: TransitionRecord, written: Promise<boolean | null>): void => {
    if (record.kind === "decision") this.decision(record.body, written, record.json);
    else if (record.kind === "override") this.override(record.body, written);
    else this.confirmation(record.body, written);
  };

  /** `json`: the entry's JSON text when the runtime made it with the record (runtime `TransitionRecord`), stored as it is. */
  decision(entry: DecisionAudit, written?: Promise<boolean | null>, json?: string): void {
    this.#writer.queue(() => {
      // The attestation's own fingerprint of its executionId, not hashed a second time (runtime `recordFingerprint`).
      const fingerprint = entry.attestation.execution_fingerprint;
      const at: DecisionTimeKey = [recordInstant(entry.recordedAt, this.#now), fingerprint];
      const text = json ?? JSON.stringify(declaredDecision(entry));
      const bytes = Buffer.from(text, "utf8");
      const coded = this.#templates?.encode(shapeOf(entry), text) ?? null;
      this.#writer.watch(this.#dbs.decisionRecords.put(at, asStored(coded === null ? bytes : Buffer.from(coded, "utf8"))));
      this.#writer.watch(this.#dbs.decisionFilters.put(filterKey(entry.attestation.policyId, entry.status, at[0], fingerprint), 0));
      this.#logRecord(written, at[0], locators.decision(at[0], fingerprint), "decision", bytes);
    });
  }

  override(entry: OverrideAudit, written?: Promise<boolean | null>): void {
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
    this.#putBeside(entry.executionId, OVERRIDE_SUFFIX, record, written);
  }

  confirmation(entry: ConfirmationAudit, written?: Promise<boolean | null>): void {
    const record: ConfirmationAudit = {
      executionId: entry.executionId,
      match: entry.match,
      proof: entry.proof,
      recordedAt: entry.recordedAt,
    };
    this.#putBeside(entry.executionId, CONFIRMATION_SUFFIX, record, written);
  }

  /** An override or confirmation, beside the decision it follows (an override never replaces the decision, spec 1.8). */
  #putBeside(
    executionId: string,
    suffix: string,
    record: OverrideAudit | ConfirmationAudit,
    written: Promise<boolean | null> | undefined,
  ): void {
    this.#writer.queue(() => {
      const fingerprint = executionFingerprint(executionId);
      const bytes = encoded(record);
      this.#writer.watch(this.#dbs.decisions.put(fingerprint + suffix, asStored(bytes)));
      const kind: LogEntryKind = suffix === OVERRIDE_SUFFIX ? "override" : "confirmation";
      const locator = kind === "override" ? locators.override(fingerprint) : locators.confirmation(fingerprint);
      this.#logRecord(written, recordInstant(record.recordedAt, this.#now), locator, kind, bytes);
    });
  }

  /**
   * Into the record log, from the bytes just queued: held in memory once `written` (the replay transition's outcome)
   * says they committed, else with a pending entry written beside them (record-log-storage.ts, PENDING RECORDS).
   */
  #logRecord(written: Promise<boolean | null> | undefined, ms: number, locator: string, kind: LogEntryKind, bytes: Uint8Array): void {
    const log = this.#log;
    if (log === null) return;
    const leaf = entryLeafHash({ kind, record: bytes });
    if (written === undefined) this.#writer.watch(log.pend(ms, locator, leaf));
    else log.pendOnCommit(written, locator, leaf);
  }
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
