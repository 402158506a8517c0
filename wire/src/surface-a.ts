/**
 * Surface A's decision endpoints (spec 2.1, 2.4 to 2.10, 4.1; writ's additions: docs/sidecar.md): evaluate and its
 * dry run, the legacy execute, simulate, verify, override, confirm-execution and the policy schema. Request bodies
 * are closed: a member not named here is a 400. Signals are checked here only as objects: their content is the
 * policy's schema's business (422).
 */
import { Type } from "typebox";
import { AttestationInput, AttestationPreview, AttestationV1, AttestationV2 } from "./attestation.js";
import { DecisionStatus, JsonObject, Signals, Verdict } from "./common.js";
import { POLICY_ID_MAX_LENGTH, POLICY_VERSION_MAX_LENGTH } from "./constants.js";
import { OverrideRecord } from "./evidence.js";
import { Choice, Closed, Described, Instant, List, OpenObject, Text, type Static } from "./schema.js";

const signalProvenance = Type.Optional(Described(JsonObject, "Where each signal came from: audited, never hashed or evaluated."));

/** `POST /evaluate` variant 1 (spec 2.1). */
export const EvaluateRequest = Closed(
  {
    executionId: Text(),
    policyId: Text(),
    policyVersion: Text(),
    verifiedSignals: Described(Signals, "Facts the caller has already verified."),
    signalProvenance,
  },
  { title: "EvaluateRequest", description: "`POST /evaluate` variant 1: a signed decision." },
);
export type EvaluateRequest = Static<typeof EvaluateRequest>;

/** `POST /evaluate` variant 2 (the dry run) and `POST /simulate`: no attestation, no side effect (spec 1.11). */
export const DryRunRequest = Closed(
  { policyId: Text(), policyVersion: Text(), signals: Signals, signalProvenance },
  { title: "DryRunRequest", description: "`POST /evaluate` variant 2 (the dry run) and `POST /simulate`: no attestation, no side effect." },
);
export type DryRunRequest = Static<typeof DryRunRequest>;

/** `POST /simulate` takes the dry run's body. */
export type SimulateRequest = DryRunRequest;

/** The body of `POST /evaluate`: variant 1 (`verifiedSignals`) or the dry run (`signals`); both at once is a 400. */
export const EvaluateBody = Type.Union([EvaluateRequest, DryRunRequest], {
  title: "EvaluateBody",
  description:
    "Variant 1 (`verifiedSignals`) signs a decision; the dry run (`signals` without `verifiedSignals`) decides nothing. Both at once is a 400.",
});
export type EvaluateBody = Static<typeof EvaluateBody>;

/** Legacy `POST /execute` (spec 4.1): all four members required. */
export const ExecuteRequest = Closed(
  { executionId: Text(), policyId: Text(), policyVersion: Text(), signals: Signals, signalProvenance },
  { title: "ExecuteRequest", description: "The legacy `POST /execute`: all four members required." },
);
export type ExecuteRequest = Static<typeof ExecuteRequest>;

/** Spec 2.4: the attestation is kept and passed on exactly as returned. */
export const EvaluateResponse = Closed(
  {
    status: DecisionStatus,
    requires_override: Type.Boolean({ description: "True only for `pending_override`." }),
    attestation: AttestationV1,
  },
  { title: "EvaluateResponse", description: "A signed decision: the attestation is kept and passed on exactly as returned." },
);
export type EvaluateResponse = Static<typeof EvaluateResponse>;

/** Spec 2.5: `status` is `approved`, or else the attestation's `execution_state` (`completed` for a rejection). */
export const ExecuteResponse = Closed(
  {
    status: Choice(["approved", "completed", "pending_override"]),
    requires_override: Type.Boolean(),
    attestation: AttestationV2,
  },
  {
    title: "ExecuteResponse",
    description: "`status` is `approved`, or else the attestation's `execution_state` (`completed` for a rejection).",
  },
);
export type ExecuteResponse = Static<typeof ExecuteResponse>;

/** Spec 2.6. */
/** What an explained expression is: the TypeScript type of `ExplainedExpr` (recursive, so written beside its schema). */
export interface ExplainedExprType {
  /** The expression as the compiled policy has it (constants inlined), compound operands in parentheses. */
  readonly expr: string;
  /** Its value; null when unknown (for a signal: it was not sent) or when computing it faulted. */
  readonly value: string | number | boolean | null;
  /** A decimal's exact value with the places of its type (`1000.30`); `value` is then the nearest number. */
  readonly exact?: string;
  /** A calendar field's: the UTC offset of the local time it was read from (`UTC+01:00`). */
  readonly offset?: string;
  /** The evaluation fault computing this expression was (docs/errors.md, EVAL codes); only on the one that faulted. */
  readonly fault?: "EVAL-001" | "EVAL-002" | "EVAL-003" | "EVAL-004";
  /** What it was computed from; absent for a literal, a signal and `present(...)`. */
  readonly operands?: readonly ExplainedExprType[];
}

/**
 * One expression of an explanation, with its value and its operands (docs/sidecar.md, "Explanations"). Recursive: its
 * `operands` are explained expressions, the same schema object, which the OpenAPI documents write as a `$ref` to itself.
 */
export const ExplainedExpr = Type.Unsafe<ExplainedExprType>({
  title: "ExplainedExpr",
  description: "One expression of an explanation: its text, its value (null when unknown), and the expressions it was computed from.",
  type: "object",
  required: ["expr", "value"],
  additionalProperties: false,
  properties: {
    expr: {
      type: "string",
      description: "The expression as the compiled policy has it (constants inlined), compound operands in parentheses.",
    },
    value: {
      type: ["string", "number", "boolean", "null"],
      description: "Its value; null when unknown (for a signal: it was not sent) or when computing it faulted.",
    },
    exact: {
      type: "string",
      pattern: "^-?[0-9]+(\\.[0-9]+)?$",
      description: "A decimal's exact value with the places of its type (`1000.30`); `value` is then the nearest number.",
    },
    offset: {
      type: "string",
      pattern: "^UTC[+-][0-9]{2}:[0-9]{2}(:[0-9]{2})?$",
      description: "A calendar field's: the UTC offset of the local time it was read from (`UTC+01:00`).",
    },
    fault: {
      type: "string",
      enum: ["EVAL-001", "EVAL-002", "EVAL-003", "EVAL-004"],
      description: "The evaluation fault computing this expression was (EVAL codes); only on the expression that faulted.",
    },
    operands: { type: "array", description: "What it was computed from; absent for a literal, a signal and `present(...)`." },
  },
});
(ExplainedExpr as unknown as { properties: { operands: { items: unknown } } }).properties.operands.items = ExplainedExpr;
export type ExplainedExpr = ExplainedExprType;

/** One rule of an explanation. */
export const ExplainedRule = Closed(
  {
    rule: Type.String(),
    verdict: Verdict,
    reason: Type.String(),
    result: Choice(["true", "false", "unknown", "fault"], {
      description:
        "Only a rule whose condition is `true` decides; `unknown` comes from an absent optional signal; `fault`: computing the condition faulted (a rule tried before any decides would end the evaluation with its EVAL code).",
    }),
    condition: ExplainedExpr,
  },
  { title: "ExplainedRule", description: "One rule of an explanation: its verdict and reason, and its condition evaluated." },
);
export type ExplainedRule = Static<typeof ExplainedRule>;

/**
 * Why the policy decides as it does for the signals sent (docs/sidecar.md, "Explanations"): every rule's condition,
 * evaluated down to the signals, by the same operators as the decision. Only with `?explain=true`.
 */
export const Explanation = Closed(
  {
    rules: List(ExplainedRule, { description: "Every rule in order, those after the one that decides included." }),
    otherwise: Type.Union([Closed({ verdict: Verdict, reason: Type.String() }), Type.Null()], {
      description: "What decides when no rule's condition is true; null when the policy has no catch-all.",
    }),
  },
  {
    title: "Explanation",
    description: "Why the policy decides as it does for the signals sent; only with `?explain=true` (writ's addition).",
  },
);
export type Explanation = Static<typeof Explanation>;

/** The query of the dry run (`POST /evaluate` with `signals`) and of `POST /simulate`. */
export const ExplainQuery = Closed({
  explain: Type.Optional(
    Choice(["true", "false"], { description: "`true` adds `explanation` to a dry run's or a simulation's answer; default `false`." }),
  ),
});
export type ExplainQuery = Static<typeof ExplainQuery>;

/** The instant a dry run or a simulation decided at, as the policy's `now` read it. */
const DecisionNow = Instant(
  "The instant the policy's `now` read, the clock read once for this decision; only for a policy that reads `now` (writ's addition; the spec's answer has no such member). A simulation's `attestationPreview.issuedAt` is the same text.",
);

export const DryRunResponse = Closed(
  {
    wouldDecide: DecisionStatus,
    ruleMatched: Type.String(),
    reason: Type.String(),
    signalsValidated: Type.Literal(true),
    now: Type.Optional(DecisionNow),
    explanation: Type.Optional(
      Described(Explanation, "Only when asked for with `?explain=true` (writ's addition; the spec's answer has no such member)."),
    ),
  },
  { title: "DryRunResponse", description: "What `POST /evaluate` would decide, with no attestation and no side effect." },
);
export type DryRunResponse = Static<typeof DryRunResponse>;

/** What `POST /evaluate` answers: a signed decision (variant 1) or the dry run's. */
export const EvaluateAnswer = Type.Union([EvaluateResponse, DryRunResponse], {
  title: "EvaluateAnswer",
  description: "A signed decision (variant 1), or what the dry run would decide.",
});
export type EvaluateAnswer = Static<typeof EvaluateAnswer>;

/** Spec 2.7: what evaluate would do, with no signing, replay write or audit record. */
export const SimulateResponse = Closed(
  {
    simulation: Type.Literal(true),
    decision: Closed({ action: Verdict, reason: Type.String(), ruleMatched: Type.String() }),
    signalsValidated: Type.Literal(true),
    policyLoaded: Type.Literal(true),
    wouldSign: Type.Boolean({ description: "Whether the service has a signing key, so that `/evaluate` would sign." }),
    attestationPreview: AttestationPreview,
    now: Type.Optional(DecisionNow),
    explanation: Type.Optional(Described(Explanation, "Only when asked for with `?explain=true`, as for the dry run.")),
  },
  { title: "SimulateResponse", description: "What evaluate would do, with no signing, replay write or audit record." },
);
export type SimulateResponse = Static<typeof SimulateResponse>;

/** `POST /verify` takes an attestation of either variant as its whole body. */
export const VerifyRequest = AttestationInput;
export type VerifyRequest = Static<typeof VerifyRequest>;

/** One check of the endpoint form of verification. */
export const CheckResult = Choice(["verified", "failed", "unknown"], {
  title: "CheckResult",
  description: "One check of the endpoint form of verification.",
});
export type CheckResult = Static<typeof CheckResult>;

/** Spec 2.10, endpoint form: `valid` false means the authorized action must not proceed (spec 7). */
export const VerifyResponse = Closed(
  { valid: Type.Boolean(), checks: Closed({ signature: CheckResult, runtime: CheckResult, schema: CheckResult }) },
  { title: "VerifyResponse", description: "`valid` false means the authorized action must not proceed." },
);
export type VerifyResponse = Static<typeof VerifyResponse>;

/** Spec 2.8: the human decision on a pending decision; every member required. */
export const OverrideRequest = Closed(
  { executionId: Text(), approved: Type.Boolean(), approvedBy: Text(), approverRole: Text(), reason: Type.String({ maxLength: 4096 }) },
  { title: "OverrideRequest", description: "The human decision on a pending decision; every member required." },
);
export type OverrideRequest = Static<typeof OverrideRequest>;

/** Spec 2.8, plus the override `record` (signed in the override domain). */
export const OverrideResponse = Type.Union(
  [
    Closed({
      status: Type.Literal("approved"),
      overrideId: Type.String(),
      resolution: Closed({ status: Type.Literal("executed"), execution_fingerprint: Type.String(), signature: Type.String() }),
      record: OverrideRecord,
    }),
    Closed({ status: Type.Literal("rejected"), executionId: Type.String(), record: OverrideRecord }),
  ],
  { title: "OverrideResponse", description: "The resolution, with the override `record` (signed in the override domain)." },
);
export type OverrideResponse = Static<typeof OverrideResponse>;

/** Spec 2.9, endpoint form of the executed action. */
export const ExecutedActionInput = Closed(
  {
    actionType: Text("Must be the policy's governed action (`governs.actionType` of the schema)."),
    actionId: Text("The executing system's own identifier of the action."),
    actionTimestamp: Type.String({ minLength: 1, maxLength: 1024, format: "date-time", description: "ISO 8601 with a time zone." }),
    actionDetails: Type.Optional(
      OpenObject({ description: "Must echo every bound signal (`governs.binding`) with the authorized value." }),
    ),
  },
  { title: "ExecutedActionInput", description: "The executed action, endpoint form." },
);
export type ExecutedActionInput = Static<typeof ExecutedActionInput>;

/** `POST /confirm-execution` (spec 2.9). */
export const ConfirmExecutionRequest = Closed(
  {
    attestation: AttestationInput,
    executedAction: ExecutedActionInput,
    // A window of zero seconds is meaningless; a year is far beyond any execution an attestation covers.
    timeWindowSeconds: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, maximum: 31_536_000, description: "Above 0, at most a year; default 300." }),
    ),
  },
  { title: "ConfirmExecutionRequest", description: "An executed action, to be checked against the attestation that authorized it." },
);
export type ConfirmExecutionRequest = Static<typeof ConfirmExecutionRequest>;

/** Spec 2.9, endpoint form; `match` and `verified` repeat the response summary the spec also shows. */
export const ConfirmExecutionResponse = Closed(
  {
    matched: Type.Boolean(),
    executionId: Type.String(),
    withinTimeWindow: Type.Boolean(),
    proof: Type.String({
      description: "The signed Execution Integrity Proof (`ExecutionProof`) as its canonical JSON text: exactly what it signs.",
    }),
    match: Type.Boolean(),
    verified: Type.Literal(true),
  },
  { title: "ConfirmExecutionResponse", description: "The confirmation; `match` and `verified` repeat the summary." },
);
export type ConfirmExecutionResponse = Static<typeof ConfirmExecutionResponse>;

/**
 * `GET /policies/{policyId}/versions/{version}/schema` path parameters, bounded by the longest policy id the compiler
 * takes and the longest version semver takes. Within the bounds, one that names no bundle is 404 `Policy not found`.
 */
export const PolicySchemaParams = Closed({
  policyId: Type.String({ minLength: 1, maxLength: POLICY_ID_MAX_LENGTH, description: "The policy id: 1 to 128 characters." }),
  version: Type.String({ minLength: 1, maxLength: POLICY_VERSION_MAX_LENGTH, description: "The policy version: 1 to 198 characters." }),
});
export type PolicySchemaParams = Static<typeof PolicySchemaParams>;

/** `GET /policies/{policyId}/versions/{version}/schema` (spec 1.9 step 1; shape: docs/sidecar.md). */
export const PolicySchema = Closed(
  {
    policyId: Type.String(),
    policyVersion: Type.String(),
    schemaVersion: Type.String(),
    bundleHash: Type.String(),
    governs: Closed(
      { actionType: Type.String(), binding: List(Type.String()) },
      { description: "The action the policy governs and the signals the executed action must echo (confirm-execution)." },
    ),
    signalsSchema: OpenObject({ description: "JSON Schema of the signals." }),
  },
  { title: "PolicySchema", description: "A policy version's signals schema and governed action." },
);
export type PolicySchema = Static<typeof PolicySchema>;
