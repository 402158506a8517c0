/**
 * The OpenAPI 3.1 document of a surface, made from its declared routes (http/route.ts) and the runtime's error table.
 * Each surface makes its own (surface-a/openapi.ts, surface-b/openapi.ts); docs/openapi/ holds them as made here
 * (`npm run openapi`), and Surface A serves both (surface-a/document-routes.ts).
 */
import { ERROR_CODES, type BodyErrorCode } from "@writ/runtime";
import { ErrorBody, InvalidRequestErrorBody, RateLimitedErrorBody, SignalValidationErrorBody, type TSchema } from "@writ/wire";
import pkg from "../../package.json";
import type { Access } from "../http/access.js";
import type { RouteDeclaration, RouteInputs, SurfaceDeclaration } from "../http/route.js";
import { Components, type Json } from "./components.js";

/** The security scheme of each scope: both are Bearer keys (docs/sidecar.md, "Scoped keys"). */
const SCHEMES: Readonly<Record<Exclude<Access, "public">, { readonly name: string; readonly description: string }>> = {
  deciding: {
    name: "decidingKey",
    description:
      'The deciding key, `Authorization: Bearer <key>`: `SERVICE_DECIDE_KEY`, or `SERVICE_API_KEY`, which opens both scopes (docs/sidecar.md, "Scoped keys"). A key of the other scope is 401.',
  },
  reading: {
    name: "readingKey",
    description:
      'The reading key, `Authorization: Bearer <key>`: `SERVICE_READ_KEY`, or `SERVICE_API_KEY`, which opens both scopes (docs/sidecar.md, "Scoped keys"). A key of the other scope is 401.',
  },
};

/** The error body a code answers with. */
function bodyOf(code: BodyErrorCode): TSchema {
  if (code === "BAD_REQUEST") return InvalidRequestErrorBody;
  if (code === "SIGNAL_VALIDATION_FAILED" || code === "SIGNALS_VALIDATION_FAILED") return SignalValidationErrorBody;
  if (code === "RATE_LIMITED") return RateLimitedErrorBody;
  return ErrorBody;
}

/** Every input of `route`, whether fastify or its handler checks it: the document shows them alike. */
function inputsOf(route: RouteDeclaration): RouteInputs {
  return { ...route.schema, ...route.checkedByHandler };
}

/** What a 400 `Invalid request` of `route` is about: the inputs it has (the table's meaning is the body's). */
function malformed(route: RouteDeclaration): string {
  const { body, querystring, params } = inputsOf(route);
  const what = [
    ...(route.method === "POST"
      ? [body === undefined ? "the body is not strict JSON" : "the body is not strict JSON or does not match its schema"]
      : []),
    ...(querystring === undefined ? [] : ["a query parameter is unknown, repeated or out of its bounds"]),
    ...(params === undefined ? [] : ["a path parameter cannot be read or is out of its bounds"]),
  ];
  return `${what.join("; ")}; \`details\` says what and where`;
}

/** A code as a line of its status's description: its message as sent, and what it means. */
function lineOf(code: BodyErrorCode, route: RouteDeclaration): string {
  const entry = ERROR_CODES[code];
  const message = "context" in entry ? `[${code}@${entry.context}] ${entry.message}` : entry.message;
  return `- \`${message}\` (${code}): ${code === "BAD_REQUEST" ? malformed(route) : entry.meaning}`;
}

const TABLE_ORDER = Object.keys(ERROR_CODES);

/** Every error code `route` answers: its own and those of every route with its inputs and access. */
function errorsOf(route: RouteDeclaration): BodyErrorCode[] {
  const { body, querystring, params } = inputsOf(route);
  const codes = new Set<BodyErrorCode>(route.errors ?? []);
  if (route.scope !== "public") codes.add("UNAUTHORIZED");
  // Any POST has its body parsed, whether the route reads it or not.
  if (route.method === "POST") codes.add("BAD_REQUEST").add("BODY_TOO_LARGE");
  if (body !== undefined) codes.add("MISSING_PROPERTY");
  if (querystring !== undefined || params !== undefined) codes.add("BAD_REQUEST");
  codes.add("INTERNAL_ERROR");
  return [...codes].sort((a, b) => TABLE_ORDER.indexOf(a) - TABLE_ORDER.indexOf(b));
}

function contentOf(schemas: readonly TSchema[], components: Components): Json {
  const distinct = [...new Set(schemas)];
  const schema = distinct.length === 1 ? components.schema(distinct[0]!) : { anyOf: distinct.map((s) => components.schema(s)) };
  return { "application/json": { schema } };
}

function responsesOf(route: RouteDeclaration, components: Components): Json {
  const { answers } = route;
  const errors = errorsOf(route);
  const statuses = new Set([...Object.keys(answers).map(Number), ...errors.map((code) => ERROR_CODES[code].status)]);
  const responses: Record<string, Json> = {};
  for (const status of [...statuses].sort((a, b) => a - b)) {
    const answer = answers[status];
    const codes = errors.filter((code) => ERROR_CODES[code].status === status);
    const description = [answer?.description, ...codes.map((code) => lineOf(code, route))].filter((line) => line !== undefined).join("\n");
    if (answer?.text !== undefined) {
      responses[String(status)] = { description, content: { [answer.text]: { schema: { type: "string" } } } };
      continue;
    }
    const schemas = [...(answer?.schema === undefined ? [] : [answer.schema]), ...codes.map(bodyOf)];
    responses[String(status)] = { description, content: contentOf(schemas, components) };
  }
  return responses;
}

interface ObjectSchema {
  readonly properties: Readonly<Record<string, { readonly description?: string }>>;
  readonly required?: readonly string[];
}

/** The members of an object schema as parameters `in` the path or the query. */
function parametersOf(schema: TSchema | undefined, where: "path" | "query", components: Components): Json[] {
  if (schema === undefined) return [];
  const { properties, required = [] } = schema as unknown as ObjectSchema;
  return Object.entries(properties).map(([name, member]) => ({
    name,
    in: where,
    required: where === "path" || required.includes(name),
    ...(member.description === undefined ? {} : { description: member.description }),
    schema: components.schema(member),
  }));
}

/** fastify's `/a/:b` as OpenAPI's `/a/{b}`. */
function pathOf(pattern: string): string {
  return pattern.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
}

/** The HEAD twin of a GET operation: the same answers, without their bodies. */
function headOf(get: Readonly<Record<string, Json>>): Json {
  const responses = get["responses"] as Readonly<Record<string, { readonly description: string }>>;
  return {
    ...get,
    operationId: `head${String(get["operationId"]).slice("get".length)}`,
    summary: `The headers of \`GET\`: ${String(get["summary"])}`,
    responses: Object.fromEntries(Object.entries(responses).map(([status, { description }]) => [status, { description }])),
  };
}

/** `GET /audit/decisions/:executionId` as `getAuditDecisionsByExecutionId`. */
function operationIdOf(method: string, pattern: string): string {
  const words = pattern
    .split(/[^A-Za-z0-9:]+/)
    .filter((word) => word !== "")
    .map((word) =>
      word.startsWith(":") ? `By${word.slice(1, 2).toUpperCase()}${word.slice(2)}` : `${word.slice(0, 1).toUpperCase()}${word.slice(1)}`,
    );
  return `${method.toLowerCase()}${words.join("")}`;
}

export function openApiDocument(surface: SurfaceDeclaration): Json {
  const components = new Components();
  const paths: Record<string, Record<string, Json>> = {};
  const tags: string[] = [];
  const schemes = new Set<Exclude<Access, "public">>();
  for (const route of surface.routes) {
    const { method, url, scope } = route;
    const { body, querystring, params } = inputsOf(route);
    if (scope !== "public") schemes.add(scope);
    if (!tags.includes(route.tag)) tags.push(route.tag);
    const parameters = [...parametersOf(params, "path", components), ...parametersOf(querystring, "query", components)];
    const operations = (paths[pathOf(url)] ??= {});
    operations[method.toLowerCase()] = {
      operationId: operationIdOf(method, url),
      summary: route.summary,
      ...(route.description === undefined ? {} : { description: route.description }),
      tags: [route.tag],
      security: scope === "public" ? [] : [{ [SCHEMES[scope].name]: [] }],
      ...(parameters.length === 0 ? {} : { parameters }),
      ...(body === undefined ? {} : { requestBody: { required: true, content: contentOf([body], components) } }),
      responses: responsesOf(route, components),
    };
    if (method === "GET" && surface.headOfEveryGet) operations["head"] = headOf(operations["get"] as Readonly<Record<string, Json>>);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: surface.title,
      version: pkg.version,
      description: surface.description,
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
    },
    tags: tags.map((name) => ({ name })),
    paths,
    components: {
      schemas: components.schemas(),
      securitySchemes: Object.fromEntries(
        [...schemes].map((scope) => [SCHEMES[scope].name, { type: "http", scheme: "bearer", description: SCHEMES[scope].description }]),
      ),
    },
  };
}

/** What every route of both surfaces shares, which each surface's description says. */
export const CONVENTIONS =
  "Bodies are strict JSON in UTF-8 (duplicate keys, lone surrogates and unsafe numbers are 400s), at most 65,536 bytes (413 above). Request bodies are closed: a member not named is a 400. Every error answer is a body of the error table (docs/errors.md); a route that does not exist is 404 with a key, 401 without one.";
