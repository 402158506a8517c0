/**
 * What the hand-written query parsers (audit/query.ts, surface-b/pagination.ts) read from @writ/wire's query schemas,
 * which the OpenAPI documents show: the parameter names and each integer's bounds and default. The parsers keep their
 * own wording of a refusal (`querystring/<name> must …`), which a JSON Schema validator would word otherwise.
 */
import type { TSchema } from "@writ/wire";

export interface IntegerBounds {
  readonly min: number;
  readonly max: number;
  readonly fallback: number;
}

interface QuerySchema {
  readonly properties: Readonly<Record<string, { readonly minimum?: unknown; readonly maximum?: unknown; readonly default?: unknown; readonly enum?: unknown }>>;
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
  if (typeof minimum !== "number" || typeof maximum !== "number" || typeof fallback !== "number") throw new Error(`query parameter \`${name}\` has no integer bounds and default`);
  return { min: minimum, max: maximum, fallback };
}

/** The values the string parameter `name` of `query` takes. */
export function parameterValues(query: TSchema, name: string): readonly string[] {
  const values = membersOf(query)[name]?.enum;
  if (!Array.isArray(values)) throw new Error(`query parameter \`${name}\` has no list of values`);
  return values as string[];
}
