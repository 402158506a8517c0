/**
 * Surface B's routes (spec 4.2: exactly 13, all of them the callers' but `/health` and `/version`), each declared with
 * its handler in the file of its group (http/route.ts), listed here in the order of its OpenAPI document: app.ts
 * registers them, the scope table below is made of them, and so is the document (openapi/document.ts).
 */
import type { Surface } from "../http/route.js";
import { scopesOf, type RouteScopes } from "../http/scopes.js";
import { CONVENTIONS } from "../openapi/document.js";
import type { SurfaceBDependencies } from "./dependencies.js";
import { LATEST_RECEIPT, LATEST_VERIFICATION, RECEIPT, REPLAY, TRUST_RECORD, VERIFY } from "./evidence-routes.js";
import { HEALTH, POLICY_VALIDATE, VERSION } from "./service-routes.js";
import { CREATE_TRANSACTION, EXECUTE, TRANSACTION, TRANSACTIONS } from "./transaction-routes.js";

export const SURFACE_B: Surface<SurfaceBDependencies> = {
  title: "writ Surface B",
  description: `The business-transaction API of writ (docs/surface-b.md): a Business Transaction executed into a signed Execution Trust Record, its verifications and receipts. ${CONVENTIONS} Exactly these routes exist; HEAD and OPTIONS are 404. Its document is served on Surface A (\`GET /openapi/surface-b.json\`).`,
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

export const SURFACE_B_SCOPES: RouteScopes = scopesOf(SURFACE_B.routes);
