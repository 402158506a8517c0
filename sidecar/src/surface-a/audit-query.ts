/**
 * The query strings of `GET /audit/decisions`, `GET /audit/security` and the `/audit/log` routes, as fastify hands
 * them over (`request.query`: each value a string, or an array when the parameter is repeated), checked by hand into
 * `DecisionQuery` / `SecurityQuery` and the log routes' values. The spec leaves defaults and maximums open (spec 8);
 * writ fixes them in @writ/wire's query schemas (the parameters, bounds, patterns and defaults read here) and
 * docs/audit.md. Any bad value, repeated or unknown parameter is a 400 whose message follows fastify's validation
 * wording (`querystring/<name> must …`).
 *
 * INVARIANT (bounded before the store): every string parameter is checked against its schema's length bound before
 * anything else reads it, so no value longer than its bound reaches a store (an LMDB key is at most 1,978 bytes).
 */
import { isTimestamp } from "@writ/runtime";
import { DecisionQuery as DecisionQuerySchema, SecurityEventQuery, type TSchema } from "@writ/wire";
import { integerBounds, parameterNames, textCheck, type IntegerBounds } from "../http/query-schema.js";
import type { DecisionQuery, DecisionStatus, SecurityQuery } from "../audit/types.js";

const LIMIT = integerBounds(DecisionQuerySchema, "limit");
/** Deep pages walk the time index from the newest entry: the cap bounds that walk. */
const OFFSET = integerBounds(DecisionQuerySchema, "offset");

export const AUDIT_QUERY_LIMITS = { defaultLimit: LIMIT.fallback, maxLimit: LIMIT.max, maxOffset: OFFSET.max } as const;

/** A size of the audit record log: a count of its entries (@writ/wire's `size` of the log routes' schemas). */
const LOG_SIZE = { min: 0, max: Number.MAX_SAFE_INTEGER } as const;

/** Where a parameter is: the query string, or the path (`GET /audit/checkpoints/:size`). */
export type ParameterLocation = "querystring" | "params";

/** A bad query string or path parameter; `statusCode` lets fastify's error handler answer 400 with `message`. */
export class QueryError extends Error {
  readonly statusCode = 400;

  constructor(
    message: string,
    readonly location: ParameterLocation = "querystring",
  ) {
    super(message);
    this.name = "QueryError";
  }
}

export type RawQuery = Readonly<Record<string, unknown>>;

export function parseDecisionQuery(raw: RawQuery): DecisionQuery {
  knownOnly(raw, DecisionQuerySchema);
  const policyId = textParameter(raw, DecisionQuerySchema, "policyId");
  // The schema's `enum` is DecisionStatus's values.
  const decision = textParameter(raw, DecisionQuerySchema, "decision") as DecisionStatus | undefined;
  return {
    limit: integer(raw, "limit", LIMIT),
    offset: integer(raw, "offset", OFFSET),
    ...(policyId === undefined ? {} : { policyId }),
    ...(decision === undefined ? {} : { decision }),
    ...timeBounds(raw, DecisionQuerySchema),
  };
}

export function parseSecurityQuery(raw: RawQuery): SecurityQuery {
  knownOnly(raw, SecurityEventQuery);
  return { limit: integer(raw, "limit", integerBounds(SecurityEventQuery, "limit")), ...timeBounds(raw, SecurityEventQuery) };
}

/** Refuses a parameter `query` does not name. */
export function knownOnly(raw: RawQuery, query: TSchema): void {
  const known = parameterNames(query);
  for (const name of Object.keys(raw)) {
    if (!known.includes(name)) throw new QueryError(`querystring/${name} is not a known parameter; known: ${known.join(", ")}`);
  }
}

/** The string parameter `name` of `query`: its one value, checked against its schema (bounds, pattern, values). */
export function textParameter(raw: RawQuery, query: TSchema, name: string): string | undefined {
  const value = single(raw, name);
  if (value === undefined) return undefined;
  const problem = textCheck(query, name)(value);
  if (problem !== null) throw new QueryError(`querystring/${name} ${problem}`);
  return value;
}

/**
 * A size of the audit record log (`from`, `to`, `size`, `limit` of the `/audit/log` routes): a non-negative integer,
 * `fallback` when absent, required when there is no fallback.
 */
export function logSize(raw: RawQuery, name: string, fallback?: number): number {
  if (fallback === undefined && single(raw, name) === undefined) throw new QueryError(`querystring/${name} is required`);
  return integer(raw, name, { ...LOG_SIZE, fallback: fallback ?? 0 });
}

/** A size of the audit record log in the path (`GET /audit/checkpoints/:size`). */
export function logSizeParam(params: RawQuery, name: string): number {
  return integer(params, name, { ...LOG_SIZE, fallback: 0 }, "params");
}

/**
 * The log a `/audit/log` route reads, whose query is `query`: its `logId` (default `own`, this sidecar's). A parameter
 * `query` does not name is refused; its sizes are read by `logSize`.
 */
export function logQuery(raw: RawQuery, query: TSchema, own: string): string {
  knownOnly(raw, query);
  return textParameter(raw, query, "logId") ?? own;
}

/** The parameter's one value; a repeated parameter (an array) is refused rather than silently narrowed. */
function single(raw: RawQuery, name: string): string | undefined {
  const value = raw[name];
  if (value === undefined || typeof value === "string") return value;
  throw new QueryError(`querystring/${name} must be given once`);
}

function integer(raw: RawQuery, name: string, { min, max, fallback }: IntegerBounds, location: ParameterLocation = "querystring"): number {
  const digits = single(raw, name);
  if (digits === undefined) return fallback;
  // Digits only: no sign, exponent, fraction or blanks, which Number() would accept. 16 digits cover every maximum.
  const value = /^\d{1,16}$/.test(digits) ? Number(digits) : Number.NaN;
  if (!(value >= min && value <= max)) throw new QueryError(`${location}/${name} must be an integer between ${min} and ${max}`, location);
  return value;
}

function timeBounds(raw: RawQuery, query: TSchema): { from?: number; to?: number } {
  const from = instant(raw, query, "from");
  const to = instant(raw, query, "to");
  if (from !== undefined && to !== undefined && from > to) throw new QueryError("querystring/from must not be later than querystring/to");
  return { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
}

/**
 * An RFC 3339 date-time with an offset (the runtime's `isTimestamp`, as for signals), in Unix milliseconds. The
 * schema's `format` is an annotation to ajv (http/validation.ts): it checks the length, `isTimestamp` the rest.
 */
function instant(raw: RawQuery, query: TSchema, name: string): number | undefined {
  const value = textParameter(raw, query, name);
  if (value === undefined) return undefined;
  if (!isTimestamp(value)) throw new QueryError(`querystring/${name} must match format "date-time" (RFC 3339, e.g. 2025-01-31T00:00:00Z)`);
  return Date.parse(value);
}
