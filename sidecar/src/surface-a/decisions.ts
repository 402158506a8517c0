/**
 * The decision endpoints: `POST /evaluate` (variant 1 signs, variant 2 is a dry run), the legacy `POST /execute`
 * and `POST /simulate`. Dispatch of `/evaluate` (docs/sidecar.md): `verifiedSignals` is variant 1; `signals`
 * without `verifiedSignals` is the dry run; both at once is a 400.
 */
import type { FastifyRequest } from "fastify";
import { AuthorizationError, FAULT_CODES, type EvaluateRequest as RuntimeEvaluateRequest } from "@writ/runtime";
import {
  DryRunRequest,
  EvaluateAnswer,
  EvaluateBody,
  EvaluateRequest,
  ExecuteRequest,
  ExecuteResponse,
  ExplainQuery,
  SimulateResponse,
  type Signals,
} from "@writ/wire";
import type { SidecarContext } from "../context.js";
import { invalidRequest } from "../http/errors.js";
import { sendJsonText } from "../http/json-text.js";
import { defineRoute } from "../http/route.js";
import { bodyCheck } from "../http/validation.js";
import { trackDecision } from "../observability/request-decision.js";
import { loggingBundleRefusals } from "../http/bundle-refusals.js";
import type { SurfaceADependencies } from "./dependencies.js";
import { securityEvent } from "../http/security-events.js";

// `/evaluate` picks its schema by the body's members, and the legacy `/execute` checks its body after the rate limit
// (which counts every authenticated request): both check their bodies in the handler.
const checkEvaluate = bodyCheck(EvaluateRequest);
const checkDryRun = bodyCheck(DryRunRequest);
const checkExecute = bodyCheck(ExecuteRequest);

/** Legacy `/execute`: at most 100 a minute per client (spec 8). */
export const EXECUTE_RATE_LIMIT = { max: 100, timeWindow: 60_000 } as const;

/** What the routes that evaluate refuse before deciding (an evaluation fault among them), and what the signing ones refuse besides. */
const REFUSED_EVALUATION = ["POLICY_BUNDLE_MISSING", "POLICY_BUNDLE_INVALID", "SYS-006", ...FAULT_CODES, "EVALUATION_FAILED"] as const;
const SIGNED_EVALUATION = [
  "INV-013",
  "INV-REPLAY-001",
  "RUNTIME_NOT_CONFIGURED",
  "REPLAY_STORE_UNAVAILABLE",
  "SIGNER_UNAVAILABLE",
] as const;

/**
 * `?explain=true` on the dry run and `/simulate` adds `explanation` to the answer (docs/sidecar.md, "Explanations");
 * without it the answer is the spec's. Any other value, or the parameter twice, is a 400.
 */
function explainRequested(query: unknown): boolean {
  const value = isObject(query) ? query["explain"] : undefined;
  if (value === undefined || value === "false") return false;
  if (value === "true") return true;
  throw invalidRequest([{ path: "querystring/explain", message: "must be `true` or `false`, given once" }]);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function requestOf(body: EvaluateRequest | ExecuteRequest, signals: Signals): RuntimeEvaluateRequest {
  return {
    executionId: body.executionId,
    policyId: body.policyId,
    policyVersion: body.policyVersion,
    signals,
    ...(body.signalProvenance === undefined ? {} : { signalProvenance: body.signalProvenance }),
  };
}

/** A second use of an executionId is a replay attempt: recorded as a security event, then answered as usual. */
async function recordingReplays<T>(ctx: SidecarContext, request: FastifyRequest, executionId: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof AuthorizationError && e.code === "INV-013") {
      ctx.audit.recordSecurityEvent(securityEvent(request, "replay_attempt", `executionId already consumed`, executionId));
    }
    throw e;
  }
}

export const EVALUATE = defineRoute<SurfaceADependencies>(
  {
    method: "POST",
    url: "/evaluate",
    scope: "deciding",
    summary: "Decide, signed (variant 1), or dry run",
    description:
      "`verifiedSignals` signs a decision: an attestation, its executionId consumed once. `signals` without `verifiedSignals` is the dry run: what would be decided, with no attestation and no side effect. Both at once is a 400.",
    tag: "decisions",
    checkedByHandler: { querystring: ExplainQuery, body: EvaluateBody },
    answers: { 200: { description: "The decision.", schema: EvaluateAnswer } },
    errors: ["POLICY_NOT_FOUND", "SIGNAL_VALIDATION_FAILED", "SIGNALS_VALIDATION_FAILED", ...REFUSED_EVALUATION, ...SIGNED_EVALUATION],
    execution: true,
  },
  ({ ctx }) =>
    async (request, reply) => {
      const body = request.body;
      if (isObject(body) && Object.hasOwn(body, "signals")) {
        if (Object.hasOwn(body, "verifiedSignals")) {
          throw invalidRequest([
            { path: "body", message: "must have either `verifiedSignals` (evaluate) or `signals` (dry run), not both" },
          ]);
        }
        const dry = checkDryRun(body);
        const options = { explain: explainRequested(request.query), report: trackDecision(request, dry) };
        return loggingBundleRefusals(request, () => ctx.authorizer.dryRun(dry.policyId, dry.policyVersion, dry.signals, options));
      }
      const evaluate = checkEvaluate(body);
      const report = trackDecision(request, evaluate);
      const { json } = await recordingReplays(ctx, request, evaluate.executionId, () =>
        ctx.authorizer.evaluateSerialized(requestOf(evaluate, evaluate.verifiedSignals), report),
      );
      // The answer's text, made with the attestation's (runtime `SerializedEvaluation`).
      return sendJsonText(reply, json);
    },
);

export const EXECUTE = defineRoute<SurfaceADependencies>(
  {
    method: "POST",
    url: "/execute",
    scope: "deciding",
    summary: "Decide, signed, in the legacy form (variant 2 attestation)",
    description: "At most 100 a minute per client.",
    tag: "decisions",
    checkedByHandler: { body: ExecuteRequest },
    answers: { 200: { description: "The decision.", schema: ExecuteResponse } },
    errors: ["SIGNALS_VALIDATION_FAILED", ...REFUSED_EVALUATION, ...SIGNED_EVALUATION, "RATE_LIMITED"],
    execution: true,
    options: { config: { rateLimit: EXECUTE_RATE_LIMIT } },
  },
  ({ ctx }) =>
    async (request) => {
      const execute = checkExecute(request.body);
      const report = trackDecision(request, execute);
      const result = await recordingReplays(ctx, request, execute.executionId, () =>
        loggingBundleRefusals(request, () => ctx.authorizer.execute(requestOf(execute, execute.signals), report)),
      );
      // Spec 2.5: `approved`, or else the attestation's `execution_state` (`pending_override`, or `completed` for a
      // rejection, whose attestation says `reject`).
      return { ...result, status: result.status === "approved" ? "approved" : result.attestation.execution_state };
    },
);

export const SIMULATE = defineRoute<SurfaceADependencies, { Body: DryRunRequest }>(
  {
    method: "POST",
    url: "/simulate",
    scope: "deciding",
    summary: "What `/evaluate` would do, with no signing, replay write or audit record",
    tag: "decisions",
    schema: { body: DryRunRequest },
    checkedByHandler: { querystring: ExplainQuery },
    answers: { 200: { description: "The simulation.", schema: SimulateResponse } },
    errors: ["SIGNALS_VALIDATION_FAILED", ...REFUSED_EVALUATION],
  },
  ({ ctx }) =>
    async (request) => {
      const simulate = request.body;
      const options = { explain: explainRequested(request.query), report: trackDecision(request, simulate) };
      return loggingBundleRefusals(request, () =>
        ctx.authorizer.simulate(simulate.policyId, simulate.policyVersion, simulate.signals, options),
      );
    },
);
