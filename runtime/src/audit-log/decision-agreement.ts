/**
 * What a stored decision record must agree with (docs/audit.md, "Verifying an export"):
 *
 * - its attestation: the record's `executionId` is the one the attestation signs, and its `status` is the status of the
 *   attestation's verdict. The record is JSON the store keeps beside the signed attestation; a record forged into a
 *   trail before the log took it in hashes to its own leaf, so only this check catches it.
 * - the fields a store keeps beside it for filtered queries (PostgreSQL's `status` and `policy_id` columns): they are
 *   outside the log's proof, so an export names them (`indexed`) whenever they are not the record's own, and the
 *   verifier fails that entry. Edited, they would change which decisions a filtered query finds.
 */
import { VERDICT_STATUS } from "../attest/attestation.js";
import { attestedDecision } from "../attest/verify.js";
import type { Verdict } from "../ir/types.js";

/** A decision record's fields this module reads (runtime `DecisionAuditRecord`). */
export interface DecisionFields {
  readonly executionId?: unknown;
  readonly status?: unknown;
  readonly attestation?: unknown;
}

/** The filter fields a store keeps beside a decision record, as it keeps them (null where it keeps none). */
export interface IndexedFields {
  readonly status: string | null;
  readonly policyId: string | null;
}

/** Why the record's own fields are not what its attestation states; null when they are. */
export function decisionDisagreement(record: DecisionFields): string | null {
  const attested = attestedDecision(record.attestation);
  if (attested === null || record.executionId !== attested.executionId) return "its executionId is not its attestation's";
  const status = Object.hasOwn(VERDICT_STATUS, attested.action) ? VERDICT_STATUS[attested.action as Verdict].status : null;
  if (record.status !== status) return `its status is not its attestation's verdict (${status ?? "none"})`;
  return null;
}

/** The fields a filtered query matches a decision record by: its status, and the policy its attestation names. */
export function filterFieldsOf(record: DecisionFields): IndexedFields {
  const policyId = (record.attestation as { policyId?: unknown } | null | undefined)?.policyId;
  return { status: typeof record.status === "string" ? record.status : null, policyId: typeof policyId === "string" ? policyId : null };
}

/** Why `indexed` (an export's `indexed` member) is not the record's own filter fields; null when it is. */
export function indexedDisagreement(indexed: unknown, record: DecisionFields): string | null {
  const own = filterFieldsOf(record);
  const kept = indexed as Partial<IndexedFields> | null;
  if (typeof kept !== "object" || kept === null) return "its store's filter fields are malformed";
  if (kept.status === own.status && kept.policyId === own.policyId) return null;
  return (
    `its store keeps it for filtered queries as status ${String(kept.status)} and policy ${String(kept.policyId)}, ` +
    `not as the record states (status ${String(own.status)}, policy ${String(own.policyId)}): the store was edited around the log`
  );
}
