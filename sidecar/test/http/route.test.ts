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

/** A route that waits `ms` for its store (as one writing to a database that does not answer), then answers "written". */
function waiting(url: string, ms: number, errors: Route<Greeting>["errors"]): Route<Greeting> {
  return defineRoute<Greeting>(
    {
      method: "POST",
      url,
      scope: "deciding",
      summary: "Waits for its store",
      tag: "test",
      answers: { 200: { description: "Written.", text: "text/plain" } },
      ...(errors === undefined ? {} : { errors }),
    },
    () => async () => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return "written";
    },
  );
}

const closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/** A server of `surface`, as a surface's app builds one; its log lines in `lines`. */
function serve(surface: Pick<Surface<Greeting>, "routes" | "headOfEveryGet">, storeAnswerWithinMs: number | null = null) {
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
  registerRoutes(app, surface, { word: "pong" }, storeAnswerWithinMs);
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

  it("that writes to the store (it can answer REPLAY_STORE_UNAVAILABLE) is answered within the store's bound: 503, its work going on", async () => {
    const routes = [
      waiting("/write", 2_000, ["REPLAY_STORE_UNAVAILABLE"]),
      waiting("/read", 400, undefined),
      waiting("/quick", 10, ["REPLAY_STORE_UNAVAILABLE"]),
    ];
    const { app, lines } = serve({ routes, headOfEveryGet: true }, 200);
    const started = Date.now();
    // With a body: fastify's own handlerTimeout would not bound it (its timer is cleared once the body is read).
    await app.listen({ port: 0, host: "127.0.0.1" });
    const write = await fetch(`http://127.0.0.1:${(app.server.address() as { port: number }).port}/write`, {
      method: "POST",
      headers: { ...DECIDING, "content-type": "application/json" },
      body: JSON.stringify({ executionId: "x" }),
    });
    const written = { statusCode: write.status, json: async () => (await write.json()) as unknown };
    expect([written.statusCode, await written.json()]).toEqual([503, { error: "replay store unavailable" }]);
    expect(Date.now() - started).toBeLessThan(1_500);
    // A route that writes nothing has no such bound; one that answers in time is answered.
    expect((await app.inject({ method: "POST", url: "/read", headers: DECIDING })).body).toBe("written");
    expect((await app.inject({ method: "POST", url: "/quick", headers: DECIDING })).body).toBe("written");
    // Without a bound (LMDB), none.
    const unbounded = serve({ routes, headOfEveryGet: true }, null);
    expect((await unbounded.app.inject({ method: "POST", url: "/write", headers: DECIDING })).body).toBe("written");
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(lines.filter((line) => line.msg !== "request failed")).toEqual([]);
  });
});
