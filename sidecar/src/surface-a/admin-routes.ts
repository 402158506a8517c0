/**
 * The operator's routes of Surface A (docs/bundles.md, "Reload"), behind the reading key (http/scopes.ts):
 * `POST /admin/reload` reads the bundle keys and every bundle again, as SIGHUP does, and `GET /admin/bundles` lists
 * what is served, the aliases, and the version conflicts refused.
 */
import type { FastifyInstance } from "fastify";
import type { BundlesDetail, ReloadResponse } from "@writ/wire";
import type { SidecarContext } from "../context.js";
import { SidecarHttpError } from "../http/errors.js";

export function adminRoutes(app: FastifyInstance, ctx: SidecarContext): void {
  app.post("/admin/reload", async (request): Promise<ReloadResponse> => {
    const outcome = await ctx.bundles.reload();
    if (!outcome.ok) {
      request.log.warn({ refused: outcome.refused, poll: outcome.poll }, "bundle reload refused: nothing changed");
      throw new SidecarHttpError(409, { error: "reload refused: nothing changed", ...outcome }, "RELOAD_REFUSED");
    }
    request.log.info({ served: outcome.served, poll: outcome.poll }, "bundles reloaded");
    return outcome;
  });

  app.get("/admin/bundles", async (): Promise<BundlesDetail> => ctx.bundles.detail());
}
