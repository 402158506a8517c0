/**
 * A route declared once (http/route.ts, docs/adding-a-route.md): a declaration made here is served with its scope and
 * its schemas, answers HEAD where its surface does, is an operation of its surface's document with the same scope and
 * inputs, and, as an execution, has its failures logged as `execute:failure`. That the surfaces' own routes are their
 * documents' operations and their scope tables' routes: sidecar/test/openapi/documents.test.ts and
 * sidecar/test/e2e/scoped-keys.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { HealthQuery, TransactionRef } from "@writ/wire";
import { DEFAULT_CONNECTION_LIMITS } from "../../src/http/connections.js";
import { SidecarHttpError } from "../../src/http/errors.js";
import { registerRoutes } from "../../src/http/register-routes.js";
import { defineRoute, type Route, type Surface } from "../../src/http/route.js";
import { scopesOf } from "../../src/http/scopes.js";
import { createServer } from "../../src/http/server.js";
import { createLogger } from "../../src/observability/logger.js";
import { openApiDocument } from "../../src/openapi/document.js";

const KEYS = { all: null, deciding: "route-test-decide-key-0123456789", reading: "route-test-read-key-0123456789ab" } as const;
const READING = { authorization: `Bearer ${KEYS.reading}` };
const DECIDING = { authorization: `Bearer ${KEYS.deciding}` };

/** What the handlers below are made with. */
interface Greeting {
  readonly word: string;
}

const PING = defineRoute<Greeting, { Querystring: HealthQuery }>(
  {
    method: "GET",
    url: "/ping",
    scope: "reading",
    summary: "A throwaway route",
    tag: "test",
    schema: { querystring: HealthQuery },
    answers: { 200: { description: "The word.", text: "text/plain" } },
  },
  ({ word }) =>
    async (request) =>
      `${word}${request.query.probe === undefined ? "" : ` ${request.query.probe}`}`,
);

const ECHO = defineRoute<Greeting, { Body: TransactionRef }>(
  {
    method: "POST",
    url: "/echo",
    scope: "deciding",
    summary: "Echoes a checked body",
    tag: "test",
    schema: { body: TransactionRef },
    answers: { 200: { description: "The id.", text: "text/plain" } },
  },
  () => async (request) => request.body.businessTransactionId,
);

const UNCHECKED = defineRoute<Greeting>(
  {
    method: "POST",
    url: "/unchecked",
    scope: "deciding",
    summary: "Reads a body its handler checks",
    tag: "test",
    checkedByHandler: { body: TransactionRef },
    answers: { 200: { description: "The body as received.", text: "text/plain" } },
  },
  () => async (request) => JSON.stringify(request.body),
);

/** A route that always fails with 404 `Policy not found`. */
function failing(url: string, execution: boolean): Route<Greeting> {
  return defineRoute<Greeting>(
    {
      method: "POST",
      url,
      scope: "deciding",
      summary: "Fails",
      tag: "test",
      answers: { 200: { description: "Never.", text: "text/plain" } },
      errors: ["POLICY_NOT_FOUND"],
      execution,
    },
    () => async () => {
      throw SidecarHttpError.of("POLICY_NOT_FOUND");
    },
  );
}

const ROUTES = [PING, ECHO, UNCHECKED, failing("/run", true), failing("/fail", false)];

const closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/** A server of `surface`, as a surface's app builds one; its log lines in `lines`. */
function serve(surface: Surface<Greeting>) {
  const lines: { msg?: string }[] = [];
  const app = createServer({
    keys: KEYS,
    scopes: scopesOf(surface.routes),
    surface: "a",
    log: createLogger("warn", { write: (line: string) => void lines.push(JSON.parse(line) as { msg?: string }) }),
    accessLog: false,
    tracing: null,
    connections: DEFAULT_CONNECTION_LIMITS,
  });
  registerRoutes(app, surface, { word: "pong" });
  closing.push(() => app.close());
  return { app, lines };
}

describe("a declared route", () => {
  it("is served with its scope, its handler made from the surface's dependencies", async () => {
    const { app } = serve({ routes: ROUTES, headOfEveryGet: true });
    expect((await app.inject({ method: "GET", url: "/ping" })).statusCode).toBe(401);
    expect((await app.inject({ method: "GET", url: "/ping", headers: DECIDING })).statusCode).toBe(401);
    const answer = await app.inject({ method: "GET", url: "/ping?probe=ready", headers: READING });
    expect([answer.statusCode, answer.body]).toEqual([200, "pong ready"]);
    expect((await app.inject({ method: "HEAD", url: "/ping", headers: READING })).statusCode).toBe(200);
  });

  it("answers HEAD only where its surface does", async () => {
    const { app } = serve({ routes: ROUTES, headOfEveryGet: false });
    expect((await app.inject({ method: "HEAD", url: "/ping", headers: READING })).statusCode).toBe(404);
  });

  it("is validated by fastify with its `schema`, in the error table's words; what its handler checks reaches the handler", async () => {
    const { app } = serve({ routes: ROUTES, headOfEveryGet: true });
    const query = await app.inject({ method: "GET", url: "/ping?probe=other", headers: READING });
    expect(query.statusCode).toBe(400);
    expect(query.json()).toMatchObject({ error: "Invalid request", details: [{ path: "querystring/probe" }] });
    const json = { ...DECIDING, "content-type": "application/json" };
    const body = await app.inject({ method: "POST", url: "/echo", headers: json, payload: "{}" });
    expect([body.statusCode, body.json()]).toEqual([400, { error: "body must have required property 'businessTransactionId'" }]);
    const unchecked = await app.inject({ method: "POST", url: "/unchecked", headers: json, payload: '{"x":1}' });
    expect([unchecked.statusCode, unchecked.body]).toEqual([200, '{"x":1}']);
  });

  it("logs an execution's failures as `execute:failure`, and no other route's", async () => {
    const { app, lines } = serve({ routes: ROUTES, headOfEveryGet: true });
    for (const url of ["/run", "/fail"]) expect((await app.inject({ method: "POST", url, headers: DECIDING })).statusCode).toBe(404);
    expect(lines.filter((line) => line.msg === "execute:failure")).toHaveLength(1);
  });

  it("is an operation of its surface's document, with its scope, inputs and answers", () => {
    const document = openApiDocument({ title: "t", description: "d", routes: ROUTES, headOfEveryGet: true }) as {
      paths: Record<string, Record<string, { security: unknown; parameters?: { name: string; in: string }[]; responses: object }>>;
      components: { securitySchemes: object };
    };
    expect(Object.keys(document.paths)).toEqual(["/ping", "/echo", "/unchecked", "/run", "/fail"]);
    const ping = document.paths["/ping"]!;
    expect(Object.keys(ping)).toEqual(["get", "head"]);
    expect(ping["get"]!.security).toEqual([{ readingKey: [] }]);
    expect(ping["get"]!.parameters?.map(({ name, in: where }) => `${where} ${name}`)).toEqual(["query probe"]);
    expect(Object.keys(ping["get"]!.responses)).toEqual(["200", "400", "401", "500"]);
    expect(Object.keys(document.paths["/unchecked"]!["post"]!.responses)).toEqual(["200", "400", "401", "413", "500"]);
    expect(Object.keys(document.paths["/run"]!["post"]!.responses)).toEqual(["200", "400", "401", "404", "413", "500"]);
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(["decidingKey", "readingKey"]);
  });
});
