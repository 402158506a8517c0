/**
 * The authorization workflow of spec 1.9 (read the schema, evaluate, override, confirm the execution), with the
 * dry runs and verification beside it: the one interface both the HTTP client and the embedded authorizer implement,
 * so an application can switch between a sidecar and in-process evaluation without changing its code. The request
 * and response shapes are the wire's (`@writ/wire`); with a generated map of signals types (`writ typegen`) as
 * `Policies`, each request's signals are checked against the type of the policy version it names (typed-signals.ts).
 */
import type {
  Attestation,
  ConfirmExecutionRequest,
  ConfirmExecutionResponse,
  DryRunResponse,
  EvaluateResponse,
  OverrideRequest,
  OverrideResponse,
  PolicySchema,
  SimulateResponse,
  VerifyResponse,
} from "@writ/wire";
import type { PolicyIdOf, TypedDryRunRequest, TypedEvaluateRequest, UntypedPolicies } from "./typed-signals.js";

/** What both the Surface A client and the embedded authorizer offer; every refusal is a `WritApiError`. */
export interface AuthorizationWorkflow<Policies extends object = UntypedPolicies> {
  policySchema(policyId: string, policyVersion: string): Promise<PolicySchema>;
  evaluate<Id extends PolicyIdOf<Policies>, Version extends string>(
    request: TypedEvaluateRequest<Policies, Id, Version>,
  ): Promise<EvaluateResponse>;
  dryRun<Id extends PolicyIdOf<Policies>, Version extends string>(
    request: TypedDryRunRequest<Policies, Id, Version>,
  ): Promise<DryRunResponse>;
  simulate<Id extends PolicyIdOf<Policies>, Version extends string>(
    request: TypedDryRunRequest<Policies, Id, Version>,
  ): Promise<SimulateResponse>;
  override(request: OverrideRequest): Promise<OverrideResponse>;
  confirmExecution(request: ConfirmExecutionRequest): Promise<ConfirmExecutionResponse>;
  verify(attestation: Attestation): Promise<VerifyResponse>;
  close(): Promise<void>;
}
