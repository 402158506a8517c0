/**
 * The query strings of `GET /audit/decisions` and `GET /audit/security`, as fastify hands them over
 * (`request.query`: each value a string, or an array when the parameter is repeated), checked by hand into
 * `DecisionQuery` / `SecurityQuery`. The spec leaves defaults and maximums open (spec 8); writ fixes them in
 * @writ/wire's `DecisionQuery` and `SecurityEventQuery` schemas (the parameters, bounds and defaults read here) and
 * docs/audit.md. Any bad value, repeated or unknown parameter is a 400 whose message follows fastify's validation
 * wording (`querystring/<name> must …`).
 */
import { LOG_ID_PATTERN, isTimestamp } from "@writ/runtime";
import { DecisionQuery as DecisionQuerySchema, POLICY_ID_PATTERN, SecurityEventQuery } from "@writ/wire";
import { integerBounds, parameterNames, parameterValues, type IntegerBounds } from "../http/query-schema.js";
import type { DecisionQuery, DecisionStatus, SecurityQuery } from "./types.js";

const LIMIT = integerBounds(DecisionQuerySchema, "limit");
/** Deep pages walk the time index from the newest entry: the cap bounds that walk. */
const OFFSET = integerBounds(DecisionQuerySchema, "offset");

export const AUDIT_QUERY_LIMITS = { defaultLimit: LIMIT.fallback, maxLimit: LIMIT.max, maxOffset: OFFSET.max } as const;

const POLICY_ID = new RegExp(POLICY_ID_PATTERN);
const DECISION_STATUSES = parameterValues(DecisionQuerySchema, "decision");
const DECISION_PARAMETERS = parameterNames(DecisionQuerySchema);
const SECURITY_PARAMETERS = parameterNames(SecurityEventQuery);

/** A bad query string; `statusCode` lets fastify's error handler answer 400 with `message`. */
export class QueryError extends Error {
  readonly statusCode = 400;

  constructor(message: string) {
    super(message);
    this.name = "QueryError";
  }
}

export type RawQuery = Readonly<Record<string, unknown>>;

export function parseDecisionQuery(raw: RawQuery): DecisionQuery {
  rejectUnknown(raw, DECISION_PARAMETERS);
  const policyId = single(raw, "policyId");
  if (policyId !== undefined && !POLICY_ID.test(policyId)) {
    throw new QueryError(`querystring/policyId must match pattern "${POLICY_ID_PATTERN}"`);
  }
  const decision = single(raw, "decision");
  if (decision !== undefined && !isDecisionStatus(decision)) {
    throw new QueryError(`querystring/decision must be equal to one of the allowed values: ${DECISION_STATUSES.join(", ")}`);
  }
  return {
    limit: integer(raw, "limit", LIMIT),
    offset: integer(raw, "offset", OFFSET),
    ...(policyId === undefined ? {} : { policyId }),
    ...(decision === undefined ? {} : { decision }),
    ...timeBounds(raw),
  };
}

export function parseSecurityQuery(raw: RawQuery): SecurityQuery {
  rejectUnknown(raw, SECURITY_PARAMETERS);
  return { limit: integer(raw, "limit", integerBounds(SecurityEventQuery, "limit")), ...timeBounds(raw) };
}

function rejectUnknown(raw: RawQuery, known: readonly string[]): void {
  for (const name of Object.keys(raw)) {
    if (!known.includes(name)) throw new QueryError(`querystring/${name} is not a known parameter; known: ${known.join(", ")}`);
  }
}

/**
 * A size of the audit record log (`from`, `to`, `size`, `limit` of the `/audit/log` routes): a non-negative integer,
 * `fallback` when absent, required when there is no fallback.
 */
export function logSize(raw: RawQuery, name: string, fallback?: number): number {
  if (fallback === undefined && single(raw, name) === undefined) throw new QueryError(`querystring/${name} is required`);
  return integer(raw, name, { min: 0, max: Number.MAX_SAFE_INTEGER, fallback: fallback ?? 0 });
}

/**
 * The query of a `/audit/log` route: each of `names` (sizes, parsed by `logSize`) and `logId`, the log it reads (default
 * `own`, this sidecar's); anything else is refused.
 */
export function logQuery(raw: RawQuery, names: readonly string[], own: string): string {
  rejectUnknown(raw, [...names, "logId"]);
  const logId = single(raw, "logId");
  if (logId !== undefined && !LOG_ID_PATTERN.test(logId)) throw new QueryError(`querystring/logId must match pattern "${LOG_ID_PATTERN.source}"`);
  return logId ?? own;
}

/** The parameter's one value; a repeated parameter (an array) is refused rather than silently narrowed. */
function single(raw: RawQuery, name: string): string | undefined {
  const value = raw[name];
  if (value === undefined || typeof value === "string") return value;
  throw new QueryError(`querystring/${name} must be given once`);
}

function integer(raw: RawQuery, name: string, { min, max, fallback }: IntegerBounds): number {
  const text = single(raw, name);
  if (text === undefined) return fallback;
  // Digits only: no sign, exponent, fraction or blanks, which Number() would accept. 16 digits cover every maximum.
  const value = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min && value <= max)) throw new QueryError(`querystring/${name} must be an integer between ${min} and ${max}`);
  return value;
}

function timeBounds(raw: RawQuery): { from?: number; to?: number } {
  const from = instant(raw, "from");
  const to = instant(raw, "to");
  if (from !== undefined && to !== undefined && from > to) throw new QueryError("querystring/from must not be later than querystring/to");
  return { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
}

/** An RFC 3339 date-time with an offset (the runtime's `isTimestamp`, as for signals), in Unix milliseconds. */
function instant(raw: RawQuery, name: string): number | undefined {
  const text = single(raw, name);
  if (text === undefined) return undefined;
  if (!isTimestamp(text)) throw new QueryError(`querystring/${name} must match format "date-time" (RFC 3339, e.g. 2025-01-31T00:00:00Z)`);
  return Date.parse(text);
}

function isDecisionStatus(value: string): value is DecisionStatus {
  return DECISION_STATUSES.includes(value);
}
