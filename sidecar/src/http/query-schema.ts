/**
 * What the hand-written query parsers (surface-a/audit-query.ts, surface-b/pagination.ts) read from @writ/wire's query schemas,
 * which the OpenAPI documents show: the parameter names, each integer's bounds and default, and each string's schema
 * (its length bounds, pattern and values). A URL's values are strings and a parameter may be repeated, so the parsers
 * read them themselves and keep their own wording of a refusal (`querystring/<name> must …`); a string's value is
 * checked against its member schema by the sidecar's ajv (http/validation.ts), so no bound is written twice.
 */
import type { TSchema } from "@writ/wire";
import { valueCheck } from "./validation.js";

export interface IntegerBounds {
  readonly min: number;
  readonly max: number;
  readonly fallback: number;
}

interface QuerySchema {
  readonly properties: Readonly<
    Record<
      string,
      TSchema & { readonly type?: unknown; readonly minimum?: unknown; readonly maximum?: unknown; readonly default?: unknown }
    >
  >;
}

function membersOf(query: TSchema): QuerySchema["properties"] {
  return (query as unknown as QuerySchema).properties;
}

/** The parameters `query` names, in its order. */
export function parameterNames(query: TSchema): readonly string[] {
  return Object.keys(membersOf(query));
}

/** The bounds and default of the integer parameter `name` of `query`. */
export function integerBounds(query: TSchema, name: string): IntegerBounds {
  const { minimum, maximum, default: fallback } = membersOf(query)[name] ?? {};
  if (typeof minimum !== "number" || typeof maximum !== "number" || typeof fallback !== "number")
    throw new Error(`query parameter \`${name}\` has no integer bounds and default`);
  return { min: minimum, max: maximum, fallback };
}

/** A check of a string parameter's value: null when its schema takes it, else what is wrong (`must NOT have more than 128 characters`). */
export type TextCheck = (value: string) => string | null;

const textChecks = new WeakMap<TSchema, Map<string, TextCheck>>();

/** The check of the string parameter `name` of `query`, compiled once. */
export function textCheck(query: TSchema, name: string): TextCheck {
  let checks = textChecks.get(query);
  if (checks === undefined) textChecks.set(query, (checks = new Map()));
  let check = checks.get(name);
  if (check === undefined) {
    const member = membersOf(query)[name];
    if (member?.type !== "string") throw new Error(`query parameter \`${name}\` is not a string`);
    checks.set(name, (check = valueCheck(member)));
  }
  return check;
}
