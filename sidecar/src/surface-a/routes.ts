/**
 * Surface A's routes (spec 4.1), each declared with its handler in the file of its group (http/route.ts), listed here
 * in the order of its OpenAPI document: surface-a/app.ts registers them, http/scopes.ts makes the scope table of them,
 * and openapi/documents.ts the document.
 */
import type { Surface } from "../http/route.js";
import { DOCUMENT_ROUTES } from "../openapi/routes.js";
import { ADMIN_BUNDLES, ADMIN_RELOAD } from "./admin-routes.js";
import { CONFIRM_EXECUTION, OVERRIDE, VERIFY } from "./attestations.js";
import { AUDIT_EXPORT, AUDIT_LOG, AUDIT_LOGS, CHECKPOINT, CHECKPOINTS, CONSISTENCY_PROOF, INCLUSION_PROOF } from "./audit-log-routes.js";
import { AUDIT_STATS, DECISION, DECISIONS, SECURITY_EVENTS } from "./audit-routes.js";
import { EVALUATE, EXECUTE, SIMULATE } from "./decisions.js";
import type { SurfaceADependencies } from "./dependencies.js";
import { HEALTH, METRICS, POLICY_SCHEMA, RUNTIME_CAPABILITIES, RUNTIME_MANIFEST } from "./runtime-info.js";

export const SURFACE_A: Surface<SurfaceADependencies> = {
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
