/** The OpenAPI documents of both surfaces, as docs/openapi/ holds them and `GET /openapi/<name>.json` serves them. */
import { SURFACE_A } from "../surface-a/routes.js";
import { SURFACE_B } from "../surface-b/routes.js";
import type { Json } from "./components.js";
import { openApiDocument } from "./document.js";

const CONVENTIONS =
  "Bodies are strict JSON in UTF-8 (duplicate keys, lone surrogates and unsafe numbers are 400s), at most 65,536 bytes (413 above). Request bodies are closed: a member not named is a 400. Every error answer is a body of the error table (docs/errors.md); a route that does not exist is 404 with a key, 401 without one.";

export const OPENAPI_DOCUMENTS = {
  "surface-a": (): Json =>
    openApiDocument({
      title: "writ Surface A",
      description: `The governance server of writ (docs/sidecar.md): decisions (evaluate and its dry run, the legacy execute, simulate), overrides, execution confirmations, verification, the audit trail and its tamper-evident record log, metrics and the operator's routes. ${CONVENTIONS}`,
      ...SURFACE_A,
    }),
  "surface-b": (): Json =>
    openApiDocument({
      title: "writ Surface B",
      description: `The business-transaction API of writ (docs/surface-b.md): a Business Transaction executed into a signed Execution Trust Record, its verifications and receipts. ${CONVENTIONS} Exactly these routes exist; HEAD and OPTIONS are 404. Its document is served on Surface A (\`GET /openapi/surface-b.json\`).`,
      ...SURFACE_B,
    }),
} as const;

export type OpenApiDocumentName = keyof typeof OPENAPI_DOCUMENTS;

/** The document as docs/openapi/<name>.json holds it: two-space JSON, a newline at the end. */
export function openApiText(name: OpenApiDocumentName): string {
  return `${JSON.stringify(OPENAPI_DOCUMENTS[name](), null, 2)}\n`;
}
