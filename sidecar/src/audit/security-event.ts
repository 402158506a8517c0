/**
 * The stored form of a security event. Events are written for unauthenticated traffic too (a failed Bearer check),
 * so every field is copied by name and clipped: nothing the caller attached beyond the declared fields (a header, a
 * body) reaches the database, and a flood of requests with huge paths cannot grow a record without bound.
 */
import type { SecurityEventInput, SecurityEventRow } from "./types.js";

/** Longest stored value per field, in UTF-16 code units. */
export const SECURITY_FIELD_LIMITS = { method: 16, path: 1024, ip: 64, detail: 512, executionId: 256 } as const;

/** `count`: the number of events an aggregated row stands for (SecurityEventLimiter); absent for a single event. */
export function securityEventRow(event: SecurityEventInput, id: string, at: string, count?: number): SecurityEventRow {
  const row = {
    id,
    at,
    type: event.type,
    method: clip(event.method, SECURITY_FIELD_LIMITS.method),
    // The query string may carry a token (`?api_key=`): it is cut off even when the caller forgot to.
    path: clip(event.path.split("?", 1)[0] ?? "", SECURITY_FIELD_LIMITS.path),
    ip: clip(event.ip, SECURITY_FIELD_LIMITS.ip),
    detail: clip(event.detail, SECURITY_FIELD_LIMITS.detail),
  };
  return {
    ...row,
    ...(event.executionId === undefined ? {} : { executionId: clip(event.executionId, SECURITY_FIELD_LIMITS.executionId) }),
    ...(count === undefined ? {} : { count }),
  };
}

function clip(text: string, max: number): string {
  // Drop a high surrogate left alone by the cut: the value must stay well-formed text.
  return text.length <= max ? text : text.slice(0, max).replace(/[\uD800-\uDBFF]$/u, "");
}
