/**
 * The audit trail read back is held to what its records state of themselves, on every engine (docs/audit.md, "What a
 * read checks"): every decision read agrees with its attestation (runtime `decisionDisagreement`, what `writ audit
 * verify` checks), and every row a filtered listing found satisfies the filter as its own record states it (status,
 * policy, time). A store finds rows through fields it keeps beside each record (PostgreSQL's columns, LMDB's filter and
 * time indexes), which the record log's proof does not cover; edited, they would answer decisions not asked for.
 *
 * INVARIANT: no answer holds a decision its own records contradict. Such a read fails with `AuditTrailDisagrees`,
 * answered 500 `AUDIT_TRAIL_DISAGREES` with the executionId and the reason in the sidecar's log. A decision edited OUT
 * of a filter is not found by that query at all; the export names it (`indexed`) and `writ audit verify` fails it.
 */
import { decisionDisagreement } from "@writ/runtime";
import type { DecisionAudit, DecisionQuery, DecisionRow } from "./types.js";

export class AuditTrailDisagrees extends Error {
  override readonly name = "AuditTrailDisagrees";
  readonly code = "AUDIT_TRAIL_DISAGREES";
  constructor(
    readonly executionId: string,
    readonly reason: string,
  ) {
    super(`the audit trail's decision \`${executionId}\` ${reason}: the store was edited around writ (run writ audit verify on an export)`);
  }
}

/** @throws AuditTrailDisagrees when the record is not what its attestation states. */
export function checkDecisionRecord(decision: DecisionAudit): void {
  const why = decisionDisagreement(decision);
  if (why !== null) throw new AuditTrailDisagrees(String(decision.executionId), why);
}

/** @throws AuditTrailDisagrees when a row a listing found does not satisfy its query as the row's record states it. */
export function checkListed(rows: readonly DecisionRow[], query: DecisionQuery): void {
  for (const row of rows) {
    const why = unmatched(row, query);
    if (why !== null) throw new AuditTrailDisagrees(row.executionId, why);
  }
}

function unmatched(row: DecisionRow, query: DecisionQuery): string | null {
  if (query.decision !== undefined && row.decision !== query.decision)
    return `was found by the filter decision=${query.decision} but its record states ${row.decision}`;
  if (query.policyId !== undefined && row.policyId !== query.policyId)
    return `was found by the filter policyId=${query.policyId} but its attestation names ${row.policyId}`;
  // A record whose time does not parse was kept at the time it was stored; only a readable time can disagree.
  const at = Date.parse(row.recordedAt);
  if (Number.isFinite(at) && ((query.from !== undefined && at < query.from) || (query.to !== undefined && at > query.to)))
    return `was found by its time but its record states ${row.recordedAt}, outside the range asked for`;
  return null;
}
