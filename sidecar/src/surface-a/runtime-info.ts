/**
 * What the sidecar says about itself (spec 2.11): `GET /health` (the only unauthenticated route), the runtime
 * manifest and capabilities, a policy's signals schema (spec 1.9 step 1), and the Prometheus metrics.
 */
import type { FastifyInstance } from "fastify";
import {
  CAPABILITIES,
  PAYLOAD_TYPES,
  RUNTIME_HASH,
  RUNTIME_VERSION,
  SUPPORTED_SCHEMA_VERSIONS,
  signObject,
  verifyObject,
} from "@writ/runtime";
import { HealthQuery, type Capabilities, type Health, type RuntimeManifestResponse, type StoreStatus } from "@writ/wire";
import { PolicySchemaParams } from "@writ/wire";
import type { SidecarContext } from "../context.js";
import type { Metrics } from "../metrics.js";
import { loggingBundleRefusals } from "./bundle-refusals.js";
import { isReady } from "./readiness.js";

/** How long a signing self-test result is reused: `/health` is unauthenticated and must stay cheap. */
const SELF_TEST_TTL_MS = 10_000;

/** Signs and verifies a probe with the configured key: `verification` `ok` only when both work. */
function signingSelfTest(ctx: SidecarContext): () => "ok" | "error" {
  let last: { at: number; result: "ok" | "error" } | null = null;
  return () => {
    const now = Date.now();
    if (last && now - last.at < SELF_TEST_TTL_MS) return last.result;
    let result: "ok" | "error" = "error";
    const signer = ctx.signer;
    if (signer) {
      try {
        const probe = { probe: "writ.health.v1", at: new Date(now).toISOString() };
        const signature = signObject(PAYLOAD_TYPES.runtimeManifest, probe, signer.key);
        result = verifyObject(PAYLOAD_TYPES.runtimeManifest, probe, signature, [signer.key.publicKey]) ? "ok" : "error";
      } catch {
        result = "error";
      }
    }
    last = { at: now, result };
    return result;
  };
}

function storeStatus(ctx: SidecarContext): StoreStatus {
  const health = ctx.storeHealth();
  if (health === null) return { status: "none" };
  return health.ok ? { status: "ok" } : { status: "error", problem: health.problem ?? "writes fail", since: health.since ?? "" };
}

export function runtimeInfoRoutes(app: FastifyInstance, ctx: SidecarContext, metrics: Metrics): void {
  const selfTest = signingSelfTest(ctx);
  // Liveness is `GET /health` (always 200 while the process answers); readiness is `GET /health?probe=ready`, 503 while
  // no bundle can be served or the store fails writes (readiness.ts; docs/bundles.md, "Readiness"). One route, so both
  // stay without the API key (spec 5).
  app.get<{ Querystring: HealthQuery }>("/health", { schema: { querystring: HealthQuery } }, async (request, reply): Promise<Health> => {
    const bundles = ctx.bundles.health();
    const store = storeStatus(ctx);
    const ready = isReady(bundles, store);
    if (request.query.probe === "ready" && !ready) void reply.code(503);
    return {
      status: "ok",
      runtimeVersion: RUNTIME_VERSION,
      runtimeHash: RUNTIME_HASH,
      verification: selfTest(),
      audit_db: ctx.audit.healthy(),
      store,
      signing_mode: ctx.signingMode,
      capabilities: [...CAPABILITIES],
      supportedSchemaVersions: [...SUPPORTED_SCHEMA_VERSIONS],
      ready,
      bundles,
      instanceId: ctx.audit.recordLog?.logId ?? null,
      event_loop_lag_ms: metrics.eventLoopLagMs(),
    };
  });

  app.get("/runtime/manifest", async (): Promise<RuntimeManifestResponse> => ({
    version: RUNTIME_VERSION,
    runtimeHash: RUNTIME_HASH,
    capabilities: [...CAPABILITIES],
    supportedSchemaVersions: [...SUPPORTED_SCHEMA_VERSIONS],
    startedAt: ctx.startedAt,
    // writ's additions: the signed runtime manifest whose hash attestations carry as `provenance.manifestHash`.
    ...(ctx.authorizer.runtime
      ? { manifestHash: ctx.authorizer.runtime.manifestHash, signedManifest: ctx.authorizer.runtime.manifest }
      : {}),
  }));

  app.get("/runtime/capabilities", async (): Promise<Capabilities> => ({ capabilities: [...CAPABILITIES] }));

  // A missing bundle is 404 `Policy not found`; one that does not load is 422 `policy bundle does not load`. A policy
  // id or version longer than any bundle's is refused by its schema (400), before any bundle is looked up.
  app.get<{ Params: PolicySchemaParams }>(
    "/policies/:policyId/versions/:version/schema",
    { schema: { params: PolicySchemaParams } },
    async (request) => {
      const { policyId, version } = request.params;
      const bundle = await loggingBundleRefusals(request, () => ctx.authorizer.policy(policyId, version, "schema"));
      return {
        policyId,
        policyVersion: version,
        schemaVersion: bundle.manifest.schemaVersion,
        bundleHash: bundle.manifest.bundle_hash,
        governs: { actionType: bundle.ir.governs.action, binding: [...bundle.ir.governs.binding] },
        signalsSchema: bundle.schema,
      };
    },
  );

  app.get("/metrics", async (_request, reply) => {
    void reply.header("content-type", metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
