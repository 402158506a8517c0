/**
 * The Surface A client (spec 4.1): one method per endpoint, each resolving to the answer body. `POST /evaluate` has
 * two methods, one per variant (`evaluate` signs, `dryRun` does not). Every error answer is a `WritApiError`.
 * `new GovernanceClient<WritPolicies>(options)`, with the map `writ typegen` generates, checks the signals of
 * `evaluate`, `dryRun`, `simulate` and `execute` against the named policy version's type (docs/sdk.md "Typed signals").
 */
import type {
  Attestation,
  AuditLogList,
  AuditLogStatus,
  AuditStats,
  Capabilities,
  ConfirmExecutionRequest,
  ConfirmExecutionResponse,
  DecisionDetail,
  DecisionRow,
  DryRunRequest,
  DryRunResponse,
  EvaluateRequest,
  EvaluateResponse,
  ExecuteRequest,
  ExecuteResponse,
  Health,
  OverrideRequest,
  OverrideResponse,
  PolicySchema,
  RuntimeManifestResponse,
  SecurityEventRow,
  SignedCheckpoint,
  InclusionProofJson,
  ConsistencyProofJson,
  SimulateResponse,
  VerifyResponse,
} from "@writ/wire";
import type { PolicyIdOf, TypedDryRunRequest, TypedEvaluateRequest, TypedExecuteRequest, UntypedPolicies } from "../typed-signals.js";
import type { AuthorizationWorkflow } from "../workflow.js";
import { HttpTransport, type CallOptions, type ClientOptions } from "./http.js";
import { queryOf, type DecisionQuery, type SecurityEventQuery } from "./query.js";

const segment = encodeURIComponent;

export class GovernanceClient<Policies extends object = UntypedPolicies> implements AuthorizationWorkflow<Policies> {
  readonly #http: HttpTransport;

  constructor(options: ClientOptions) {
    this.#http = new HttpTransport(options);
  }

  /** `GET /policies/{policyId}/versions/{version}/schema`: step 1 of the workflow (spec 1.9). */
  policySchema(policyId: string, policyVersion: string, call?: CallOptions): Promise<PolicySchema> {
    return this.#http.get(`/policies/${segment(policyId)}/versions/${segment(policyVersion)}/schema`, call);
  }

  /** `POST /evaluate` variant 1: a signed decision; its executionId is consumed once and for all. */
  evaluate<Id extends PolicyIdOf<Policies>, Version extends string>(
    request: TypedEvaluateRequest<Policies, Id, Version>,
    call?: CallOptions,
  ): Promise<EvaluateResponse>;
  evaluate(request: EvaluateRequest, call?: CallOptions): Promise<EvaluateResponse> {
    return this.#http.post("/evaluate", request, call);
  }

  /** `POST /evaluate` variant 2: what evaluate would decide, with no attestation and no side effect. */
  dryRun<Id extends PolicyIdOf<Policies>, Version extends string>(
    request: TypedDryRunRequest<Policies, Id, Version>,
    call?: CallOptions,
  ): Promise<DryRunResponse>;
  dryRun(request: DryRunRequest, call?: CallOptions): Promise<DryRunResponse> {
    return this.#http.post("/evaluate", request, call);
  }

  /** `POST /simulate`: no signing, no replay write, no audit record. */
  simulate<Id extends PolicyIdOf<Policies>, Version extends string>(
    request: TypedDryRunRequest<Policies, Id, Version>,
    call?: CallOptions,
  ): Promise<SimulateResponse>;
  simulate(request: DryRunRequest, call?: CallOptions): Promise<SimulateResponse> {
    return this.#http.post("/simulate", request, call);
  }

  /**
   * Legacy `POST /execute` (variant 2 attestation), rate-limited to 100 a minute.
   * @deprecated spec 1.10: new integrations use `evaluate`, `override` and `confirmExecution`
   */
  execute<Id extends PolicyIdOf<Policies>, Version extends string>(
    request: TypedExecuteRequest<Policies, Id, Version>,
    call?: CallOptions,
  ): Promise<ExecuteResponse>;
  execute(request: ExecuteRequest, call?: CallOptions): Promise<ExecuteResponse> {
    return this.#http.post("/execute", request, call);
  }

  /** `POST /verify`: stateless; `valid` false means the action must not proceed (spec 7). */
  verify(attestation: Attestation, call?: CallOptions): Promise<VerifyResponse> {
    return this.#http.post("/verify", attestation, call);
  }

  /** `POST /override`: a human resolves a `pending_override` decision, once. */
  override(request: OverrideRequest, call?: CallOptions): Promise<OverrideResponse> {
    return this.#http.post("/override", request, call);
  }

  /** `POST /confirm-execution`: the Execution Integrity Proof, once per executionId. */
  confirmExecution(request: ConfirmExecutionRequest, call?: CallOptions): Promise<ConfirmExecutionResponse> {
    return this.#http.post("/confirm-execution", request, call);
  }

  /** `GET /health`. */
  health(call?: CallOptions): Promise<Health> {
    return this.#http.get("/health", call);
  }

  /** `GET /runtime/manifest`. */
  runtimeManifest(call?: CallOptions): Promise<RuntimeManifestResponse> {
    return this.#http.get("/runtime/manifest", call);
  }

  /** `GET /runtime/capabilities`. */
  runtimeCapabilities(call?: CallOptions): Promise<Capabilities> {
    return this.#http.get("/runtime/capabilities", call);
  }

  /** `GET /audit/decisions`, newest first. */
  auditDecisions(query: DecisionQuery = {}, call?: CallOptions): Promise<DecisionRow[]> {
    return this.#http.get("/audit/decisions", call, queryOf(query));
  }

  /** `GET /audit/decisions/:executionId`: 404 when the trail has no decision for it. */
  auditDecision(executionId: string, call?: CallOptions): Promise<DecisionDetail> {
    return this.#http.get(`/audit/decisions/${segment(executionId)}`, call);
  }

  /** `GET /audit/stats`. */
  auditStats(call?: CallOptions): Promise<AuditStats> {
    return this.#http.get("/audit/stats", call);
  }

  /** `GET /audit/security`, newest first. */
  auditSecurityEvents(query: SecurityEventQuery = {}, call?: CallOptions): Promise<SecurityEventRow[]> {
    return this.#http.get("/audit/security", call, queryOf(query));
  }

  /** `GET /audit/logs`: the tamper-evident record logs the sidecar's store holds (on a fleet's database, every sidecar's). */
  auditLogs(call?: CallOptions): Promise<AuditLogList> {
    return this.#http.get("/audit/logs", call);
  }

  /** `GET /audit/log`: the state of the sidecar's record log, or of the log `logId`. */
  auditLog(logId?: string, call?: CallOptions): Promise<AuditLogStatus> {
    return this.#http.get("/audit/log", call, queryOf({ logId }));
  }

  /** `GET /audit/checkpoints`: signed checkpoints with `size` at least `from`, oldest first. */
  auditCheckpoints(
    query: { readonly from?: number; readonly limit?: number; readonly logId?: string } = {},
    call?: CallOptions,
  ): Promise<SignedCheckpoint[]> {
    return this.#http.get("/audit/checkpoints", call, queryOf(query));
  }

  /** `GET /audit/checkpoints/:size`: 404 when the log has no checkpoint of that size. */
  auditCheckpoint(size: number, logId?: string, call?: CallOptions): Promise<SignedCheckpoint> {
    return this.#http.get(`/audit/checkpoints/${size}`, call, queryOf({ logId }));
  }

  /**
   * `GET /audit/proofs/inclusion`: that the decision of `executionId` is in a checkpoint (default: the latest) of the log
   * that holds it. Check it offline with `verifyInclusionProof` and the pinned keys.
   */
  inclusionProof(executionId: string, size?: number, call?: CallOptions): Promise<InclusionProofJson> {
    return this.#http.get("/audit/proofs/inclusion", call, queryOf({ executionId, size }));
  }

  /** `GET /audit/proofs/consistency`: that the log at checkpoint `from` is a prefix of the log at `to`. */
  consistencyProof(from: number, to: number, logId?: string, call?: CallOptions): Promise<ConsistencyProofJson> {
    return this.#http.get("/audit/proofs/consistency", call, queryOf({ from, to, logId }));
  }

  /**
   * `GET /audit/export`: the record log as its export's lines (docs/audit.md, "Export"), parsed, read as they arrive;
   * `verifyAuditExport` checks them offline. Not retried.
   */
  auditExport(query: { readonly from?: number; readonly logId?: string } = {}, call?: CallOptions): AsyncGenerator<unknown> {
    return this.#http.lines("/audit/export", call, queryOf(query));
  }

  /** Closes the connection pool (unless it was given in the options). */
  close(): Promise<void> {
    return this.#http.close();
  }
}
