/**
 * What Surface B says about itself (spec 4.2, 9): `GET /health` and `GET /version` (the two routes without the
 * Bearer key, docs/sidecar.md), and `POST /policies/validate`, which says whether a policy version loads.
 */
import type { FastifyInstance } from "fastify";
import { BundleError } from "@writ/runtime";
import { PolicyValidateRequest, type PolicyValidation, type ServiceHealth, type VersionInfo } from "@writ/wire";
import type { SidecarContext } from "../context.js";
import { bodySchema } from "../http/validation.js";
import { abandonBundleLoadsOnClose } from "../surface-a/bundle-refusals.js";
import { GET_ONLY } from "./route-options.js";

/** Spec 9: hardcoded, not linked to any package version. */
const VERSION = { name: "writ", version: "0.4.0", api: "v1" } as const satisfies VersionInfo;

/** Why a bundle does not load, without the server's directories (the not-found message of the loader names one). */
function whyNotLoadable(error: BundleError, policyId: string, policyVersion: string): string {
  if (error.code === "BUNDLE_NOT_FOUND") return `no bundle for policy \`${policyId}\` version \`${policyVersion}\``;
  return `bundle of policy \`${policyId}\` version \`${policyVersion}\` does not load: ${error.message}`;
}

export function serviceRoutes(app: FastifyInstance, ctx: SidecarContext): void {
  // Surface B loads bundles here and in its pipeline (`/execute`, `POST /transactions`).
  abandonBundleLoadsOnClose(app, ctx);

  app.get("/health", GET_ONLY, async (): Promise<ServiceHealth> => ({ status: "UP" }));

  app.get("/version", GET_ONLY, async () => VERSION);

  // Spec 4.2: loadability only (manifest, file hashes, signature policy), not the policy's content.
  app.post<{ Body: PolicyValidateRequest }>("/policies/validate", bodySchema(PolicyValidateRequest), async (request, reply) => {
    const { policyId, policyVersion } = request.body;
    try {
      await ctx.registry.get(policyId, policyVersion);
    } catch (e) {
      if (!(e instanceof BundleError)) throw e;
      return reply.code(404).send({ valid: false, errors: [whyNotLoadable(e, policyId, policyVersion)] } satisfies PolicyValidation);
    }
    return { valid: true, errors: [] } satisfies PolicyValidation;
  });
}
