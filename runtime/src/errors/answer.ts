/**
 * The HTTP answer for each refusal of the runtime, from the one error table (codes.ts): what the sidecar answers and
 * what the SDK's embedded authorizer throws, so the two cannot drift apart.
 */
import { AuthorizationError, IntegrityError, OverrideError, SignerUnavailableError, type OverrideErrorCode } from "../errors.js";
import { ReplayCapacityError, ReplayStoreClosedError, StoreUnavailableError } from "../replay/errors.js";
import { errorBody, signalValidationBody, statusOf, type BodyErrorCode, type ErrorBody, type ErrorStatus } from "./codes.js";

export interface ErrorAnswer {
  readonly status: ErrorStatus;
  /** `{error}`, with `details` for a signal validation failure. */
  readonly body: ErrorBody;
  readonly code: BodyErrorCode;
}

function answer(code: BodyErrorCode, context?: string): ErrorAnswer {
  // `errorBody`'s arguments depend on the code; here only a named code's context is ever given.
  const body = (errorBody as (c: BodyErrorCode, context?: string) => { error: string })(code, ...(context === undefined ? [] : [context]));
  return { status: statusOf(code), body, code };
}

/**
 * The answer for `error`, or null when it is not a refusal of the runtime (then it is a fault: 500, cause logged).
 * - Signal validation: 422 with every failure in `details`.
 * - `SYS-021` from an override is the spec's 404 `Pending override not found` (section 3: no pending override).
 * - A store that is full, closed or failing to write fails closed: 503.
 * - A signer that lost the thread signing the request (or is closed) fails closed: 503.
 */
export function answerOf(error: unknown): ErrorAnswer | null {
  if (error instanceof AuthorizationError) {
    // An AuthorizationError's code is always a row of the error table (its constructor takes ErrorCode).
    const code = error.code as BodyErrorCode;
    if (code === "SIGNAL_VALIDATION_FAILED" || code === "SIGNALS_VALIDATION_FAILED") {
      return { status: 422, body: signalValidationBody(error.details, code), code };
    }
    return answer(code, error.context);
  }
  if (error instanceof OverrideError) {
    return answer(error.code === "SYS-021" ? "PENDING_OVERRIDE_NOT_FOUND" : (error.code as OverrideErrorCode & BodyErrorCode));
  }
  if (error instanceof IntegrityError) return answer(error.code as "INTEGRITY_INVALID_ATTESTATION" | "INTEGRITY_ALREADY_CONFIRMED");
  if (error instanceof ReplayCapacityError || error instanceof ReplayStoreClosedError || error instanceof StoreUnavailableError) {
    return answer("REPLAY_STORE_UNAVAILABLE");
  }
  if (error instanceof SignerUnavailableError) return answer("SIGNER_UNAVAILABLE");
  return null;
}
