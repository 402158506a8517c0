/**
 * How a stored decision reads back: the list row and the detail. Rows are derived from the stored attestation at
 * read time, so the stored record is exactly what was signed and the row shape can change without a migration. A record
 * that contradicts its attestation is never answered (trail-agreement.ts).
 */
import { checkDecisionRecord } from "./trail-agreement.js";
import type { ConfirmationAudit, DecisionAudit, DecisionDetail, DecisionRow, OverrideAudit } from "./types.js";

export function decisionRow(
  decision: DecisionAudit,
  override: OverrideAudit | undefined,
  confirmation: ConfirmationAudit | undefined,
): DecisionRow {
  checkDecisionRecord(decision);
  const a = decision.attestation;
  // Variant 1 nests the outcome and the provenance; the legacy variant 2 carries both flat.
  const outcome = "outcome" in a.decision ? a.decision.outcome : a.decision;
  const signerKeyId = "provenance" in a ? a.provenance.signerKeyId : a.signerKeyId;
  return {
    executionId: decision.executionId,
    execution_fingerprint: a.execution_fingerprint,
    policyId: a.policyId,
    policyVersion: a.policyVersion,
    decision: decision.status,
    action: outcome.action,
    reason: outcome.reason,
    ruleMatched: decision.ruleMatched,
    execution_state: a.execution_state,
    signalsHash: a.signalsHash,
    signerKeyId,
    endpoint: decision.endpoint,
    overrideResolution: override === undefined ? null : override.approved ? "approved" : "rejected",
    confirmed: confirmation !== undefined,
    recordedAt: decision.recordedAt,
  };
}

export function decisionDetail(
  decision: DecisionAudit,
  override: OverrideAudit | undefined,
  confirmation: ConfirmationAudit | undefined,
): DecisionDetail {
  return {
    ...decisionRow(decision, override, confirmation),
    attestation: decision.attestation,
    signalProvenance: decision.signalProvenance ?? null,
    override: override ?? null,
    confirmation: confirmation ?? null,
  };
}
