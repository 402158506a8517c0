/**
 * The OpenAPI documents of both surfaces, each made of its surface's declaration (surface-a/routes.ts,
 * surface-b/routes.ts), as docs/openapi/ holds them and Surface A serves them (`GET /openapi/<name>.json`).
 */
import type { Json } from "./openapi/components.js";
import { openApiDocument } from "./openapi/document.js";
import type { OpenApiTexts } from "./surface-a/document-routes.js";
import { SURFACE_A } from "./surface-a/routes.js";
import { SURFACE_B } from "./surface-b/routes.js";

export const OPENAPI_DOCUMENTS = {
  "surface-a": (): Json => openApiDocument(SURFACE_A),
  "surface-b": (): Json => openApiDocument(SURFACE_B),
} as const;

export type OpenApiDocumentName = keyof typeof OPENAPI_DOCUMENTS;

/** The document as docs/openapi/<name>.json holds it: two-space JSON, a newline at the end. */
export function openApiText(name: OpenApiDocumentName): string {
  return `${JSON.stringify(OPENAPI_DOCUMENTS[name](), null, 2)}\n`;
}

/** What buildSurfaceA serves the documents from. */
export const OPENAPI_TEXTS: OpenApiTexts = { openApiText };
