/**
 * The decision endpoints: `POST /evaluate` (variant 1 signs, variant 2 is a dry run), the legacy `POST /execute`
 * and `POST /simulate`. Dispatch of `/evaluate` (docs/sidecar.md): `verifiedSignals` is variant 1; `signals`
 * without `verifiedSignals` is the dry run; both at once is a 400.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { AuthorizationError, type EvaluateRequest } from "@writ/runtime";
import type { SidecarContext } from "../context.js";
import type { Metrics } from "../metrics.js";
import { invalidRequest } from "../http/errors.js";
import { bodyCheck } from "../http/validation.js";
import { abandonBundleLoadsOnClose, loggingBundleRefusals } from "./bundle-refusals.js";
import { securityEvent } from "./security-events.js";
import { dryRunBody, evaluateBody, executeBody } from "./schemas.js";

interface SignedBody {
  readonly executionId: string;
  readonly policyId: string;
  readonly policyVersion: string;
  readonly signalProvenance?: Record<string, unknown>;
}
type EvaluateBody = SignedBody & { readonly verifiedSignals: Record<string, unknown> };
type ExecuteBody = SignedBody & { readonly signals: Record<string, unknown> };
interface DryRunBody {
  readonly policyId: string;
  readonly policyVersion: string;
  readonly signals: Record<string, unknown>;
}

const checkEvaluate = bodyCheck<EvaluateBody>(evaluateBody);
const checkDryRun = bodyCheck<DryRunBody>(dryRunBody);
const checkExecute = bodyCheck<ExecuteBody>(executeBody);

/** Legacy `/execute`: at most 100 a minute per client (spec 8). */
export const EXECUTE_RATE_LIMIT = { max: 100, timeWindow: 60_000 } as const;

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

function requestOf(body: SignedBody, signals: Record<string, unknown>): EvaluateRequest {
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

export function decisionRoutes(app: FastifyInstance, ctx: SidecarContext, metrics: Metrics): void {
  abandonBundleLoadsOnClose(app, ctx);

  app.post("/evaluate", async (request) => {
    const body = request.body;
    if (isObject(body) && Object.hasOwn(body, "signals")) {
      if (Object.hasOwn(body, "verifiedSignals")) {
        throw invalidRequest([{ path: "body", message: "must have either `verifiedSignals` (evaluate) or `signals` (dry run), not both" }]);
      }
      const dry = checkDryRun(body);
      const options = { explain: explainRequested(request.query) };
      return loggingBundleRefusals(request, () => ctx.authorizer.dryRun(dry.policyId, dry.policyVersion, dry.signals, options));
    }
    const evaluate = checkEvaluate(body);
    const result = await recordingReplays(ctx, request, evaluate.executionId, () => ctx.authorizer.evaluate(requestOf(evaluate, evaluate.verifiedSignals)));
    metrics.decisions.inc({ status: result.status, endpoint: "evaluate" });
    return result;
  });

  app.post("/execute", { config: { rateLimit: EXECUTE_RATE_LIMIT } }, async (request) => {
    const execute = checkExecute(request.body);
    const result = await recordingReplays(ctx, request, execute.executionId, () =>
      loggingBundleRefusals(request, () => ctx.authorizer.execute(requestOf(execute, execute.signals))),
    );
    metrics.decisions.inc({ status: result.status, endpoint: "execute" });
    // Spec 2.5: `approved`, or else the attestation's `execution_state` (`pending_override`, or `completed` for a
    // rejection, whose attestation says `reject`).
    return { ...result, status: result.status === "approved" ? "approved" : result.attestation.execution_state };
  });

  app.post("/simulate", async (request) => {
    const simulate = checkDryRun(request.body);
    const options = { explain: explainRequested(request.query) };
    return loggingBundleRefusals(request, () => ctx.authorizer.simulate(simulate.policyId, simulate.policyVersion, simulate.signals, options));
  });
}
