/**
 * What the OpenAPI documents (docs/openapi/, served under `GET /openapi/`) say of each route, beside what the route
 * itself is: its request schemas and its answers, by status. The schemas are @writ/wire's, the ones the sidecar
 * validates with; who may call a route is http/scopes.ts's; the error answers are the runtime's error table's, listed
 * by code (each code's status and message come from the table).
 */
import type { BodyErrorCode } from "@writ/runtime";
import type { TSchema } from "@writ/wire";

/** An answer other than an error-table body. */
export interface Answer {
  readonly description: string;
  /** The JSON body; absent with `text`. */
  readonly schema?: TSchema;
  /** A body that is not JSON: its media type (`text/plain`, `application/x-ndjson`). */
  readonly text?: string;
}

export interface Operation {
  readonly summary: string;
  readonly description?: string;
  /** The group the operation is listed under. */
  readonly tag: string;
  readonly params?: TSchema;
  readonly query?: TSchema;
  /** The JSON request body; its missing members are `MISSING_PROPERTY`, its other failures `BAD_REQUEST`. */
  readonly body?: TSchema;
  readonly answers: Readonly<Record<number, Answer>>;
  /**
   * The error-table codes the route answers besides those of every route: `UNAUTHORIZED` (a route with a scope),
   * `BAD_REQUEST` (any input: a body, a query, a path parameter), `MISSING_PROPERTY` and `BODY_TOO_LARGE` (a body),
   * `INTERNAL_ERROR` (any).
   */
  readonly errors?: readonly BodyErrorCode[];
}

/** `METHOD /pattern` (fastify's pattern, as in http/scopes.ts) to its operation. */
export type Api = Readonly<Record<string, Operation>>;
