/**
 * The OpenAPI documents of both surfaces (docs/openapi/, docs/sidecar.md "OpenAPI documents"): the committed files are
 * what the code makes (`npm run openapi`); an OpenAPI validator library accepts both; every route a surface serves is
 * an operation of its document and every operation is served; Surface A serves both documents without a key. That
 * every answer is what its document says is checked on every answer of the end-to-end suites (support/openapi.ts).
 */
import { readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSurfaceA, buildSurfaceB, createMetrics, OPENAPI_TEXTS } from "@writ/sidecar";
import { openApiPath } from "../../scripts/openapi.js";
import { OPENAPI_DOCUMENTS, openApiText, type OpenApiDocumentName } from "../../src/openapi-documents.js";
import { startE2eSidecar, type E2eSidecar } from "../support/e2e.js";
import { routesOf } from "../support/routes.js";

const NAMES = Object.keys(OPENAPI_DOCUMENTS) as OpenApiDocumentName[];

interface Document {
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/** The operations of `document` as `METHOD /pattern`, fastify's form of a path. */
function operationsOf(document: Document): string[] {
  return Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => `${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ":$1")}`),
  );
}

describe("the committed documents", () => {
  it.each(NAMES)("docs/openapi/%s.json is what the code makes now (`npm run openapi` writes it)", (name) => {
    expect(readFileSync(openApiPath(name), "utf8")).toBe(openApiText(name));
  });

  it.each(NAMES)("%s is a valid OpenAPI 3.1 document, every reference resolved", async (name) => {
    const validator = new Validator();
    expect(await validator.validate(JSON.parse(openApiText(name)) as Record<string, unknown>)).toEqual({ valid: true });
    expect(validator.version).toBe("3.1");
    expect(() => validator.resolveRefs()).not.toThrow();
  });
});

let s: E2eSidecar;
beforeAll(async () => {
  s = await startE2eSidecar();
});
afterAll(async () => {
  await s.close();
});

describe("the documents and the routes served", () => {
  it.each([
    ["surface-a", () => buildSurfaceA(s.running.context, createMetrics(), OPENAPI_TEXTS)],
    ["surface-b", async () => buildSurfaceB(s.running.context, createMetrics())],
  ] as const)("every route %s serves is an operation of its document, and every operation is served", async (name, build) => {
    const app = await build();
    try {
      const served = await routesOf(app);
      const documented = operationsOf(OPENAPI_DOCUMENTS[name]() as unknown as Document);
      expect(served.length).toBeGreaterThan(10);
      expect([...documented].sort()).toEqual([...served].sort());
    } finally {
      await app.close();
    }
  });
});

describe("served on Surface A", () => {
  it.each(NAMES)("GET /openapi/%s.json answers the committed document, without a key", async (name) => {
    const r = await s.send("GET", `/openapi/${name}.json`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(r.body).toEqual(JSON.parse(readFileSync(openApiPath(name), "utf8")));
  });
});
