/**
 * Every query and path parameter of every route of both surfaces has a bound, and a value outside it is a 400 that
 * names the parameter: never a 5xx, never a lookup in a store (docs/errors.md, "Parameter bounds"). The routes and their
 * parameters are read from the OpenAPI documents, which sidecar/test/openapi/documents.test.ts keeps equal to the
 * routes served: a route added later is covered here unchanged, and a parameter declared without a bound fails the
 * first test.
 *
 * The requests are injected into both surfaces built over the context of a running sidecar on LMDB (a data dir, a few
 * decisions), each with the key of its route's scope, so that a value of 100,000 characters reaches the router and the
 * route: over a socket, Node answers a request line over 16 KB with 431 before any route (docs/sidecar.md, "Connection
 * limits").
 */
import fc from "fast-check";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compile } from "@writ/compiler";
import { isBundleRef } from "@writ/runtime";
import { buildSurfaceA, buildSurfaceB, createMetrics, OPENAPI_TEXTS } from "@writ/sidecar";
import { POLICY_ID_MAX_LENGTH, POLICY_VERSION_MAX_LENGTH } from "@writ/wire";
import { accessOf, type RouteScopes } from "../../src/http/scopes.js";
import { SURFACE_A_SCOPES } from "../../src/surface-a/routes.js";
import { SURFACE_B_SCOPES } from "../../src/surface-b/routes.js";
import { OPENAPI_DOCUMENTS, type OpenApiDocumentName } from "../../src/openapi-documents.js";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import { TRANSFER, evaluate, startE2eSidecar, type E2eSidecar } from "../support/e2e.js";

const KEYS = { deciding: "bounds-decide-key-0123456789abcdef", reading: "bounds-read-key-0123456789abcdefgh" } as const;

/** A parameter's schema, as the documents write it (a `$ref` resolved). */
interface ParameterSchema {
  readonly type?: string;
  readonly enum?: readonly string[];
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly default?: unknown;
  readonly format?: string;
}

interface Parameter {
  readonly name: string;
  readonly in: "path" | "query";
  readonly required: boolean;
  readonly schema: ParameterSchema;
}

interface Route {
  readonly surface: OpenApiDocumentName;
  readonly method: string;
  /** The document's path, `/audit/decisions/{executionId}`. */
  readonly path: string;
  readonly parameters: readonly Parameter[];
  /** The statuses the document says the route answers. */
  readonly statuses: ReadonlySet<number>;
}

interface Document {
  readonly paths: Readonly<
    Record<string, Readonly<Record<string, { readonly parameters?: readonly RawParameter[]; readonly responses: object }>>>
  >;
  readonly components: { readonly schemas: Readonly<Record<string, ParameterSchema>> };
}
interface RawParameter {
  readonly name: string;
  readonly in: "path" | "query";
  readonly required: boolean;
  readonly schema: ParameterSchema & { readonly $ref?: string };
}

const SCOPES: Readonly<Record<OpenApiDocumentName, RouteScopes>> = { "surface-a": SURFACE_A_SCOPES, "surface-b": SURFACE_B_SCOPES };

/** Every operation of both documents with its parameters. */
function routesOf(surface: OpenApiDocumentName): Route[] {
  const document = OPENAPI_DOCUMENTS[surface]() as unknown as Document;
  const resolved = ({ $ref, ...schema }: RawParameter["schema"]): ParameterSchema =>
    $ref === undefined ? schema : { ...document.components.schemas[$ref.slice("#/components/schemas/".length)], ...schema };
  return Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({
      surface,
      method: method.toUpperCase(),
      path,
      parameters: (operation.parameters ?? []).map((p) => ({ name: p.name, in: p.in, required: p.required, schema: resolved(p.schema) })),
      statuses: new Set(Object.keys(operation.responses).map(Number)),
    })),
  );
}

const ROUTES = [...routesOf("surface-a"), ...routesOf("surface-b")];
const PARAMETERS = ROUTES.flatMap((route) => route.parameters.map((parameter) => ({ route, parameter })));
const label = (route: Route, parameter?: Parameter) =>
  `${route.surface} ${route.method} ${route.path}${parameter === undefined ? "" : ` ${parameter.in} \`${parameter.name}\``}`;

/** What bounds `schema`, or why nothing does. */
function boundOf({ type, enum: values, maxLength, minimum, maximum }: ParameterSchema): string | null {
  if (type === "string") return values !== undefined || maxLength !== undefined ? null : "a string without maxLength or enum";
  if (type === "integer" || type === "number")
    return minimum !== undefined && maximum !== undefined ? null : `${type} without minimum and maximum`;
  return `of type ${String(type)}`;
}

/** A value the parameter takes, so that a request's other parameters are never what it is refused for. */
function validValue({ schema }: Parameter): string {
  if (schema.enum !== undefined) return schema.enum[0]!;
  if (schema.type === "integer") return String(schema.default ?? schema.minimum);
  if (schema.format === "date-time") return "2025-01-31T00:00:00Z";
  return "a";
}

/** The bodies of the POST routes that read a query: a dry run, so that the query is read. */
const BODIES: Readonly<Record<string, unknown>> = {
  "surface-a POST /evaluate": { ...TRANSFER, signals: TRANSFER_SIGNALS.approved },
  "surface-a POST /simulate": { ...TRANSFER, signals: TRANSFER_SIGNALS.approved },
};

/**
 * `text` percent-encoded as a client would send it; a lone surrogate (which `encodeURIComponent` refuses) as its
 * three WTF-8 bytes, which are no UTF-8.
 */
function percentEncoded(text: string): string {
  return text
    .split(/([\uD800-\uDFFF])/u)
    .map((part, i) => {
      if (i % 2 === 0) return encodeURIComponent(part);
      const unit = part.charCodeAt(0);
      return [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
        .map((byte) => `%${byte.toString(16).toUpperCase()}`)
        .join("");
    })
    .join("");
}

type Values = Readonly<Record<string, string | readonly string[]>>;

let s: E2eSidecar;
const apps = new Map<OpenApiDocumentName, FastifyInstance>();

beforeAll(async () => {
  s = await startE2eSidecar({ SERVICE_B_PORT: "0", SERVICE_DECIDE_KEY: KEYS.deciding, SERVICE_READ_KEY: KEYS.reading });
  for (const signals of Object.values(TRANSFER_SIGNALS)) await evaluate(s, signals);
  apps.set("surface-a", await buildSurfaceA(s.running.context, createMetrics(), OPENAPI_TEXTS));
  apps.set("surface-b", buildSurfaceB(s.running.context, createMetrics()));
});
afterAll(async () => {
  for (const app of apps.values()) await app.close();
  await s.close();
});

interface Answer {
  readonly status: number;
  readonly body: { readonly error?: string; readonly details?: readonly { readonly path: string; readonly message: string }[] } | null;
}

/** `route` with the required parameters at valid values and `values` over them, with the key of its scope. */
async function send(route: Route, values: Values): Promise<Answer> {
  const given: Record<string, string | readonly string[]> = {};
  for (const p of route.parameters) if (p.in === "path" || p.required) given[p.name] = validValue(p);
  Object.assign(given, values);
  let path = route.path;
  const query: string[] = [];
  for (const [name, value] of Object.entries(given)) {
    const declared = route.parameters.find((p) => p.name === name);
    if (declared?.in === "path") path = path.replace(`{${name}}`, percentEncoded(value as string));
    else for (const one of [value].flat()) query.push(`${encodeURIComponent(name)}=${percentEncoded(one)}`);
  }
  const access = accessOf(SCOPES[route.surface], route.method, route.path.replace(/\{([^}]+)\}/g, ":$1"));
  const body = BODIES[`${route.surface} ${route.method} ${route.path}`] ?? (route.method === "POST" ? {} : undefined);
  const response = await apps.get(route.surface)!.inject({
    method: route.method as "GET",
    url: `${path}${query.length === 0 ? "" : `?${query.join("&")}`}`,
    headers: {
      ...(access === "public" || access === undefined ? {} : { authorization: `Bearer ${KEYS[access]}` }),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  const json = String(response.headers["content-type"] ?? "").startsWith("application/json") && response.body !== "";
  return { status: response.statusCode, body: json ? (JSON.parse(response.body) as Answer["body"]) : null };
}

/** What the router answers, before any route, for a path parameter it cannot take (http/server.ts). */
const URL_REFUSALS = ["a path parameter is longer than 12,288 characters", "a path parameter is not valid percent-encoded UTF-8"];

/** The answer is a 400 `Invalid request` about `parameter` (for a path parameter, or the router's refusal of the URL). */
function expectRefusalOf(answer: Answer, route: Route, parameter: Parameter): void {
  expect(answer.status, label(route, parameter)).toBe(400);
  // A HEAD answer has no body.
  if (route.method === "HEAD") return;
  expect(answer.body?.error).toBe("Invalid request");
  const at = `${parameter.in === "path" ? "params" : "querystring"}/${parameter.name}`;
  const named = (answer.body?.details ?? []).some(
    ({ path, message }) =>
      path === at || message.startsWith(`${at} `) || (parameter.in === "path" && path === "url" && URL_REFUSALS.includes(message)),
  );
  expect(named, `${label(route, parameter)}: ${JSON.stringify(answer.body).slice(0, 300)}`).toBe(true);
}

/** A unit of text: ASCII, other scripts, characters outside the BMP (surrogate pairs), and lone surrogates in a query. */
function unitOf(parameter: Parameter): fc.Arbitrary<string> {
  const units = [
    fc.string({ unit: fc.constantFrom(..."abcxyz019._-~:"), minLength: 1, maxLength: 8 }),
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 4 }),
    fc.constantFrom("é", "日本", "😀", "𝔘", "ß\u0301"),
  ];
  // In a path, a lone surrogate's bytes are no UTF-8 and the router refuses the URL whatever its length.
  if (parameter.in === "query") units.push(fc.constantFrom("\uD800", "a\uDC00", "\uDBFF\uDBFF"));
  return fc.oneof(...units);
}

/** `unit` repeated to exactly `length` code points. */
function repeated(unit: string, length: number): string {
  const points = [...unit];
  let out = "";
  for (let i = 0; i < length; i++) out += points[i % points.length];
  return out;
}

/** Strings longer than the parameter's bound (or, for a list of values, of any length up to 100,000). */
function overLong(parameter: Parameter): fc.Arbitrary<string> {
  const floor = (parameter.schema.maxLength ?? 0) + 1;
  const length = fc.oneof(fc.integer({ min: floor, max: floor + 64 }), fc.integer({ min: Math.max(floor, 2_000), max: 100_000 }));
  const long = fc.tuple(unitOf(parameter), length).map(([unit, n]) => repeated(unit, n));
  if (parameter.schema.enum === undefined) return long;
  const values = parameter.schema.enum;
  return fc.oneof(
    long,
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 16 }).filter((text) => !values.includes(text)),
  );
}

/** Integers outside [minimum, maximum], and texts that are no plain decimal integer. */
function outOfRange(parameter: Parameter): fc.Arbitrary<string> {
  const min = BigInt(parameter.schema.minimum!);
  const max = BigInt(parameter.schema.maximum!);
  const far = 10n ** 40n;
  return fc.oneof(
    fc.bigInt({ min: max + 1n, max: max + far }).map(String),
    fc.bigInt({ min: min - far, max: min - 1n }).map(String),
    fc.tuple(fc.constantFrom(..."123456789"), fc.integer({ min: 2_000, max: 100_000 })).map(([digit, n]) => digit.repeat(n)),
    // Not plain digits: refused whatever number they stand for. (An empty path segment matches no route.)
    fc.constantFrom("1e3", "1.5", "+1", " 1", "0x10", "Infinity", "NaN", "-0", "١٢", ...(parameter.in === "query" ? [""] : [])),
  );
}

/** Values within the parameter's bounds, of any content. */
function withinBounds(parameter: Parameter): fc.Arbitrary<string> {
  const { schema } = parameter;
  if (schema.type === "integer") return fc.bigInt({ min: BigInt(schema.minimum!), max: BigInt(schema.maximum!) }).map(String);
  // The router takes no empty path segment.
  const minLength = Math.max(schema.minLength ?? 0, parameter.in === "path" ? 1 : 0);
  const unit = fc.oneof(fc.constantFrom(..."abz09.-_"), fc.string({ unit: "binary", minLength: 1, maxLength: 1 }));
  return fc.string({ unit, minLength, maxLength: schema.maxLength ?? 16 });
}

describe("the documents", () => {
  it("list the routes of both surfaces with their parameters", () => {
    expect(ROUTES.length).toBeGreaterThan(40);
    expect(PARAMETERS.length).toBeGreaterThan(40);
  });

  it("bound every query and path parameter of every route: a length or a list of values, or a range", () => {
    const unbounded = PARAMETERS.flatMap(({ route, parameter }) => {
      const problem = boundOf(parameter.schema);
      return problem === null ? [] : [`${label(route, parameter)}: ${problem}`];
    });
    expect(unbounded).toEqual([]);
  });

  it("declare every path parameter of every route", () => {
    const undeclared = ROUTES.flatMap((route) =>
      [...route.path.matchAll(/\{([^}]+)\}/g)]
        .map((m) => m[1]!)
        .filter((name) => !route.parameters.some((p) => p.in === "path" && p.name === name))
        .map((name) => `${label(route)}: {${name}}`),
    );
    expect(undeclared).toEqual([]);
  });
});

describe("the bounds are those of what can be stored", () => {
  const source = (policyId: string) =>
    `policy "${policyId}" version "1.0.0"\n\ngoverns "x.run"\n\nsignals {\n  flag: boolean\n}\n\nrule flagged when flag approve "flag is set"\n`;

  it("a policy id of the longest the compiler takes compiles, one character more does not", () => {
    expect(compile("policy.writ", source("a".repeat(POLICY_ID_MAX_LENGTH))).valid).toBe(true);
    expect(compile("policy.writ", source("a".repeat(POLICY_ID_MAX_LENGTH + 1))).errors.map((e) => e.code)).toContain("E304");
  });

  it("a version of the longest a bundle can have names one, one character more does not (a bundle reference's limit)", () => {
    const longest = `1.0.0-${"a".repeat(POLICY_VERSION_MAX_LENGTH - 6)}`;
    expect(isBundleRef("a", longest)).toBe(true);
    expect(isBundleRef("a", `${longest}a`)).toBe(false);
  });
});

describe.each(PARAMETERS.map(({ route, parameter }) => [label(route, parameter), route, parameter] as const))(
  "%s",
  (_label, route, parameter) => {
    it("a valid value is answered (the other parameters of these requests are valid)", async () => {
      const answer = await send(route, { [parameter.name]: validValue(parameter) });
      expect(answer.status, JSON.stringify(answer.body)).not.toBe(400);
      expect(answer.status).toBeLessThan(500);
    });

    it(
      parameter.schema.type === "integer"
        ? "out of range or not an integer: 400 naming it"
        : "over-long or not one of its values: 400 naming it",
      async () => {
        const values = parameter.schema.type === "integer" ? outOfRange(parameter) : overLong(parameter);
        await fc.assert(
          fc.asyncProperty(values, async (value) => expectRefusalOf(await send(route, { [parameter.name]: value }), route, parameter)),
          { numRuns: route.method === "HEAD" ? 10 : 30 },
        );
      },
    );

    it("any value within its bounds: an answer the document lists, never a 5xx", async () => {
      await fc.assert(
        fc.asyncProperty(withinBounds(parameter), async (value) => {
          const { status } = await send(route, { [parameter.name]: value });
          expect(status).toBeLessThan(500);
          expect(
            route.statuses.has(status),
            `${label(route, parameter)} answered ${status} for ${JSON.stringify(value).slice(0, 80)}`,
          ).toBe(true);
        }),
        { numRuns: route.method === "HEAD" ? 10 : 30 },
      );
    });

    if (parameter.in === "query") {
      it("given twice: 400 naming it", async () => {
        const value = validValue(parameter);
        expectRefusalOf(await send(route, { [parameter.name]: [value, value] }), route, parameter);
      });
    }
  },
);

describe.each(ROUTES.map((route) => [label(route), route] as const))("%s", (_label, route) => {
  it("an unknown query parameter of any length: never a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 100_000 }), async (length) => {
        const { status } = await send(route, { "not-a-parameter": "x".repeat(length) });
        expect(status).toBeLessThan(500);
        expect(route.statuses.has(status)).toBe(true);
      }),
      { numRuns: 5 },
    );
  });
});
