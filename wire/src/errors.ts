/**
 * Error bodies (spec 7, docs/errors.md): `{error}` always, with three extensions. Named codes start the message
 * with `[CODE@context]`; the spec's own wordings are `SPEC_ERRORS`.
 */

/** Every error answer of both surfaces. */
export interface ErrorBody {
  readonly error: string;
}

/** A signal that failed validation: `code` is a `VAL-*` code, `signal` the signal's name (`""` for the whole value). */
export interface SignalErrorDetail {
  readonly code: string;
  readonly signal: string;
  readonly message: string;
}

/**
 * 422: signals fail the policy's `signalsSchema`, every failure at once. `Signal validation failed` on `/evaluate`
 * with `verifiedSignals`, `Signals validation failed` where the body names `signals`. The order of `details` is
 * not part of the contract.
 */
export interface SignalValidationErrorBody {
  readonly error: "Signal validation failed" | "Signals validation failed";
  readonly details: readonly SignalErrorDetail[];
}

/** What is malformed in a request, and where (`body/executedAction/actionTimestamp`, `querystring`). */
export interface RequestErrorDetail {
  readonly path: string;
  readonly message: string;
}

/** 400 for a malformed body or query other than a missing member. */
export interface InvalidRequestErrorBody {
  readonly error: "Invalid request";
  readonly details: readonly RequestErrorDetail[];
}

/** 429 (Surface A's `POST /execute`, 100 a minute). */
export interface RateLimitedErrorBody {
  readonly error: "Rate limit exceeded";
  readonly limit: number;
  readonly remaining: number;
  /** Unix time (seconds) when the window resets. */
  readonly reset: number;
}

/** An element of an error body's `details`. */
export type ErrorDetail = SignalErrorDetail | RequestErrorDetail;
