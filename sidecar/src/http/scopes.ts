/**
 * Who may call each route (docs/sidecar.md, "Scoped keys"): the one table of every route the sidecar serves, read by
 * `createServer`, which refuses to register a route missing from it. A route is `public` (no key), `deciding` (the
 * callers that evaluate and execute) or `reading` (the operators: audit trail, metrics, bundles and reload).
 */
import type { ApiKeys } from "../config.js";

export type Scope = "deciding" | "reading";
export type Access = Scope | "public";

/** `METHOD /pattern` (fastify's route pattern) to who may call it; a HEAD route has the scope of its GET. */
export type RouteScopes = Readonly<Record<string, Access>>;

export const SURFACE_A_SCOPES: RouteScopes = {
  // The only unauthenticated route (spec 5), liveness and readiness (`?probe=ready`) alike.
  "GET /health": "public",
  "POST /evaluate": "deciding",
  "POST /execute": "deciding",
  "POST /simulate": "deciding",
  "POST /override": "deciding",
  "POST /confirm-execution": "deciding",
  "POST /verify": "deciding",
  "GET /policies/:policyId/versions/:version/schema": "deciding",
  "GET /runtime/manifest": "deciding",
  "GET /runtime/capabilities": "deciding",
  "GET /audit/decisions": "reading",
  "GET /audit/decisions/:executionId": "reading",
  "GET /audit/stats": "reading",
  "GET /audit/security": "reading",
  "GET /audit/log": "reading",
  "GET /audit/logs": "reading",
  "GET /audit/checkpoints": "reading",
  "GET /audit/checkpoints/:size": "reading",
  "GET /audit/proofs/inclusion": "reading",
  "GET /audit/proofs/consistency": "reading",
  "GET /audit/export": "reading",
  "GET /metrics": "reading",
  // The operator's routes: they take no input and change nothing a caller chooses (a reload re-reads what the
  // operator configured, as SIGHUP does), so they go with the operator's other key rather than the callers'.
  "GET /admin/bundles": "reading",
  "POST /admin/reload": "reading",
  // The OpenAPI documents of both surfaces (docs/openapi/): the API of every writ sidecar of this version, which
  // reveals nothing of this one's configuration or data, for the tools that read them without a key.
  "GET /openapi/surface-a.json": "public",
  "GET /openapi/surface-b.json": "public",
};

/** Surface B (spec 4.2): its 13 routes, all of them the callers', but `/health` and `/version`. */
export const SURFACE_B_SCOPES: RouteScopes = {
  "GET /health": "public",
  "GET /version": "public",
  "POST /policies/validate": "deciding",
  "POST /execute": "deciding",
  "POST /transactions": "deciding",
  "GET /transactions": "deciding",
  "GET /transactions/:id": "deciding",
  "GET /trust-records/:id": "deciding",
  "POST /verify": "deciding",
  "GET /verification/:id": "deciding",
  "POST /receipt": "deciding",
  "GET /receipt/latest/:id": "deciding",
  "POST /replay": "deciding",
};

/** Who may call `method url`; undefined: the table does not have it. */
export function accessOf(scopes: RouteScopes, method: string, url: string): Access | undefined {
  return scopes[`${method === "HEAD" ? "GET" : method} ${url}`];
}

/** A configured key and the scopes it opens. */
export interface KeyGrant {
  readonly key: string;
  readonly scopes: readonly Scope[];
}

/** `SERVICE_API_KEY` opens both scopes; each scoped key opens its own. */
export function grantsOf(keys: ApiKeys): KeyGrant[] {
  const grants: KeyGrant[] = [];
  if (keys.all !== null) grants.push({ key: keys.all, scopes: ["deciding", "reading"] });
  if (keys.deciding !== null) grants.push({ key: keys.deciding, scopes: ["deciding"] });
  if (keys.reading !== null) grants.push({ key: keys.reading, scopes: ["reading"] });
  return grants;
}
