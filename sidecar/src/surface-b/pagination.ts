/**
 * The query of `GET /transactions` (spec 4.2 leaves defaults and maximums open; @writ/wire's `TransactionQuery` and
 * docs/surface-b.md fix them): `page` from 1 (default 1, at most 1,000,000), `pageSize` from 1 (default 20, at most
 * 100). Anything else, a repeated parameter or an unknown one, is a 400 worded like the audit queries
 * (`querystring/<name> must …`).
 */
import { TransactionQuery } from "@writ/wire";
import { invalidRequest, type SidecarHttpError } from "../http/errors.js";
import { integerBounds, parameterNames, type IntegerBounds } from "../http/query-schema.js";

export interface Page {
  readonly page: number;
  readonly pageSize: number;
}

const PARAMETERS = parameterNames(TransactionQuery);
const PAGE = integerBounds(TransactionQuery, "page");
const PAGE_SIZE = integerBounds(TransactionQuery, "pageSize");

function refused(message: string): SidecarHttpError {
  return invalidRequest([{ path: "querystring", message }]);
}

function integer(raw: Readonly<Record<string, unknown>>, name: string, { min, max, fallback }: IntegerBounds): number {
  const text = raw[name];
  if (text === undefined) return fallback;
  if (typeof text !== "string") throw refused(`querystring/${name} must be given once`);
  // Digits only: no sign, exponent, fraction or blanks, which Number() would accept.
  const value = /^\d{1,7}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min && value <= max)) throw refused(`querystring/${name} must be an integer between ${min} and ${max}`);
  return value;
}

export function parsePage(raw: Readonly<Record<string, unknown>>): Page {
  for (const name of Object.keys(raw)) {
    if (!PARAMETERS.includes(name)) throw refused(`querystring/${name} is not a known parameter; known: ${PARAMETERS.join(", ")}`);
  }
  return { page: integer(raw, "page", PAGE), pageSize: integer(raw, "pageSize", PAGE_SIZE) };
}
