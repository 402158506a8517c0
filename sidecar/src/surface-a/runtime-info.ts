/**
 * What the sidecar says about itself (spec 2.11): `GET /health` (the only unauthenticated route), the runtime
 * manifest and capabilities, a policy's signals schema (spec 1.9 step 1), and the Prometheus metrics.
 */
import {
  CAPABILITIES,
  PAYLOAD_TYPES,
  RUNTIME_HASH,
  RUNTIME_VERSION,
  SUPPORTED_SCHEMA_VERSIONS,
  signObject,
  verifyObject,
} from "@writ/runtime";
import { Capabilities, Health, HealthQuery, PolicySchema, PolicySchemaParams, RuntimeManifestResponse, type StoreStatus } from "@writ/wire";
import type { SidecarContext } from "../context.js";
import { defineRoute } from "../http/route.js";
import { loggingBundleRefusals } from "../http/bundle-refusals.js";
import type { SurfaceADependencies } from "./dependencies.js";
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

export const HEALTH = defineRoute<SurfaceADependencies, { Querystring: HealthQuery }>(
  {
    method: "GET",
    url: "/health",
    scope: "public",
    summary: "Liveness, and readiness with `?probe=ready`",
    description:
      "The only route without a key (besides the documents). Liveness (`GET /health`) answers 200 while the process answers, whatever the body says. Readiness (`?probe=ready`) answers 503 while the sidecar cannot decide: no bundle is served (`bundles.ready` false, with `bundles.problem`), or the store does not take writes (`store.status` `error`, with `store.problem` and `since`: a failing data dir, or a database that is unreachable or has not answered its probe, every 500 ms, within 300 ms: shown within 1 s). `ready` is false then, and the body names which.",
    tag: "service",
    schema: { querystring: HealthQuery },
    answers: {
      200: { description: "The service's state.", schema: Health },
      503: {
        description: "`?probe=ready` while `ready` is false: no bundle can be served (`bundles`), or the store fails writes (`store`).",
        schema: Health,
      },
    },
  },
  // Liveness is `GET /health` (always 200 while the process answers); readiness is `GET /health?probe=ready`, 503 while
  // no bundle can be served or the store fails writes (readiness.ts; docs/bundles.md, "Readiness"). One route, so both
  // stay without the API key (spec 5).
  ({ ctx, metrics }) => {
    const selfTest = signingSelfTest(ctx);
    return async (request, reply): Promise<Health> => {
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
    };
  },
);

export const POLICY_SCHEMA = defineRoute<SurfaceADependencies, { Params: PolicySchemaParams }>(
  {
    method: "GET",
    url: "/policies/:policyId/versions/:version/schema",
    scope: "deciding",
    summary: "A policy version's signals schema and governed action",
    tag: "decisions",
    // A policy id or version longer than any bundle's is refused (400) before any bundle is looked up.
    schema: { params: PolicySchemaParams },
    answers: { 200: { description: "The policy schema.", schema: PolicySchema } },
    // A missing bundle is 404 `Policy not found`; one that does not load is 422 `policy bundle does not load`.
    errors: ["POLICY_NOT_FOUND", "POLICY_BUNDLE_INVALID"],
  },
  ({ ctx }) =>
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

export const RUNTIME_MANIFEST = defineRoute<SurfaceADependencies>(
  {
    method: "GET",
    url: "/runtime/manifest",
    scope: "deciding",
    summary: "The runtime's version, hash and capabilities, and its signed manifest",
    tag: "service",
    answers: { 200: { description: "The runtime manifest.", schema: RuntimeManifestResponse } },
  },
  ({ ctx }) =>
    async (): Promise<RuntimeManifestResponse> => ({
      version: RUNTIME_VERSION,
      runtimeHash: RUNTIME_HASH,
      capabilities: [...CAPABILITIES],
      supportedSchemaVersions: [...SUPPORTED_SCHEMA_VERSIONS],
      startedAt: ctx.startedAt,
      // writ's additions: the signed runtime manifest whose hash attestations carry as `provenance.manifestHash`.
      ...(ctx.authorizer.runtime
        ? { manifestHash: ctx.authorizer.runtime.manifestHash, signedManifest: ctx.authorizer.runtime.manifest }
        : {}),
    }),
);

export const RUNTIME_CAPABILITIES = defineRoute<SurfaceADependencies>(
  {
    method: "GET",
    url: "/runtime/capabilities",
    scope: "deciding",
    summary: "The runtime's capabilities",
    tag: "service",
    answers: { 200: { description: "The capabilities.", schema: Capabilities } },
  },
  () => async (): Promise<Capabilities> => ({ capabilities: [...CAPABILITIES] }),
);

export const METRICS = defineRoute<SurfaceADependencies>(
  {
    method: "GET",
    url: "/metrics",
    scope: "reading",
    summary: "Prometheus metrics of both surfaces",
    tag: "service",
    answers: { 200: { description: "The Prometheus text exposition format.", text: "text/plain" } },
  },
  ({ metrics }) =>
    async (_request, reply) => {
      void reply.header("content-type", metrics.registry.contentType);
      return metrics.exposition();
    },
);
