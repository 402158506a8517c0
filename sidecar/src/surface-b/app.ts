/**
 * Surface B, the business-transaction API (spec 4.2: exactly 13 routes), built but not listening:
 * `buildSurfaceB(ctx, metrics).inject()` in tests, `listen()` in `startSidecar`. It shares Surface A's HTTP
 * conventions (strict JSON, 64 KB, Bearer keys, the error table's bodies) and the sidecar's runtime and storage backend
 * (record-store.ts). Without a record store (no data dir) it still serves `/health`, `/version` and
 * `/policies/validate`; the routes that need it answer 503. Its routes are declared in routes.ts.
 */
import type { FastifyInstance } from "fastify";
import type { SidecarContext } from "../context.js";
import { registerRoutes } from "../http/register-routes.js";
import { createServer } from "../http/server.js";
import type { Metrics } from "../metrics.js";
import { abandonBundleLoadsOnClose } from "../http/bundle-refusals.js";
import { recordAuthenticationFailure } from "../http/security-events.js";
import { transactionPipeline } from "./pipeline.js";
import { SURFACE_B, SURFACE_B_SCOPES } from "./routes.js";

export function buildSurfaceB(ctx: SidecarContext, metrics: Metrics): FastifyInstance {
  const app = createServer({
    keys: ctx.apiKeys,
    scopes: SURFACE_B_SCOPES,
    surface: "b",
    log: ctx.log.child({ surface: "b" }),
    accessLog: ctx.config.accessLog,
    tracing: ctx.tracing,
    connections: ctx.config.connections,
    onUnauthorized: recordAuthenticationFailure(ctx.audit),
  });
  metrics.instrument(app, "b");
  // Surface B loads bundles in `/policies/validate` and in its pipeline.
  abandonBundleLoadsOnClose(app, ctx.registry);
  const records = ctx.trustRecords;
  registerRoutes(app, SURFACE_B, { ctx, records, execute: transactionPipeline(ctx, records) }, ctx.storeAnswerWithinMs);
  return app;
}
