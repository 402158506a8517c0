/**
 * What both surfaces share: a fastify instance that parses only strict JSON, refuses bodies over 64 KB, validates
 * without rewriting, authenticates with a Bearer key of the route's scope, answers every error with the error
 * table's body, and logs, identifies and traces each request (observability/).
 * `createServer` only builds (tests use `inject()`); the caller listens.
 */
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { errorBody, parseStrictJson } from "@writ/runtime";
import { AuditTrailDisagrees } from "../audit/trail-agreement.js";
import type { Logger } from "../observability/logger.js";
import { decisionFields } from "../observability/request-decision.js";
import { REQUEST_ID_HEADER, requestIdOf } from "../observability/request-id.js";
import { logController, requestLoggerFactory, traceRequests } from "../observability/request-telemetry.js";
import type { Tracing } from "../observability/tracing.js";
import { bearerCheck } from "./auth.js";
import { answerBelowRoutes, answerClientError } from "./client-errors.js";
import { CHECK_INTERVAL_MS, capSockets, type ConnectionLimits } from "./connections.js";
import { SidecarHttpError, fromRuntimeError, invalidRequest } from "./errors.js";
import { accessOf, grantsOf, type ApiKeys, type RouteScopes } from "./scopes.js";
import { validatorCompiler } from "./validation.js";

/** Spec 8: request bodies up to 65,536 bytes; 413 above, chunked bodies included (fastify counts what it reads). */
export const BODY_LIMIT = 65_536;

export interface ServerOptions {
  /** The Bearer keys; each opens its scopes (http/scopes.ts). */
  readonly keys: ApiKeys;
  /** Every route this server serves and who may call it: registering a route missing from it throws. */
  readonly scopes: RouteScopes;
  readonly surface: "a" | "b";
  /** The surface's logger: a child of the process's root logger. */
  readonly log: Logger;
  /** One log line per request answered (SERVICE_ACCESS_LOG). */
  readonly accessLog: boolean;
  /** null: tracing is off, and no span is made. */
  readonly tracing: Tracing | null;
  /** Called on each refused key: the audit's security event. Never given the key. */
  readonly onUnauthorized?: (request: FastifyRequest) => void;
  /** Timeouts and the socket cap (connections.ts). */
  readonly connections: ConnectionLimits;
}

/**
 * Longest path parameter the router takes, in UTF-16 units once percent-decoded: far above every parameter's own bound
 * (an executionId's 1,024 characters are at most 2,048 units), so that a route's schema refuses an over-long one by
 * name; only a longer one is refused here, before any route (`urlProblem`).
 */
const MAX_PARAM_LENGTH = 12_288;
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)"?/i;

export function createServer(options: ServerOptions): FastifyInstance {
  const bearer = bearerCheck(grantsOf(options.keys));
  /** Who may call the request's route; undefined: no route matched (404, or a URL the router cannot take). */
  const access = (request: FastifyRequest) =>
    request.routeOptions.url === undefined ? undefined : accessOf(options.scopes, request.method, request.routeOptions.url);
  const authorized = (request: FastifyRequest): boolean => {
    const scope = access(request);
    if (scope === "public") return true;
    const opened = bearer(request.headers.authorization);
    // INVARIANT (one credential per request): two Authorization headers (a proxy appending its own) are refused,
    // never narrowed to the first one, which Node's `request.headers` would keep.
    if (authorizationCount(request.raw.rawHeaders) !== 1) return false;
    // No route: a key of either scope learns it does not exist (404); a caller without one learns nothing (401).
    return scope === undefined ? opened.size > 0 : opened.has(scope);
  };
  // A child of the root logger, which redacts the Authorization header (INVARIANT (no secrets in logs)).
  const log: FastifyBaseLogger = options.log;
  const app = Fastify({
    loggerInstance: log,
    // Request lines are not logged one by one (thousands a second) unless the access log is on; errors and failures are, below.
    logController: logController(options.accessLog),
    genReqId: requestIdOf,
    childLoggerFactory: requestLoggerFactory(options.tracing),
    bodyLimit: BODY_LIMIT,
    return503OnClosing: true,
    http: { connectionsCheckingInterval: CHECK_INTERVAL_MS, headersTimeout: options.connections.headersTimeoutMs },
    requestTimeout: options.connections.requestTimeoutMs,
    keepAliveTimeout: options.connections.keepAliveTimeoutMs,
    connectionTimeout: options.connections.idleTimeoutMs,
    clientErrorHandler: answerClientError,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // A URL the router cannot take (bad percent-encoding, an overlong parameter) is refused like any other bad
    // request: authentication first, then an error-table body.
    frameworkErrors: (error, request, reply) => {
      void reply.header(REQUEST_ID_HEADER, request.id);
      const answer = authorized(request) ? invalidRequest([{ path: "url", message: urlProblem(error) }]) : unauthorized(request);
      void (reply as FastifyReply).code(answer.statusCode).send(answer.body);
    },
  });
  const unauthorized = (request: FastifyRequest): SidecarHttpError => {
    options.onUnauthorized?.(request);
    // Never the key: that it was missing or did not open the route is all the line says.
    request.log.warn(
      {
        method: request.method,
        route: request.routeOptions.url ?? null,
        credential: request.headers.authorization === undefined ? "missing" : "refused",
      },
      "authentication failed",
    );
    return SidecarHttpError.of("UNAUTHORIZED");
  };
  app.decorateRequest("decision", null);
  if (options.tracing !== null) traceRequests(app, options.tracing, options.surface);
  // Route schemas (@writ/wire's, http/validation.ts) compile with the sidecar's strict ajv, never fastify's default
  // (which coerces types, removes members and fills defaults).
  app.setValidatorCompiler(validatorCompiler);

  // Only strict JSON in UTF-8: invalid bytes, another charset, duplicate keys, lone surrogates and unsafe numbers are
  // 400s, never silently replaced or normalized (a signature must not cover a rewrite of what was sent).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "buffer", bodyLimit: BODY_LIMIT }, (request, body, done) => {
    const charset = CHARSET.exec(request.headers["content-type"] ?? "")?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
      return done(
        invalidRequest([{ path: "headers/content-type", message: `charset \`${charset}\` is not supported: send UTF-8` }]),
        undefined,
      );
    }
    let text: string;
    try {
      text = UTF8.decode(body as Buffer);
    } catch {
      return done(invalidRequest([{ path: "body", message: "body is not valid UTF-8" }]), undefined);
    }
    try {
      done(null, parseStrictJson(text));
    } catch (e) {
      done(fromRuntimeError(e) ?? (e as Error), undefined);
    }
  });

  // INVARIANT (every route has a scope): a route missing from the table is a start-up error, never served to any key.
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) {
      if (accessOf(options.scopes, method, route.url) === undefined)
        throw new Error(
          `${method} ${route.url} has no scope in its surface's table: declare it (http/route.ts) in its surface's routes.ts`,
        );
    }
  });
  app.addHook("onRequest", async (request, reply) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    if (!authorized(request)) throw unauthorized(request);
  });

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const answer = toHttpError(error);
    if (request.routeOptions.config.execution === true && answer.statusCode !== 401) {
      request.log.warn(
        { error: answer.body.error, code: answer.code, status: answer.statusCode, ...decisionFields(request.decision) },
        "execute:failure",
      );
    }
    if (answer.statusCode >= 500) request.log.error({ err: error, ...decisionFields(request.decision) }, "request failed");
    for (const [name, value] of Object.entries(answer.headers)) void reply.header(name, value);
    return reply.code(answer.statusCode).send(answer.body);
  });
  // Authentication runs first (onRequest): an unauthenticated caller learns nothing about which routes exist.
  app.setNotFoundHandler(async () => {
    throw SidecarHttpError.of("NOT_FOUND");
  });
  answerBelowRoutes(app.server);
  capSockets(app.server, options.connections.maxSockets);
  return app;
}

/** What is wrong with a URL the router cannot take, without repeating it (it may be kilobytes long). */
function urlProblem(error: FastifyError): string {
  if (error.code === "FST_ERR_MAX_PARAM_LENGTH")
    return `a path parameter is longer than ${MAX_PARAM_LENGTH.toLocaleString("en-US")} characters`;
  if (error.code === "FST_ERR_BAD_URL") return "a path parameter is not valid percent-encoded UTF-8";
  return "the URL cannot be read";
}

/** How many Authorization headers the request carried (`rawHeaders` alternates names and values). */
function authorizationCount(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2)
    if (rawHeaders[i]!.length === 13 && rawHeaders[i]!.toLowerCase() === "authorization") count += 1;
  return count;
}

interface HttpAnswer {
  readonly statusCode: number;
  readonly body: { readonly error: string };
  readonly code?: string | undefined;
  readonly headers: Readonly<Record<string, string>>;
}

/** Every error to an exact body: the runtime's refusals by code, fastify's own by their codes, anything else 500. */
function toHttpError(error: FastifyError): HttpAnswer {
  const known = error instanceof SidecarHttpError ? error : fromRuntimeError(error);
  if (known) return { statusCode: known.statusCode, body: known.body, code: known.code, headers: known.headers };
  // Logged with its executionId and reason (every 5xx is); the caller gets the code.
  if (error instanceof AuditTrailDisagrees) return { statusCode: 500, body: errorBody(error.code), code: error.code, headers: {} };
  if (error.validation) {
    const first = error.validation[0];
    if (first?.keyword === "required") {
      // Fastify's own wording, which is the spec's: `body must have required property '<name>'`.
      return { statusCode: 400, body: { error: error.message }, code: "MISSING_PROPERTY", headers: {} };
    }
    const answer = invalidRequest(
      error.validation.map((v) => ({ path: `${error.validationContext ?? "body"}${v.instancePath}`, message: v.message ?? "is invalid" })),
    );
    return { statusCode: 400, body: answer.body, code: "BAD_REQUEST", headers: {} };
  }
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return { statusCode: 413, body: errorBody("BODY_TOO_LARGE"), code: "BODY_TOO_LARGE", headers: {} };
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
    case "FST_ERR_CTP_EMPTY_TYPE":
    case "FST_ERR_CTP_INVALID_TYPE": {
      const answer = invalidRequest([{ path: "body", message: error.message.replace(/\.$/, "") }]);
      return { statusCode: 400, body: answer.body, code: "BAD_REQUEST", headers: {} };
    }
  }
  if (error.statusCode === 400) {
    const answer = invalidRequest([{ path: "request", message: error.message }]);
    return { statusCode: 400, body: answer.body, code: "BAD_REQUEST", headers: {} };
  }
  return { statusCode: 500, body: errorBody("INTERNAL_ERROR"), code: "INTERNAL_ERROR", headers: {} };
}
