/**
 * Who may call each route (http/access.ts) and which scopes each key opens. Each route's scope is declared with it
 * (http/route.ts); each surface makes its table of its declarations (surface-a/routes.ts, surface-b/routes.ts), which
 * `createServer` reads and which refuses to register a route missing from it.
 */
import type { Access, Scope } from "./access.js";
import type { RouteDeclaration } from "./route.js";

export type { Access, Scope };

/** `METHOD /pattern` (fastify's route pattern) to who may call it; a HEAD route has the scope of its GET. */
export type RouteScopes = Readonly<Record<string, Access>>;

/** The table of `routes`. */
export function scopesOf(routes: readonly RouteDeclaration[]): RouteScopes {
  return Object.fromEntries(routes.map((route) => [`${route.method} ${route.url}`, route.scope]));
}

/** Who may call `method url`; undefined: the table does not have it. */
export function accessOf(scopes: RouteScopes, method: string, url: string): Access | undefined {
  return scopes[`${method === "HEAD" ? "GET" : method} ${url}`];
}

/**
 * The Bearer keys (docs/sidecar.md, "Scoped keys"), each from its variable or the file its `_FILE` names; secrets:
 * never logged. At least one opens each scope, except in development mode before the single key is generated.
 */
export interface ApiKeys {
  /** `SERVICE_API_KEY`: opens both scopes (the single key, or the admin key beside scoped ones). */
  readonly all: string | null;
  /** `SERVICE_DECIDE_KEY`: opens the deciding routes only. */
  readonly deciding: string | null;
  /** `SERVICE_READ_KEY`: opens the reading routes only. */
  readonly reading: string | null;
}

/** A configured key and the scopes it opens. */
export interface KeyGrant {
  readonly key: string;
  readonly scopes: readonly Scope[];
}

/** `SERVICE_API_KEY` opens both scopes; each scoped key opens its own. */
export function grantsOf(keys: ApiKeys): KeyGrant[] {
  const grants: KeyGrant[] = [];
  if (keys.all !== null) grants.push({ key: keys.all, scopes: ["deciding", "reading"] });
  if (keys.deciding !== null) grants.push({ key: keys.deciding, scopes: ["deciding"] });
  if (keys.reading !== null) grants.push({ key: keys.reading, scopes: ["reading"] });
  return grants;
}
