import { RecordParams } from "@writ/wire";

/**
 * Options of Surface B's GET routes: fastify adds a HEAD twin to every GET route by default, and Surface B has
 * exactly the spec's 13 routes (spec 4.2), so HEAD is 404 like any other route that does not exist.
 */
export const GET_ONLY = { exposeHeadRoute: false } as const;

/**
 * Options of the GET routes of one record (`/:id`): the id is checked against @writ/wire's `RecordParams` before the
 * handler runs, so an id no record can be stored under is 400 and never reaches the record store.
 */
export const RECORD_ROUTE = { ...GET_ONLY, schema: { params: RecordParams } } as const;
