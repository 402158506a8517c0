import { canonicalJson } from "../canonical/jcs.js";
import { sha256Hex } from "../canonical/digest.js";
import { IntegrityError } from "../errors.js";
import type { ReplayStore } from "../replay/store.js";
import type { ConfirmationAuditRecord } from "../replay/records.js";
import { endPhase, phaseStart, timedPhase, type DecisionReport } from "../report.js";
import { PAYLOAD_TYPES } from "../signing/payload-types.js";
import { signObjectVerified } from "../signing/sign.js";
import { executionFingerprint, type Attestation } from "./attestation.js";
import type { ConfirmExecutionResponse, ExecutedAction, ExecutedActionInput, ExecutionProof, MatchDetails } from "@writ/wire/types";
import type { Signer } from "./trust-root.js";
import { verifyAttestation, type VerifierOptions } from "./verify.js";

/** ExecutedActionRequest: spec 2.9's endpoint form of an executed action; ConfirmationAnswer: the endpoint's answer. */
export type {
  ConfirmExecutionResponse as ConfirmationAnswer,
  ExecutedAction,
  ExecutedActionInput as ExecutedActionRequest,
  ExecutionProof,
  MatchDetails,
};

export const DEFAULT_TIME_WINDOW_SECONDS = 300;

export interface ConfirmDependencies {
  readonly verifier: VerifierOptions;
  readonly signer: Signer;
  /** Holds decisions (for override outcomes) and confirmations (once per executionId). */
  readonly store: ReplayStore;
  readonly now?: () => Date;
  /**
   * Where the phases are written: `verify` (the attestation), `evaluate` (the executed action matched against it),
   * `sign` (the proof), `write` (report.ts).
   */
  readonly report?: DecisionReport;
}

/** The key of a confirmation in the replay store: its own domain, so it never collides with an execution. */
export function confirmationKey(executionId: string): string {
  return sha256Hex(canonicalJson({ domain: "writ.confirmation.v1", executionId }));
}

/**
 * Confirms that an executed action matches the one authorized, once per executionId.
 * INVARIANT (one confirmation per executionId): the proof is signed first, then the confirmation key is consumed in
 * one conditional write that also carries its audit record (with the proof); the proof leaves only once that write
 * is durable. Of racing confirmations one wins and the others' proofs are discarded. A crash before the write leaves
 * nothing behind, so the execution stays confirmable; a crash after it leaves the confirmation with its record.
 * @throws IntegrityError INTEGRITY_INVALID_ATTESTATION when the attestation does not verify,
 *   INTEGRITY_ALREADY_CONFIRMED when this executionId was confirmed before
 */
export async function confirmExecution(
  attestation: unknown,
  executed: ExecutedAction,
  timeWindowSeconds: number,
  deps: ConfirmDependencies,
): Promise<ExecutionProof> {
  const { report } = deps;
  const verifying = phaseStart(report);
  const verification = verifyAttestation(attestation, deps.verifier);
  const matching = endPhase(report, "verify", verifying);
  if (!verification.valid) {
    throw new IntegrityError("INTEGRITY_INVALID_ATTESTATION", `attestation does not verify: ${verification.errors.join("; ")}`);
  }
  const att = attestation as Attestation;
  const key = confirmationKey(att.executionId);
  const confirmedAt = (deps.now ?? (() => new Date()))();
  const outcome = "outcome" in att.decision ? att.decision.outcome : att.decision;
  const executionAuthorized =
    outcome.action === "approve" || (outcome.action === "escalate" && (await overrideApproved(deps.store, att.executionId)));
  const matchDetails: MatchDetails = {
    actionTypeMatch: executed.type === att.actionType,
    payloadConsistent: echoes(executed.payload, att.actionBinding),
    withinTimeWindow: withinWindow(att.issuedAt, executed.executedAt, confirmedAt, timeWindowSeconds),
    timeWindowSeconds,
    executionAuthorized,
  };
  const signing = endPhase(report, "evaluate", matching);
  const authorizationId = sha256Hex(canonicalJson(att));
  const body = {
    executionId: att.executionId,
    authorizationId,
    integrityHash: sha256Hex(canonicalJson({ authorizationId, executed })),
    authorized: {
      action: outcome.action,
      actionType: att.actionType,
      reason: outcome.reason,
      policyId: att.policyId,
      policyVersion: att.policyVersion,
    },
    executed,
    // INVARIANT (match means authorized and as authorized): all three checks and the authorization.
    match: matchDetails.actionTypeMatch && matchDetails.payloadConsistent && matchDetails.withinTimeWindow && executionAuthorized,
    matchDetails,
    confirmedAt: confirmedAt.toISOString(),
    verified: true as const,
  };
  const signature = await signObjectVerified(PAYLOAD_TYPES.executionProof, body, deps.signer.key, deps.signer.engine);
  const proof: ExecutionProof = { ...body, signature };
  const record: ConfirmationAuditRecord = { executionId: proof.executionId, match: proof.match, proof, recordedAt: proof.confirmedAt };
  const writing = endPhase(report, "sign", signing);
  const consuming = deps.store.consume(key, { now: confirmedAt.getTime(), record: { kind: "confirmation", body: record } });
  const done = await timedPhase(report, "write", writing, consuming);
  if (!done.ok) throw alreadyConfirmed(att.executionId);
  return proof;
}

function alreadyConfirmed(executionId: string): IntegrityError {
  return new IntegrityError("INTEGRITY_ALREADY_CONFIRMED", `execution \`${executionId}\` is already confirmed`);
}

/** An escalated decision authorizes execution only once a human approved it: its entry was consumed by the override. */
async function overrideApproved(store: ReplayStore, executionId: string): Promise<boolean> {
  const entry = await store.read(executionFingerprint(executionId));
  return entry?.state === "consumed";
}

/** Every bound signal appears in the executed payload with the same value (compared in canonical form). */
function echoes(payload: Readonly<Record<string, unknown>>, binding: Readonly<Record<string, unknown>>): boolean {
  return Object.entries(binding).every(
    ([name, value]) => Object.prototype.hasOwnProperty.call(payload, name) && canonicalJson(payload[name]) === canonicalJson(value),
  );
}

/** Executed no earlier than authorized, no later than confirmed, and confirmed within the window. */
function withinWindow(issuedAt: string, executedAt: string, confirmedAt: Date, windowSeconds: number): boolean {
  const issued = Date.parse(issuedAt);
  const executed = Date.parse(executedAt);
  const confirmed = confirmedAt.getTime();
  if (Number.isNaN(issued) || Number.isNaN(executed)) return false;
  return executed >= issued && executed <= confirmed && confirmed - executed <= windowSeconds * 1000;
}

/** The library form of an endpoint-form executed action; an absent `actionDetails` is an empty payload. */
export function executedActionOf(request: ExecutedActionInput): ExecutedAction {
  return {
    type: request.actionType,
    payload: request.actionDetails ?? {},
    executedAt: request.actionTimestamp,
    actionId: request.actionId,
  };
}

export function confirmationAnswer(proof: ExecutionProof): ConfirmExecutionResponse {
  return {
    matched: proof.match,
    executionId: proof.executionId,
    withinTimeWindow: proof.matchDetails.withinTimeWindow,
    proof: canonicalJson(proof),
    match: proof.match,
    verified: proof.verified,
  };
}
