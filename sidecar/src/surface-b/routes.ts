/**
 * Surface B's routes (spec 4.2: exactly 13, all of them the callers' but `/health` and `/version`), each declared with
 * its handler in the file of its group (http/route.ts), listed here in the order of its OpenAPI document:
 * surface-b/app.ts registers them, http/scopes.ts makes the scope table of them, and openapi/documents.ts the document.
 */
import type { Surface } from "../http/route.js";
import type { SurfaceBDependencies } from "./dependencies.js";
import { LATEST_RECEIPT, LATEST_VERIFICATION, RECEIPT, REPLAY, TRUST_RECORD, VERIFY } from "./evidence-routes.js";
import { HEALTH, POLICY_VALIDATE, VERSION } from "./service-routes.js";
import { CREATE_TRANSACTION, EXECUTE, TRANSACTION, TRANSACTIONS } from "./transaction-routes.js";

export const SURFACE_B: Surface<SurfaceBDependencies> = {
  // Exactly the spec's routes: a HEAD is 404 like any other route that does not exist.
  headOfEveryGet: false,
  routes: [
    HEALTH,
    VERSION,
    POLICY_VALIDATE,
    EXECUTE,
    CREATE_TRANSACTION,
    TRANSACTIONS,
    TRANSACTION,
    TRUST_RECORD,
    VERIFY,
    LATEST_VERIFICATION,
    RECEIPT,
    LATEST_RECEIPT,
    REPLAY,
  ],
};
