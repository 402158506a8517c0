import type { DecisionQuery as WireDecisionQuery, SecurityEventQuery as WireSecurityEventQuery } from "@writ/wire";

/** The time bounds of an audit query: a Date, or an RFC 3339 date-time with an offset (both inclusive). */
interface TimeBounds {
  readonly from?: Date | string;
  readonly to?: Date | string;
}

/** `GET /audit/decisions` query: the wire's parameters (docs/audit.md), with Dates accepted for the bounds. */
export interface DecisionQuery extends Omit<WireDecisionQuery, "from" | "to">, TimeBounds {}

/** `GET /audit/security` query: newest first, no offset (page backwards with `to`). */
export interface SecurityEventQuery extends Omit<WireSecurityEventQuery, "from" | "to">, TimeBounds {}

/** A query string of the members that are set: numbers as decimals, Dates as ISO 8601 instants. */
export function queryOf(query: object): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query) as [string, string | number | Date | undefined][]) {
    if (value !== undefined) params.set(name, value instanceof Date ? value.toISOString() : String(value));
  }
  return params;
}
