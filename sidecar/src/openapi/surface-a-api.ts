/**
 * Surface A's operations, as its OpenAPI document shows them (docs/sidecar.md). One entry per route of
 * http/scopes.ts's `SURFACE_A_SCOPES`, with the same key; a test checks that the two tables and the routes served
 * agree.
 */
import {
  AuditLogList,
  AuditLogStatus,
  AuditStats,
  BundlesDetail,
  Capabilities,
  CheckpointList,
  CheckpointParams,
  CheckpointQuery,
  ConfirmExecutionRequest,
  ConfirmExecutionResponse,
  ConsistencyProofJson,
  ConsistencyProofQuery,
  DecisionDetail,
  DecisionList,
  DecisionParams,
  DecisionQuery,
  DryRunRequest,
  EvaluateAnswer,
  EvaluateBody,
  ExecuteRequest,
  ExecuteResponse,
  ExplainQuery,
  ExportQuery,
  LogQuery,
  Health,
  HealthQuery,
  InclusionProofJson,
  InclusionProofQuery,
  JsonObject,
  OverrideRequest,
  OverrideResponse,
  PolicySchema,
  PolicySchemaParams,
  ReloadRefusedBody,
  ReloadResponse,
  RuntimeManifestResponse,
  SecurityEventList,
  SecurityEventQuery,
  SignedCheckpoint,
  SimulateResponse,
  VerifyRequest,
  VerifyResponse,
} from "@writ/wire";
import type { Api } from "./operation.js";

const REFUSED_EVALUATION = ["POLICY_BUNDLE_MISSING", "POLICY_BUNDLE_INVALID", "SYS-006", "EVALUATION_FAILED"] as const;
const SIGNED_EVALUATION = ["INV-013", "INV-REPLAY-001", "RUNTIME_NOT_CONFIGURED", "REPLAY_STORE_UNAVAILABLE"] as const;
const AUDIT_LOG = ["AUDIT_LOG_UNAVAILABLE"] as const;
const document = (name: string) => ({
  summary: `The OpenAPI 3.1 document of ${name}`,
  description: `The same document as \`docs/openapi/${name}.json\` of the writ repository (made by \`npm run openapi\`).`,
  tag: "service",
  answers: { 200: { description: "The document.", schema: JsonObject } },
});

export const SURFACE_A_API: Api = {
  "GET /health": {
    summary: "Liveness, and readiness with `?probe=ready`",
    description:
      "The only route without a key (besides the documents). Liveness (`GET /health`) answers 200 while the process answers, whatever the body says. Readiness (`?probe=ready`) answers 503 while the sidecar cannot decide: no bundle is served (`bundles.ready` false, with `bundles.problem`), or the store does not take writes (`store.status` `error`, with `store.problem` and `since`: a failing data dir, or a database that is unreachable or has not answered its probe, every 500 ms, within 300 ms: shown within 1 s). `ready` is false then, and the body names which.",
    tag: "service",
    query: HealthQuery,
    answers: {
      200: { description: "The service's state.", schema: Health },
      503: { description: "`?probe=ready` while `ready` is false: no bundle can be served (`bundles`), or the store fails writes (`store`).", schema: Health },
    },
  },
  "POST /evaluate": {
    summary: "Decide, signed (variant 1), or dry run",
    description:
      "`verifiedSignals` signs a decision: an attestation, its executionId consumed once. `signals` without `verifiedSignals` is the dry run: what would be decided, with no attestation and no side effect. Both at once is a 400.",
    tag: "decisions",
    query: ExplainQuery,
    body: EvaluateBody,
    answers: { 200: { description: "The decision.", schema: EvaluateAnswer } },
    errors: ["POLICY_NOT_FOUND", "SIGNAL_VALIDATION_FAILED", "SIGNALS_VALIDATION_FAILED", ...REFUSED_EVALUATION, ...SIGNED_EVALUATION],
  },
  "POST /execute": {
    summary: "Decide, signed, in the legacy form (variant 2 attestation)",
    description: "At most 100 a minute per client.",
    tag: "decisions",
    body: ExecuteRequest,
    answers: { 200: { description: "The decision.", schema: ExecuteResponse } },
    errors: ["SIGNALS_VALIDATION_FAILED", ...REFUSED_EVALUATION, ...SIGNED_EVALUATION, "RATE_LIMITED"],
  },
  "POST /simulate": {
    summary: "What `/evaluate` would do, with no signing, replay write or audit record",
    tag: "decisions",
    query: ExplainQuery,
    body: DryRunRequest,
    answers: { 200: { description: "The simulation.", schema: SimulateResponse } },
    errors: ["SIGNALS_VALIDATION_FAILED", ...REFUSED_EVALUATION],
  },
  "POST /override": {
    summary: "Resolve a pending decision: a human approves or rejects it",
    tag: "decisions",
    body: OverrideRequest,
    answers: { 200: { description: "The resolution and its signed record.", schema: OverrideResponse } },
    errors: ["PENDING_OVERRIDE_NOT_FOUND", "OVERRIDE_ALREADY_RESOLVED", "SYS-021", "SYS-022", "SYS-023", "SYS-024", "SYS-025", "RUNTIME_NOT_CONFIGURED", "REPLAY_STORE_UNAVAILABLE"],
  },
  "POST /confirm-execution": {
    summary: "Confirm an executed action against its attestation: the signed Execution Integrity Proof",
    description: "Once per executionId. `executedAction.actionTimestamp` must be a date-time that exists, with a time zone.",
    tag: "decisions",
    body: ConfirmExecutionRequest,
    answers: { 200: { description: "The confirmation and its proof.", schema: ConfirmExecutionResponse } },
    errors: ["INTEGRITY_ALREADY_CONFIRMED", "INTEGRITY_INVALID_ATTESTATION", "RUNTIME_NOT_CONFIGURED", "REPLAY_STORE_UNAVAILABLE"],
  },
  "POST /verify": {
    summary: "Verify an attestation, statelessly",
    tag: "decisions",
    body: VerifyRequest,
    answers: { 200: { description: "`valid` false: the authorized action must not proceed.", schema: VerifyResponse } },
    errors: ["RUNTIME_NOT_CONFIGURED"],
  },
  "GET /policies/:policyId/versions/:version/schema": {
    summary: "A policy version's signals schema and governed action",
    tag: "decisions",
    params: PolicySchemaParams,
    answers: { 200: { description: "The policy schema.", schema: PolicySchema } },
    errors: ["POLICY_NOT_FOUND", "POLICY_BUNDLE_INVALID"],
  },
  "GET /runtime/manifest": {
    summary: "The runtime's version, hash and capabilities, and its signed manifest",
    tag: "service",
    answers: { 200: { description: "The runtime manifest.", schema: RuntimeManifestResponse } },
  },
  "GET /runtime/capabilities": {
    summary: "The runtime's capabilities",
    tag: "service",
    answers: { 200: { description: "The capabilities.", schema: Capabilities } },
  },
  "GET /audit/decisions": {
    summary: "Audited decisions, newest first, with filters and paging",
    tag: "audit",
    query: DecisionQuery,
    answers: { 200: { description: "The decisions.", schema: DecisionList } },
  },
  "GET /audit/decisions/:executionId": {
    summary: "One audited decision, with its override and confirmation",
    tag: "audit",
    params: DecisionParams,
    answers: { 200: { description: "The decision.", schema: DecisionDetail } },
    errors: ["DECISION_NOT_FOUND"],
  },
  "GET /audit/stats": {
    summary: "Counters of the audit trail",
    tag: "audit",
    answers: { 200: { description: "The counters, as decimal strings.", schema: AuditStats } },
  },
  "GET /audit/security": {
    summary: "Security events, newest first",
    tag: "audit",
    query: SecurityEventQuery,
    answers: { 200: { description: "The events.", schema: SecurityEventList } },
  },
  "GET /audit/logs": {
    summary: "The tamper-evident audit record logs the store holds",
    tag: "audit log",
    answers: { 200: { description: "The logs: this sidecar's, and on a fleet's database every other sidecar's.", schema: AuditLogList } },
    errors: AUDIT_LOG,
  },
  "GET /audit/log": {
    summary: "The state of a tamper-evident audit record log",
    tag: "audit log",
    query: LogQuery,
    answers: { 200: { description: "The log's state.", schema: AuditLogStatus } },
    errors: [...AUDIT_LOG, "LOG_NOT_FOUND"],
  },
  "GET /audit/checkpoints": {
    summary: "The log's signed checkpoints, oldest first",
    tag: "audit log",
    query: CheckpointQuery,
    answers: { 200: { description: "The checkpoints.", schema: CheckpointList } },
    errors: [...AUDIT_LOG, "LOG_NOT_FOUND"],
  },
  "GET /audit/checkpoints/:size": {
    summary: "The signed checkpoint of a log size",
    tag: "audit log",
    params: CheckpointParams,
    query: LogQuery,
    answers: { 200: { description: "The checkpoint.", schema: SignedCheckpoint } },
    errors: [...AUDIT_LOG, "CHECKPOINT_NOT_FOUND"],
  },
  "GET /audit/proofs/inclusion": {
    summary: "Proof that a decision's record is in a checkpoint of the log that holds it",
    tag: "audit log",
    query: InclusionProofQuery,
    answers: { 200: { description: "The inclusion proof.", schema: InclusionProofJson } },
    errors: [...AUDIT_LOG, "NOT_IN_CHECKPOINT"],
  },
  "GET /audit/proofs/consistency": {
    summary: "Proof that one checkpoint's log is a prefix of another's",
    tag: "audit log",
    query: ConsistencyProofQuery,
    answers: { 200: { description: "The consistency proof.", schema: ConsistencyProofJson } },
    errors: [...AUDIT_LOG, "CHECKPOINT_NOT_FOUND"],
  },
  "GET /audit/export": {
    summary: "The log as NDJSON, for `writ audit verify`",
    description:
      'One JSON object a line: `start`, then each `entry` (and a `checkpoint` after each entry that completes one), then any `unlogged` record (docs/audit.md, "Export").',
    tag: "audit log",
    query: ExportQuery,
    answers: { 200: { description: "The export, streamed.", text: "application/x-ndjson" } },
    errors: [...AUDIT_LOG, "CHECKPOINT_NOT_FOUND", "LOG_NOT_FOUND"],
  },
  "GET /metrics": {
    summary: "Prometheus metrics of both surfaces",
    tag: "service",
    answers: { 200: { description: "The Prometheus text exposition format.", text: "text/plain" } },
  },
  "GET /admin/bundles": {
    summary: "The bundles served, their aliases and the version conflicts refused",
    tag: "admin",
    answers: { 200: { description: "The bundles.", schema: BundlesDetail } },
  },
  "POST /admin/reload": {
    summary: "Read the bundle keys and every bundle again, as SIGHUP does",
    tag: "admin",
    answers: {
      200: { description: "Reloaded.", schema: ReloadResponse },
      409: { description: "Refused: nothing changed.", schema: ReloadRefusedBody },
    },
  },
  "GET /openapi/surface-a.json": document("surface-a"),
  "GET /openapi/surface-b.json": document("surface-b"),
};
