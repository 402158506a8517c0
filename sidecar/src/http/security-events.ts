/** What both surfaces record of a request as a security event: the event itself, and the refused Bearer key. */
import type { FastifyRequest } from "fastify";
import type { AuditLog, SecurityEventInput, SecurityEventType } from "../audit/types.js";

/** A security event about `request`: method, route path (no query string) and client address; never a header or body. */
export function securityEvent(request: FastifyRequest, type: SecurityEventType, detail: string, executionId?: string): SecurityEventInput {
  return {
    type,
    method: request.method,
    // Bounded: the path is caller-chosen, and an audit record must not grow with it.
    path: (request.url.split("?", 1)[0] ?? "").slice(0, 256),
    ip: request.ip,
    detail,
    ...(executionId === undefined ? {} : { executionId }),
  };
}

/** What both surfaces do with a refused Bearer key (`ServerOptions.onUnauthorized`): a security event, never the key. */
export function recordAuthenticationFailure(audit: AuditLog): (request: FastifyRequest) => void {
  return (request) =>
    audit.recordSecurityEvent(
      securityEvent(
        request,
        "authentication_failed",
        request.headers.authorization === undefined ? "no Authorization header" : "Bearer key does not match",
      ),
    );
}
