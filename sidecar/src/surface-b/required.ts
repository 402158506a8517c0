import { SidecarHttpError } from "../http/errors.js";

/**
 * A dependency a route cannot do without (signer, trust root, record store): a sidecar started without it answers
 * 503 `Governed execution runtime not configured` (spec 7) on that route, and serves the others.
 */
export function required<T>(value: T | null): T {
  if (value === null) throw SidecarHttpError.of("RUNTIME_NOT_CONFIGURED");
  return value;
}
