/**
 * A surface's declared routes (http/route.ts) registered on its server (http/server.ts), each handler made from
 * `dependencies`: the schemas fastify validates with, a HEAD twin of each GET route where the surface has them, and
 * the route's own options. A plugin whose `onRoute` hook reads a route's options (the rate limit) is registered first.
 */
import type { FastifyInstance, RouteShorthandOptions } from "fastify";
import type { RouteInputs, Surface } from "./route.js";
import { bodySchema } from "./validation.js";

/** fastify's options that validate `schema`: a body's failures are answered in `bodyCheck`'s words, as a handler's. */
function validationOf(schema: RouteInputs | undefined): Pick<RouteShorthandOptions, "schema" | "schemaErrorFormatter"> {
  if (schema === undefined) return {};
  const { body, ...others } = schema;
  if (body === undefined) return { schema: others };
  const forBody = bodySchema(body);
  return { ...forBody, schema: { ...forBody.schema, ...others } };
}

export function registerRoutes<D>(app: FastifyInstance, surface: Surface<D>, dependencies: D): void {
  for (const route of surface.routes) {
    app.route({
      method: route.method,
      url: route.url,
      exposeHeadRoute: surface.headOfEveryGet,
      ...validationOf(route.schema),
      ...route.options,
      config: { ...route.options?.config, execution: route.execution === true },
      handler: route.makeHandler(dependencies),
    });
  }
}
