/**
 * Surface A, the governance server (spec 4.1), built but not listening: `buildSurfaceA(ctx).inject()` in tests,
 * `listen()` in `startSidecar`.
 */
import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance } from "fastify";
import { rateLimitedBody } from "@writ/runtime";
import type { SidecarContext } from "../context.js";
import { SidecarHttpError } from "../http/errors.js";
import { SURFACE_A_SCOPES } from "../http/scopes.js";
import { createServer } from "../http/server.js";
import type { Metrics } from "../metrics.js";
import { openApiRoutes } from "../openapi/routes.js";
import { adminRoutes } from "./admin-routes.js";
import { attestationRoutes } from "./attestations.js";
import { auditLogRoutes } from "./audit-log-routes.js";
import { auditRoutes } from "./audit-routes.js";
import { decisionRoutes } from "./decisions.js";
import { runtimeInfoRoutes } from "./runtime-info.js";
import { recordAuthenticationFailure, securityEvent } from "./security-events.js";

export async function buildSurfaceA(ctx: SidecarContext, metrics: Metrics): Promise<FastifyInstance> {
  const app = createServer({
    keys: ctx.apiKeys,
    scopes: SURFACE_A_SCOPES,
    surface: "a",
    log: ctx.log.child({ surface: "a" }),
    accessLog: ctx.config.accessLog,
    tracing: ctx.tracing,
    connections: ctx.config.connections,
    onUnauthorized: recordAuthenticationFailure(ctx.audit),
    executionRoutes: ["POST /evaluate", "POST /execute"],
  });
  metrics.instrument(app, "a");
  app.addHook("onResponse", async () => ctx.audit.countApiCall());

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

  decisionRoutes(app, ctx);
  attestationRoutes(app, ctx);
  runtimeInfoRoutes(app, ctx, metrics);
  auditRoutes(app, ctx);
  auditLogRoutes(app, ctx);
  adminRoutes(app, ctx);
  openApiRoutes(app);
  return app;
}
