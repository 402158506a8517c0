/**
 * The per-request part of the logs and traces of a surface (docs/sidecar.md, "Observability"), wired into its fastify
 * server (http/server.ts):
 * - every log line of a request carries its `requestId` and, when known, its `traceId` (the caller's valid
 *   `traceparent`'s, or with tracing on the request span's, with its `spanId`);
 * - with tracing on, the request's SERVER span starts with the request and ends once it is answered (tracing.ts);
 * - with the access log on, one line per request answered.
 * With tracing and the access log off, a request costs a look at its `traceparent` header and nothing else.
 */
import type { IncomingMessage } from "node:http";
import type { Span } from "@opentelemetry/api";
import { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from "fastify";
import { REQUEST_ID_LOG_LABEL } from "./request-id.js";
import type { Tracing } from "./tracing.js";

/**
 * A W3C Trace Context `traceparent`: version, trace id, parent id, flags; version 00 has nothing after the flags, a
 * later version may. Parsed here rather than with the OpenTelemetry SDK, which is loaded only with tracing on.
 */
const TRACEPARENT = /^(?!ff)([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}(-.*)?$/;
const ZEROS = /^0+$/;

/** The trace id of the caller's `traceparent` when it is valid, else undefined. */
export function incomingTraceId(raw: IncomingMessage): string | undefined {
  const header = raw.headers.traceparent;
  const parts = typeof header === "string" ? TRACEPARENT.exec(header.trim()) : null;
  if (parts === null || (parts[1] === "00" && parts[4] !== undefined)) return undefined;
  return ZEROS.test(parts[2]!) || ZEROS.test(parts[3]!) ? undefined : parts[2];
}

type ChildLoggerFactory = NonNullable<FastifyServerOptions["childLoggerFactory"]>;

/** Each request's span, from its first log binding to its answer. */
const spans = new WeakMap<IncomingMessage, Span>();

/** Makes each request's logger (fastify calls it once per request, before any hook): binds the trace id, starts the span. */
export function requestLoggerFactory(tracing: Tracing | null): ChildLoggerFactory {
  if (tracing === null) {
    return (logger, bindings, options, raw) => {
      const traceId = incomingTraceId(raw);
      return logger.child(traceId === undefined ? bindings : { ...bindings, traceId }, options);
    };
  }
  return (logger, bindings, options, raw) => {
    const span = tracing.startRequest(raw.headers);
    spans.set(raw, span);
    const { traceId, spanId } = span.spanContext();
    return logger.child({ ...bindings, traceId, spanId }, options);
  };
}

/** Ends each request's span once it is answered, or when the client went away first. */
export function traceRequests(app: FastifyInstance, tracing: Tracing, surface: "a" | "b"): void {
  const end = (request: FastifyRequest, status: number | null): void => {
    const span = spans.get(request.raw);
    if (span === undefined) return;
    spans.delete(request.raw);
    const path = request.url.split("?", 1)[0] ?? "";
    tracing.endRequest(span, {
      surface,
      method: request.method,
      route: request.routeOptions.url,
      path,
      status,
      requestId: request.id,
      decision: request.decision,
    });
  };
  app.addHook("onResponse", async (request, reply) => end(request, reply.statusCode));
  app.addHook("onRequestAbort", async (request) => end(request, null));
}

/** One `request` line per request answered, at info: method, route pattern, status and duration. */
class AccessLog extends LogController {
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = {
      method: request.method,
      route: request.routeOptions.url ?? null,
      status: reply.statusCode,
      durationMs: reply.elapsedTime,
    };
    request.log.info(error ? { ...line, err: error } : line, "request");
  }
}

/** Fastify's own per-request lines are off (errors and failures are logged by the error handler); the access log is ours. */
export function logController(accessLog: boolean): LogController {
  const options = { disableRequestLogging: true, requestIdLogLabel: REQUEST_ID_LOG_LABEL };
  return accessLog ? new AccessLog(options) : new LogController(options);
}
