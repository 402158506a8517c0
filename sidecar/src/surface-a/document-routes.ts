/**
 * `GET /openapi/surface-a.json` and `GET /openapi/surface-b.json` on Surface A, without a key: the documents describe
 * the API of every writ sidecar of this version, and reveal nothing of this one's configuration or data, for the tools
 * that read them without credentials. Surface B serves exactly its spec's routes, so its document is served here.
 * Each is made once per surface, when first asked for: not at start, which it would slow for a route seldom called.
 */
import { JsonObject } from "@writ/wire";
import { defineRoute, type Route } from "../http/route.js";
import { sendJsonText } from "../http/json-text.js";

/** The documents served: each surface's (surface-a/openapi.ts, surface-b/openapi.ts). */
const SERVED = ["surface-a", "surface-b"] as const;

/**
 * What the routes are made with: a document's text, as docs/openapi/ holds it. Surface A's document describes these
 * routes too, and Surface B's is Surface B's own: the caller of buildSurfaceA hands both in (openapi-documents.ts).
 */
export interface OpenApiTexts {
  readonly openApiText: (name: (typeof SERVED)[number]) => string;
}

function documentRoute(name: (typeof SERVED)[number]): Route<OpenApiTexts> {
  return defineRoute<OpenApiTexts>(
    {
      method: "GET",
      url: `/openapi/${name}.json`,
      scope: "public",
      summary: `The OpenAPI 3.1 document of ${name}`,
      description: `The same document as \`docs/openapi/${name}.json\` of the writ repository (made by \`npm run openapi\`).`,
      tag: "service",
      answers: { 200: { description: "The document.", schema: JsonObject } },
    },
    ({ openApiText }) => {
      let text: string | undefined;
      return async (_request, reply) => sendJsonText(reply, (text ??= openApiText(name)));
    },
  );
}

export const DOCUMENT_ROUTES = SERVED.map(documentRoute);
