/**
 * Surface A, the governance server (spec 4.1), built but not listening: `buildSurfaceA(...).inject()` in tests,
 * `listen()` in `startSidecar`. Its routes are declared in routes.ts; `documents`: the OpenAPI documents it serves,
 * its own and Surface B's (openapi-documents.ts).
 */
import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance } from "fastify";
import { rateLimitedBody } from "@writ/runtime";
import type { SidecarContext } from "../context.js";
import { SidecarHttpError } from "../http/errors.js";
import { registerRoutes } from "../http/register-routes.js";
import { createServer } from "../http/server.js";
import type { Metrics } from "../metrics.js";
import { abandonBundleLoadsOnClose } from "../http/bundle-refusals.js";
import type { OpenApiTexts } from "./document-routes.js";
import { SURFACE_A, SURFACE_A_SCOPES } from "./routes.js";
import { recordAuthenticationFailure, securityEvent } from "../http/security-events.js";

export async function buildSurfaceA(ctx: SidecarContext, metrics: Metrics, documents: OpenApiTexts): Promise<FastifyInstance> {
  const app = createServer({
    keys: ctx.apiKeys,
    scopes: SURFACE_A_SCOPES,
    surface: "a",
    log: ctx.log.child({ surface: "a" }),
    accessLog: ctx.config.accessLog,
    tracing: ctx.tracing,
    connections: ctx.config.connections,
    onUnauthorized: recordAuthenticationFailure(ctx.audit),
  });
  metrics.instrument(app, "a");
  app.addHook("onResponse", async () => ctx.audit.countApiCall());

  // Before the routes: the plugin reads a route's `config.rateLimit` as the route is registered.
  await app.register(rateLimit, {
    global: false,
    // After authentication and body parsing: an unauthenticated caller cannot spend a client's budget.
    hook: "preHandler",
    errorResponseBuilder: (_request, context) => {
      const reset = Math.ceil((Date.now() + context.ttl) / 1000);
      return new SidecarHttpError(429, rateLimitedBody({ limit: context.max, remaining: 0, reset }), "RATE_LIMITED");
    },
    onExceeded: (request) =>
      ctx.audit.recordSecurityEvent(securityEvent(request, "rate_limited", "more than 100 POST /execute in a minute")),
  });

  abandonBundleLoadsOnClose(app, ctx.registry);
  registerRoutes(app, SURFACE_A, { ctx, metrics, ...documents }, ctx.storeAnswerWithinMs);
  return app;
}
