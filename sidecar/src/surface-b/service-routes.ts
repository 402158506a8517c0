/**
 * What Surface B says about itself (spec 4.2, 9): `GET /health` and `GET /version` (the two routes without the
 * Bearer key, docs/sidecar.md), and `POST /policies/validate`, which says whether a policy version loads.
 */
import { BundleError } from "@writ/runtime";
import { PolicyValidateRequest, PolicyValidation, ServiceHealth, VersionInfo } from "@writ/wire";
import { defineRoute } from "../http/route.js";
import type { SurfaceBDependencies } from "./dependencies.js";

/** Spec 9: hardcoded, not linked to any package version. */
const VERSION_INFO = { name: "writ", version: "0.4.0", api: "v1" } as const satisfies VersionInfo;

/** Why a bundle does not load, without the server's directories (the not-found message of the loader names one). */
function whyNotLoadable(error: BundleError, policyId: string, policyVersion: string): string {
  if (error.code === "BUNDLE_NOT_FOUND") return `no bundle for policy \`${policyId}\` version \`${policyVersion}\``;
  return `bundle of policy \`${policyId}\` version \`${policyVersion}\` does not load: ${error.message}`;
}

export const HEALTH = defineRoute<SurfaceBDependencies>(
  {
    method: "GET",
    url: "/health",
    scope: "public",
    summary: "Liveness",
    tag: "service",
    answers: { 200: { description: "Up.", schema: ServiceHealth } },
  },
  () => async (): Promise<ServiceHealth> => ({ status: "UP" }),
);

export const VERSION = defineRoute<SurfaceBDependencies>(
  {
    method: "GET",
    url: "/version",
    scope: "public",
    summary: "The service's name, version and API version, hardcoded",
    tag: "service",
    answers: { 200: { description: "The version.", schema: VersionInfo } },
  },
  () => async () => VERSION_INFO,
);

/** Spec 4.2: loadability only (manifest, file hashes, signature policy), not the policy's content. */
export const POLICY_VALIDATE = defineRoute<SurfaceBDependencies, { Body: PolicyValidateRequest }>(
  {
    method: "POST",
    url: "/policies/validate",
    scope: "deciding",
    summary: "Whether a policy version loads (manifest, file hashes, signature policy), not its content",
    tag: "policies",
    schema: { body: PolicyValidateRequest },
    answers: {
      200: { description: "It loads.", schema: PolicyValidation },
      404: { description: "It does not load: `{valid: false, errors: [why]}`.", schema: PolicyValidation },
    },
  },
  ({ ctx }) =>
    async (request, reply) => {
      const { policyId, policyVersion } = request.body;
      try {
        await ctx.registry.get(policyId, policyVersion);
      } catch (e) {
        if (!(e instanceof BundleError)) throw e;
        return reply.code(404).send({ valid: false, errors: [whyNotLoadable(e, policyId, policyVersion)] } satisfies PolicyValidation);
      }
      return { valid: true, errors: [] } satisfies PolicyValidation;
    },
);
