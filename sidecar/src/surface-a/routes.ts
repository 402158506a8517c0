/**
 * Surface A's routes (spec 4.1), each declared with its handler in the file of its group (http/route.ts), listed here
 * in the order of its OpenAPI document: app.ts registers them, the scope table below is made of them, and so is the
 * document (openapi/document.ts).
 */
import type { Surface } from "../http/route.js";
import { scopesOf, type RouteScopes } from "../http/scopes.js";
import { CONVENTIONS } from "../openapi/document.js";
import { ADMIN_BUNDLES, ADMIN_RELOAD } from "./admin-routes.js";
import { CONFIRM_EXECUTION, OVERRIDE, VERIFY } from "./attestations.js";
import { AUDIT_EXPORT, AUDIT_LOG, AUDIT_LOGS, CHECKPOINT, CHECKPOINTS, CONSISTENCY_PROOF, INCLUSION_PROOF } from "./audit-log-routes.js";
import { AUDIT_STATS, DECISION, DECISIONS, SECURITY_EVENTS } from "./audit-routes.js";
import { EVALUATE, EXECUTE, SIMULATE } from "./decisions.js";
import type { SurfaceADependencies } from "./dependencies.js";
import { DOCUMENT_ROUTES } from "./document-routes.js";
import { HEALTH, METRICS, POLICY_SCHEMA, RUNTIME_CAPABILITIES, RUNTIME_MANIFEST } from "./runtime-info.js";

export const SURFACE_A: Surface<SurfaceADependencies> = {
  title: "writ Surface A",
  description: `The governance server of writ (docs/sidecar.md): decisions (evaluate and its dry run, the legacy execute, simulate), overrides, execution confirmations, verification, the audit trail and its tamper-evident record log, metrics and the operator's routes. ${CONVENTIONS}`,
  headOfEveryGet: true,
  routes: [
    HEALTH,
    EVALUATE,
    EXECUTE,
    SIMULATE,
    OVERRIDE,
    CONFIRM_EXECUTION,
    VERIFY,
    POLICY_SCHEMA,
    RUNTIME_MANIFEST,
    RUNTIME_CAPABILITIES,
    DECISIONS,
    DECISION,
    AUDIT_STATS,
    SECURITY_EVENTS,
    AUDIT_LOGS,
    AUDIT_LOG,
    CHECKPOINTS,
    CHECKPOINT,
    INCLUSION_PROOF,
    CONSISTENCY_PROOF,
    AUDIT_EXPORT,
    METRICS,
    ADMIN_BUNDLES,
    ADMIN_RELOAD,
    ...DOCUMENT_ROUTES,
  ],
};

export const SURFACE_A_SCOPES: RouteScopes = scopesOf(SURFACE_A.routes);
