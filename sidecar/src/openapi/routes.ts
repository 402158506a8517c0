/**
 * `GET /openapi/surface-a.json` and `GET /openapi/surface-b.json` on Surface A, without a key (http/scopes.ts): the
 * documents describe the API of every writ sidecar of this version, not this one's configuration or data. Surface B
 * serves exactly its spec's routes, so its document is served here. Each is made once per process, when first asked
 * for: not at start, which it would slow for a route seldom called.
 */
import type { FastifyInstance } from "fastify";
import { OPENAPI_DOCUMENTS, openApiText, type OpenApiDocumentName } from "./documents.js";

const made = new Map<OpenApiDocumentName, string>();

function textOf(name: OpenApiDocumentName): string {
  let text = made.get(name);
  if (text === undefined) made.set(name, (text = openApiText(name)));
  return text;
}

export function openApiRoutes(app: FastifyInstance): void {
  for (const name of Object.keys(OPENAPI_DOCUMENTS) as OpenApiDocumentName[]) {
    app.get(`/openapi/${name}.json`, async (_request, reply) => reply.type("application/json; charset=utf-8").send(textOf(name)));
  }
}
