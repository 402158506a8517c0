/**
 * The operator's routes of Surface A (docs/bundles.md, "Reload"): `POST /admin/reload` reads the bundle keys and every
 * bundle again, as SIGHUP does (in every process of the sidecar), and `GET /admin/bundles` lists what is served, the
 * aliases, and the version conflicts refused. They take no input and change nothing a caller chooses (a reload re-reads
 * what the operator configured), so they go with the operator's other key, the reading key, rather than the callers'.
 */
import { BundlesDetail, ReloadRefusedBody, ReloadResponse } from "@writ/wire";
import { SidecarHttpError } from "../http/errors.js";
import { defineRoute } from "../http/route.js";
import { reloadOtherMembers } from "../processes/member.js";
import type { SurfaceADependencies } from "./dependencies.js";

export const ADMIN_BUNDLES = defineRoute<SurfaceADependencies>(
  {
    method: "GET",
    url: "/admin/bundles",
    scope: "reading",
    summary: "The bundles served, their aliases and the version conflicts refused",
    tag: "admin",
    answers: { 200: { description: "The bundles.", schema: BundlesDetail } },
  },
  ({ ctx }) =>
    async (): Promise<BundlesDetail> =>
      ctx.bundles.detail(),
);

export const ADMIN_RELOAD = defineRoute<SurfaceADependencies>(
  {
    method: "POST",
    url: "/admin/reload",
    scope: "reading",
    summary: "Read the bundle keys and every bundle again, as SIGHUP does",
    tag: "admin",
    answers: {
      200: { description: "Reloaded.", schema: ReloadResponse },
      409: { description: "Refused: nothing changed.", schema: ReloadRefusedBody },
    },
  },
  ({ ctx }) =>
    async (request): Promise<ReloadResponse> => {
      const outcome = await ctx.bundles.reload();
      if (!outcome.ok) {
        request.log.warn({ refused: outcome.refused, poll: outcome.poll }, "bundle reload refused: nothing changed");
        throw new SidecarHttpError(409, { error: "reload refused: nothing changed", ...outcome }, "RELOAD_REFUSED");
      }
      request.log.info({ served: outcome.served, poll: outcome.poll }, "bundles reloaded");
      // The sidecar's other processes, if any, reload too (each logs its outcome, as on SIGHUP).
      reloadOtherMembers();
      return outcome;
    },
);
