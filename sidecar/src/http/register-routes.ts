/**
 * A surface's declared routes (http/route.ts) registered on its server (http/server.ts), each handler made from
 * `dependencies`: the schemas fastify validates with, a HEAD twin of each GET route where the surface has them, and
 * the route's own options. A plugin whose `onRoute` hook reads a route's options (the rate limit) is registered first.
 * A route that can answer `REPLAY_STORE_UNAVAILABLE` (one that writes to the store) is answered within the store's
 * bound of the request's arrival (StorageBackend `answerWithinMs`), whatever it waited for (`answeredWithin`): 503
 * `replay store unavailable` then, the answer of any write whose outcome is unknown, while its work goes on and ends
 * at its statements' own timeouts (storage/postgres/connection/abandoned-statements.ts). Not fastify's `handlerTimeout`: its timer
 * is cleared once a request's body has been read, so it never bounds a POST (docs/sidecar.md, "Durability").
 */
import { StoreUnavailableError } from "@writ/runtime";
import type { FastifyInstance, RouteHandlerMethod, RouteShorthandOptions } from "fastify";
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

export function registerRoutes<D>(
  app: FastifyInstance,
  surface: Pick<Surface<D>, "routes" | "headOfEveryGet">,
  dependencies: D,
  storeAnswerWithinMs: number | null,
): void {
  for (const route of surface.routes) {
    const bounded = storeAnswerWithinMs !== null && route.errors?.includes("REPLAY_STORE_UNAVAILABLE") === true;
    app.route({
      method: route.method,
      url: route.url,
      exposeHeadRoute: surface.headOfEveryGet,
      ...validationOf(route.schema),
      ...route.options,
      config: { ...route.options?.config, execution: route.execution === true },
      handler: bounded ? answeredWithin(route.makeHandler(dependencies), storeAnswerWithinMs) : route.makeHandler(dependencies),
    });
  }
}

/**
 * `handler`, or StoreUnavailableError (503) once `ms` have passed since the request arrived; the handler's work goes
 * on, and its outcome, when it comes, is dropped (the request has its answer).
 */
function answeredWithin(handler: RouteHandlerMethod, ms: number): RouteHandlerMethod {
  return async function (this: FastifyInstance, request, reply) {
    const work = Promise.resolve(handler.call(this, request, reply));
    work.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new StoreUnavailableError(`no answer from the store within ${ms} ms of the request`)),
        Math.max(0, ms - reply.elapsedTime),
      );
    });
    try {
      return await Promise.race([work, late]);
    } finally {
      clearTimeout(timer);
    }
  };
}
