/**
 * The authorization workflow of spec 1.9 (read the schema, evaluate, override, confirm the execution), with the
 * dry runs and verification beside it: the request and response shapes of Surface A (spec 2, docs/sidecar.md), and
 * the one interface both the HTTP client and the embedded authorizer implement, so an application can switch
 * between a sidecar and in-process evaluation without changing its code.
 */
import type { Attestation, AttestationV1, DryRun, EndpointVerification, Evaluated, OverrideOutcome, OverrideRequest, Simulation } from "@writ/runtime";

export type Signals = Readonly<Record<string, unknown>>;

/** `POST /evaluate` variant 1 (spec 2.1). */
export interface EvaluateRequest {
  readonly executionId: string;
  readonly policyId: string;
  readonly policyVersion: string;
  /** Facts the caller has already verified (spec 1.1). */
  readonly verifiedSignals: Signals;
  /** Where each signal came from: audited, never hashed or evaluated (DESIGN.md section 3). */
  readonly signalProvenance?: Readonly<Record<string, unknown>>;
}

/** `POST /evaluate` variant 2 (the dry run) and `POST /simulate`: no attestation, no side effect (spec 1.11). */
export interface DryRunRequest {
  readonly policyId: string;
  readonly policyVersion: string;
  readonly signals: Signals;
  readonly signalProvenance?: Readonly<Record<string, unknown>>;
}

/** Spec 2.4: `{status, requires_override, attestation}`; the attestation is kept and passed on exactly as returned. */
export type EvaluateResponse = Evaluated<AttestationV1>;
/** Spec 2.6. */
export type DryRunResponse = DryRun;
/** Spec 2.7. */
export type SimulateResponse = Simulation;
/** Spec 2.10, endpoint form: each check `verified`, `failed` or `unknown`. */
export type VerifyResponse = EndpointVerification;

export type { OverrideRequest };
/** Spec 2.8, plus the override `record` (signed in the override domain; `verifyOverrideRecord` checks it offline). */
export type OverrideResponse = OverrideOutcome;

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

export interface ConfirmExecutionRequest {
  readonly attestation: Attestation;
  readonly executedAction: ExecutedActionInput;
  /** Default 300 (spec 8). */
  readonly timeWindowSeconds?: number;
}

/** Spec 2.9, endpoint form; `match` and `verified` repeat the response summary the spec also shows. */
export interface ConfirmExecutionResponse {
  readonly matched: boolean;
  readonly executionId: string;
  readonly withinTimeWindow: boolean;
  /** The signed Execution Integrity Proof as its canonical JSON text; `verifyExecutionProof` checks and parses it. */
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

/** What both the Surface A client and the embedded authorizer offer; every refusal is a `WritApiError`. */
export interface AuthorizationWorkflow {
  policySchema(policyId: string, policyVersion: string): Promise<PolicySchema>;
  evaluate(request: EvaluateRequest): Promise<EvaluateResponse>;
  dryRun(request: DryRunRequest): Promise<DryRunResponse>;
  simulate(request: DryRunRequest): Promise<SimulateResponse>;
  override(request: OverrideRequest): Promise<OverrideResponse>;
  confirmExecution(request: ConfirmExecutionRequest): Promise<ConfirmExecutionResponse>;
  verify(attestation: Attestation): Promise<VerifyResponse>;
  close(): Promise<void>;
}
