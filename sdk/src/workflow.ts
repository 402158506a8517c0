/**
 * The authorization workflow of spec 1.9 (read the schema, evaluate, override, confirm the execution), with the
 * dry runs and verification beside it: the one interface both the HTTP client and the embedded authorizer implement,
 * so an application can switch between a sidecar and in-process evaluation without changing its code. The request
 * and response shapes are the wire's (`@writ/wire`).
 */
import type {
  Attestation,
  ConfirmExecutionRequest,
  ConfirmExecutionResponse,
  DryRunRequest,
  DryRunResponse,
  EvaluateRequest,
  EvaluateResponse,
  OverrideRequest,
  OverrideResponse,
  PolicySchema,
  SimulateResponse,
  VerifyResponse,
} from "@writ/wire";

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
