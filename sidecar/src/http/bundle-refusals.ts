/**
 * What the routes that load policy bundles share on both surfaces: the cause of a refusal goes to the log, and
 * shutdown does not wait on a bundle load.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { AuthorizationError, type PolicyRegistry } from "@writ/runtime";
import { decisionFields } from "../observability/request-decision.js";

/**
 * Why a policy bundle does not load, for the operator: the 422 `policy bundle does not load` body says only that it
 * does not (a client has no business with the server's files), so the cause goes to the log here. The 500 of
 * `/evaluate` is logged with its cause by the error handler, like every 5xx.
 */
export async function loggingBundleRefusals<T>(request: FastifyRequest, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof AuthorizationError && e.code === "POLICY_BUNDLE_INVALID")
      request.log.warn({ reason: e.message, ...decisionFields(request.decision) }, "policy bundle does not load");
    throw e;
  }
}

/**
 * When the surface starts closing, before it waits for the requests in flight: the bundle loads under way are
 * abandoned (their requests are refused at once), so a graceful shutdown does not wait on a bundle read that is
 * stuck (up to `SERVICE_BUNDLE_LOAD_TIMEOUT_MS` otherwise). A request in flight whose load starts later is still
 * served: the registry closes with the context, after the requests in flight are answered. Both surfaces share the
 * registry; abandoning twice is harmless.
 */
export function abandonBundleLoadsOnClose(app: FastifyInstance, registry: PolicyRegistry): void {
  app.addHook("preClose", (done) => {
    registry.abandonLoads();
    done();
  });
}
