/**
 * Surface A's decision endpoints (spec 2.1, 2.4 to 2.10, 4.1; writ's additions: docs/sidecar.md): evaluate and its
 * dry run, the legacy execute, simulate, verify, override, confirm-execution and the policy schema. Request bodies
 * are closed: a member not named here is a 400.
 */
import type { Attestation, AttestationPreview, AttestationV1, AttestationV2 } from "./attestation.js";
import type { DecisionStatus, ExecutionState, JsonObject, Signals, Verdict } from "./common.js";
import type { OverrideRecord } from "./evidence.js";

/** `POST /evaluate` variant 1 (spec 2.1). */
export interface EvaluateRequest {
  readonly executionId: string;
  readonly policyId: string;
  readonly policyVersion: string;
  /** Facts the caller has already verified (spec 1.1). */
  readonly verifiedSignals: Signals;
  /** Where each signal came from: audited, never hashed or evaluated. */
  readonly signalProvenance?: JsonObject;
}

/** `POST /evaluate` variant 2 (the dry run) and `POST /simulate`: no attestation, no side effect (spec 1.11). */
export interface DryRunRequest {
  readonly policyId: string;
  readonly policyVersion: string;
  readonly signals: Signals;
  readonly signalProvenance?: JsonObject;
}

/** `POST /simulate` takes the dry run's body. */
export type SimulateRequest = DryRunRequest;

/** Legacy `POST /execute` (spec 4.1): all four members required. */
export interface ExecuteRequest {
  readonly executionId: string;
  readonly policyId: string;
  readonly policyVersion: string;
  readonly signals: Signals;
  readonly signalProvenance?: JsonObject;
}

/** Spec 2.4: the attestation is kept and passed on exactly as returned. */
export interface EvaluateResponse {
  readonly status: DecisionStatus;
  /** True only for `pending_override`. */
  readonly requires_override: boolean;
  readonly attestation: AttestationV1;
}

/** Spec 2.5: `status` is `approved`, or else the attestation's `execution_state` (`completed` for a rejection). */
export interface ExecuteResponse {
  readonly status: "approved" | ExecutionState;
  readonly requires_override: boolean;
  readonly attestation: AttestationV2;
}

/** Spec 2.6. */
export interface DryRunResponse {
  readonly wouldDecide: DecisionStatus;
  readonly ruleMatched: string;
  readonly reason: string;
  readonly signalsValidated: true;
  /** Only when asked for with `?explain=true` (writ's addition; the spec's answer has no such member). */
  readonly explanation?: Explanation;
}

/**
 * Why the policy decides as it does for the signals sent (docs/sidecar.md, "Explanations"): every rule's condition,
 * evaluated down to the signals, by the same operators as the decision.
 */
export interface Explanation {
  /** Every rule in order, those after the one that decides included. */
  readonly rules: readonly ExplainedRule[];
  /** What decides when no rule's condition is true; null when the policy has no catch-all. */
  readonly otherwise: { readonly verdict: Verdict; readonly reason: string } | null;
}

export interface ExplainedRule {
  readonly rule: string;
  readonly verdict: Verdict;
  readonly reason: string;
  /** Only a rule whose condition is `true` decides; `unknown` comes from an absent optional signal. */
  readonly result: "true" | "false" | "unknown";
  readonly condition: ExplainedExpr;
}

export interface ExplainedExpr {
  /** The expression as the compiled policy has it (constants inlined), compound operands in parentheses. */
  readonly expr: string;
  /** Its value; null when unknown (for a signal: it was not sent). */
  readonly value: string | number | boolean | null;
  /** What it was computed from; absent for a literal, a signal and `present(...)`. */
  readonly operands?: readonly ExplainedExpr[];
}

/** Spec 2.7: what evaluate would do, with no signing, replay write or audit record. */
export interface SimulateResponse {
  readonly simulation: true;
  readonly decision: { readonly action: Verdict; readonly reason: string; readonly ruleMatched: string };
  readonly signalsValidated: true;
  readonly policyLoaded: true;
  /** Whether the service has a signing key, so that `/evaluate` would sign. */
  readonly wouldSign: boolean;
  /** The variant 1 attestation that would be signed, without its signature (and with a placeholder executionId). */
  readonly attestationPreview: AttestationPreview;
  /** Only when asked for with `?explain=true`, as for the dry run. */
  readonly explanation?: Explanation;
}

/** `POST /verify` takes an attestation of either variant as its whole body. */
export type VerifyRequest = Attestation;

/** One check of the endpoint form of verification. */
export type CheckResult = "verified" | "failed" | "unknown";

/** Spec 2.10, endpoint form: `valid` false means the authorized action must not proceed (spec 7). */
export interface VerifyResponse {
  readonly valid: boolean;
  readonly checks: { readonly signature: CheckResult; readonly runtime: CheckResult; readonly schema: CheckResult };
}

/** Spec 2.8: the human decision on a pending decision; every member required. */
export interface OverrideRequest {
  readonly executionId: string;
  readonly approved: boolean;
  readonly approvedBy: string;
  readonly approverRole: string;
  readonly reason: string;
}

/** Spec 2.8, plus the override `record` (signed in the override domain). */
export type OverrideResponse =
  | {
      readonly status: "approved";
      readonly overrideId: string;
      readonly resolution: { readonly status: "executed"; readonly execution_fingerprint: string; readonly signature: string };
      readonly record: OverrideRecord;
    }
  | { readonly status: "rejected"; readonly executionId: string; readonly record: OverrideRecord };

/** Spec 2.9, endpoint form of the executed action. */
export interface ExecutedActionInput {
  /** Must be the policy's governed action (`governs.actionType` of the schema). */
  readonly actionType: string;
  /** The executing system's own identifier of the action. */
  readonly actionId: string;
  /** ISO 8601 with a time zone. */
  readonly actionTimestamp: string;
  /** Must echo every bound signal (`governs.binding`) with the authorized value. */
  readonly actionDetails?: Readonly<Record<string, unknown>>;
}

/** `POST /confirm-execution` (spec 2.9). */
export interface ConfirmExecutionRequest {
  readonly attestation: Attestation;
  readonly executedAction: ExecutedActionInput;
  /** Above 0, at most a year; default 300 (spec 8). */
  readonly timeWindowSeconds?: number;
}

/** Spec 2.9, endpoint form; `match` and `verified` repeat the response summary the spec also shows. */
export interface ConfirmExecutionResponse {
  readonly matched: boolean;
  readonly executionId: string;
  readonly withinTimeWindow: boolean;
  /** The signed Execution Integrity Proof (`ExecutionProof`) as its canonical JSON text: exactly what it signs. */
  readonly proof: string;
  readonly match: boolean;
  readonly verified: true;
}

/** `GET /policies/{policyId}/versions/{version}/schema` (spec 1.9 step 1; shape: docs/sidecar.md). */
export interface PolicySchema {
  readonly policyId: string;
  readonly policyVersion: string;
  readonly schemaVersion: string;
  readonly bundleHash: string;
  /** The action the policy governs and the signals the executed action must echo (confirm-execution). */
  readonly governs: { readonly actionType: string; readonly binding: readonly string[] };
  /** JSON Schema of the signals. */
  readonly signalsSchema: Readonly<Record<string, unknown>>;
}
