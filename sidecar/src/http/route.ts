/**
 * A route of either surface, declared once, beside its handler: everything else about it is made from the declaration.
 * The server registers it (http/register-routes.ts), the scope table is made of the surface's declarations
 * (http/scopes.ts), and so is the surface's OpenAPI document (openapi/document.ts). docs/adding-a-route.md says how to
 * add one.
 */
import type { RouteGenericInterface, RouteHandler, RouteHandlerMethod, RouteShorthandOptions } from "fastify";
import type { BodyErrorCode } from "@writ/runtime";
import type { TSchema } from "@writ/wire";
import type { Access } from "./access.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The route's `execution` (`RouteDeclaration`): the error handler logs its failures as `execute:failure`. */
    execution?: boolean;
  }
}

/** An answer other than an error-table body. */
export interface Answer {
  readonly description: string;
  /** The JSON body; absent with `text`. */
  readonly schema?: TSchema;
  /** A body that is not JSON: its media type (`text/plain`, `application/x-ndjson`). */
  readonly text?: string;
}

/** A request's inputs as @writ/wire's schemas, under fastify's names for them. */
export interface RouteInputs {
  readonly params?: TSchema;
  readonly querystring?: TSchema;
  /** The JSON body; its missing members are `MISSING_PROPERTY`, its other failures `BAD_REQUEST`. */
  readonly body?: TSchema;
}

export interface RouteDeclaration {
  readonly method: "GET" | "POST";
  /** fastify's pattern: `/audit/decisions/:executionId`. */
  readonly url: string;
  /** Who may call it (docs/sidecar.md, "Scoped keys"); its HEAD twin has the same. */
  readonly scope: Access;
  readonly summary: string;
  readonly description?: string;
  /** The group its operation is listed under. */
  readonly tag: string;
  /** The inputs fastify validates before the handler runs, with the sidecar's strict ajv (http/validation.ts). */
  readonly schema?: RouteInputs;
  /**
   * The inputs the handler reads and checks itself, which fastify leaves alone: a query, whose parameters may be
   * repeated and are refused in the parser's own words (http/query-schema.ts); a body checked at a later point of the
   * request (`bodyCheck`). The document shows them as it shows `schema`.
   */
  readonly checkedByHandler?: RouteInputs;
  /** Its answers other than error-table bodies, by status. */
  readonly answers: Readonly<Record<number, Answer>>;
  /**
   * The error-table codes it answers besides those of every route: `UNAUTHORIZED` (a route with a scope),
   * `BAD_REQUEST` (any input: a body, a query, a path parameter), `MISSING_PROPERTY` and `BODY_TOO_LARGE` (a body),
   * `INTERNAL_ERROR` (any). Each code's status and message come from the runtime's error table.
   */
  readonly errors?: readonly BodyErrorCode[];
  /** An execution (spec 6): its failures are logged as `execute:failure`, with the decision's fields (http/server.ts). */
  readonly execution?: boolean;
  /** fastify's route options that the declaration does not make: the rate limit's `config`, a `preValidation` hook. */
  readonly options?: Pick<RouteShorthandOptions, "config" | "preValidation">;
}

/** A declared route and its handler, made when the surface is built from what its handlers need (`D`). */
export interface Route<D> extends RouteDeclaration {
  readonly makeHandler: (dependencies: D) => RouteHandlerMethod;
}

/** A surface as its OpenAPI document describes it: its routes in the document's order, and what it says of the whole. */
export interface SurfaceDeclaration {
  readonly title: string;
  readonly description: string;
  readonly routes: readonly RouteDeclaration[];
  /** Every GET route also answers HEAD (fastify's default), and the document lists each twin; otherwise HEAD is 404. */
  readonly headOfEveryGet: boolean;
}

/** A surface's declaration with its routes' handlers. */
export interface Surface<D> extends SurfaceDeclaration {
  readonly routes: readonly Route<D>[];
}

/** A route; `G` types its request (`{ Body: OverrideRequest }`), as fastify's own route methods take it. */
export function defineRoute<D, G extends RouteGenericInterface = RouteGenericInterface>(
  declaration: RouteDeclaration,
  makeHandler: (dependencies: D) => RouteHandler<G>,
): Route<D> {
  // A surface's array holds routes of different request types; fastify hands each handler the request of its route.
  return { ...declaration, makeHandler: makeHandler as (dependencies: D) => RouteHandlerMethod };
}
