/**
 * The query of `GET /transactions` (spec 4.2 leaves defaults and maximums open; docs/surface-b.md fixes them):
 * `page` from 1 (default 1, at most 1,000,000), `pageSize` from 1 (default 20, at most 100). Anything else, a
 * repeated parameter or an unknown one, is a 400 worded like the audit queries (`querystring/<name> must …`).
 */
import { invalidRequest, type SidecarHttpError } from "../http/errors.js";

export const PAGE_LIMITS = { defaultPageSize: 20, maxPageSize: 100, maxPage: 1_000_000 } as const;

export interface Page {
  readonly page: number;
  readonly pageSize: number;
}

const PARAMETERS = ["page", "pageSize"] as const;

function refused(message: string): SidecarHttpError {
  return invalidRequest([{ path: "querystring", message }]);
}

function integer(raw: Readonly<Record<string, unknown>>, name: string, max: number, fallback: number): number {
  const text = raw[name];
  if (text === undefined) return fallback;
  if (typeof text !== "string") throw refused(`querystring/${name} must be given once`);
  // Digits only: no sign, exponent, fraction or blanks, which Number() would accept.
  const value = /^\d{1,7}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= 1 && value <= max)) throw refused(`querystring/${name} must be an integer between 1 and ${max}`);
  return value;
}

export function parsePage(raw: Readonly<Record<string, unknown>>): Page {
  for (const name of Object.keys(raw)) {
    if (!(PARAMETERS as readonly string[]).includes(name)) throw refused(`querystring/${name} is not a known parameter; known: ${PARAMETERS.join(", ")}`);
  }
  return { page: integer(raw, "page", PAGE_LIMITS.maxPage, 1), pageSize: integer(raw, "pageSize", PAGE_LIMITS.maxPageSize, PAGE_LIMITS.defaultPageSize) };
}
