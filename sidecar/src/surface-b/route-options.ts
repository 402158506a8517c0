/**
 * Options of Surface B's GET routes: fastify adds a HEAD twin to every GET route by default, and Surface B has
 * exactly the spec's 13 routes (spec 4.2), so HEAD is 404 like any other route that does not exist.
 */
export const GET_ONLY = { exposeHeadRoute: false } as const;
