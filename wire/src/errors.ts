/**
 * Error bodies (spec 7, docs/errors.md): `{error}` always, with three extensions. Named codes start the message
 * with `[CODE@context]`; the spec's own wordings are `SPEC_ERRORS`.
 */
import { Type } from "typebox";
import { Closed, List, type Static } from "./schema.js";

/** Every error answer of both surfaces. */
export const ErrorBody = Closed(
  { error: Type.String({ description: "The error table's message (docs/errors.md); a named code starts it with `[CODE@context]`." }) },
  { title: "ErrorBody", description: "An error answer: `{error}`." },
);
export type ErrorBody = Static<typeof ErrorBody>;

/** A signal that failed validation: `code` is a `VAL-*` code, `signal` the signal's name (`""` for the whole value). */
export const SignalErrorDetail = Closed(
  { code: Type.String(), signal: Type.String(), message: Type.String() },
  {
    title: "SignalErrorDetail",
    description: 'A signal that failed validation: `code` is a `VAL-*` code, `signal` the signal\'s name (`""` for the whole value).',
  },
);
export type SignalErrorDetail = Static<typeof SignalErrorDetail>;

/**
 * 422: signals fail the policy's `signalsSchema`, every failure at once. `Signal validation failed` on `/evaluate`
 * with `verifiedSignals`, `Signals validation failed` where the body names `signals`. The order of `details` is
 * not part of the contract.
 */
export const SignalValidationErrorBody = Closed(
  {
    error: Type.Union([Type.Literal("Signal validation failed"), Type.Literal("Signals validation failed")]),
    details: List(SignalErrorDetail),
  },
  {
    title: "SignalValidationErrorBody",
    description:
      "Signals fail the policy's `signalsSchema`, every failure at once. `Signal validation failed` on `/evaluate` with `verifiedSignals`, `Signals validation failed` where the body names `signals`. The order of `details` is not part of the contract.",
  },
);
export type SignalValidationErrorBody = Static<typeof SignalValidationErrorBody>;

/** What is malformed in a request, and where (`body/executedAction/actionTimestamp`, `querystring`). */
export const RequestErrorDetail = Closed(
  { path: Type.String(), message: Type.String() },
  {
    title: "RequestErrorDetail",
    description: "What is malformed in a request, and where (`body/executedAction/actionTimestamp`, `querystring`).",
  },
);
export type RequestErrorDetail = Static<typeof RequestErrorDetail>;

/** 400 for a malformed body or query other than a missing member. */
export const InvalidRequestErrorBody = Closed(
  { error: Type.Literal("Invalid request"), details: List(RequestErrorDetail) },
  { title: "InvalidRequestErrorBody", description: "A malformed body, query or URL, other than a missing member." },
);
export type InvalidRequestErrorBody = Static<typeof InvalidRequestErrorBody>;

/** 429 (Surface A's `POST /execute`, 100 a minute). */
export const RateLimitedErrorBody = Closed(
  {
    error: Type.Literal("Rate limit exceeded"),
    limit: Type.Integer(),
    remaining: Type.Integer(),
    reset: Type.Integer({ description: "Unix time (seconds) when the window resets." }),
  },
  { title: "RateLimitedErrorBody", description: "More than 100 `POST /execute` a minute." },
);
export type RateLimitedErrorBody = Static<typeof RateLimitedErrorBody>;

/** An element of an error body's `details`. */
export type ErrorDetail = SignalErrorDetail | RequestErrorDetail;
