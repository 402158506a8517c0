/**
 * The sidecar's errors: one base class, each answer an exact body from the runtime's error table
 * (runtime/src/errors/codes.ts, documented in docs/errors.md), so no route invents a status or a message.
 */
import {
  AuthorizationError,
  IntegrityError,
  OverrideError,
  ReplayCapacityError,
  ReplayStoreClosedError,
  StrictJsonError,
  errorBody,
  signalValidationBody,
  statusOf,
  type BodyErrorCode,
  type OverrideErrorCode,
  type ErrorStatus,
} from "@writ/runtime";

export class SidecarHttpError extends Error {
  override readonly name = "SidecarHttpError";
  constructor(
    readonly statusCode: ErrorStatus,
    /** `{error}`, with the members some answers add (`details`, the 429 window). */
    readonly body: { readonly error: string },
    /** Set when the answer stands for a code of the error table. */
    readonly code?: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(body.error);
  }

  /** The table's answer for `code`; `arg` is the missing property's name (MISSING_PROPERTY) or a `[CODE@context]`. */
  static of(code: BodyErrorCode, arg?: string): SidecarHttpError {
    const body = (errorBody as (c: BodyErrorCode, a?: string) => { error: string })(code, arg);
    return new SidecarHttpError(statusOf(code), body, code);
  }
}

/** A 400 with what was wrong, as `{error: "Invalid request", details: [{path, message}]}`. */
export function invalidRequest(details: readonly { readonly path: string; readonly message: string }[]): SidecarHttpError {
  const body = { ...errorBody("BAD_REQUEST"), details };
  return new SidecarHttpError(400, body, "BAD_REQUEST");
}

/**
 * The HTTP answer for an error thrown by the runtime, or null when it is not one of the runtime's refusals (then it
 * is a fault: 500 without detail, the cause logged).
 *
 * - Signal validation: 422 with every failure in `details`.
 * - `SYS-021` on `POST /override` is the spec's 404 `Pending override not found` (section 3: no pending override).
 * - A replay store that is full or closed fails closed: 503.
 */
export function fromRuntimeError(error: unknown): SidecarHttpError | null {
  if (error instanceof AuthorizationError) {
    // An AuthorizationError's code is always a row of the error table (its constructor takes ErrorCode).
    const code = error.code as BodyErrorCode;
    if (code === "SIGNAL_VALIDATION_FAILED" || code === "SIGNALS_VALIDATION_FAILED") {
      return new SidecarHttpError(422, signalValidationBody(error.details, code), code);
    }
    return SidecarHttpError.of(code);
  }
  if (error instanceof OverrideError) {
    return SidecarHttpError.of(error.code === "SYS-021" ? "PENDING_OVERRIDE_NOT_FOUND" : (error.code as OverrideErrorCode & BodyErrorCode));
  }
  if (error instanceof IntegrityError) return SidecarHttpError.of(error.code as "INTEGRITY_INVALID_ATTESTATION" | "INTEGRITY_ALREADY_CONFIRMED");
  if (error instanceof ReplayCapacityError || error instanceof ReplayStoreClosedError) return SidecarHttpError.of("REPLAY_STORE_UNAVAILABLE");
  if (error instanceof StrictJsonError) return invalidRequest([{ path: "body", message: error.message }]);
  return null;
}
