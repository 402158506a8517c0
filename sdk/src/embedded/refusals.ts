/**
 * The runtime's refusals as the sidecar answers them (sidecar/src/http/errors.ts, from the one error table in
 * runtime/src/errors/codes.ts): the embedded authorizer throws the same `WritApiError`, status, message and details
 * as the Surface A client would receive, so an application handles both alike.
 */
import {
  AuthorizationError,
  IntegrityError,
  OverrideError,
  ReplayCapacityError,
  ReplayStoreClosedError,
  errorBody,
  signalValidationBody,
  statusOf,
  type BodyErrorCode,
  type ErrorBody,
  type OverrideErrorCode,
} from "@writ/runtime";
import { WritApiError } from "../errors.js";

function answer(code: BodyErrorCode, cause: unknown): WritApiError {
  // `errorBody`'s arguments depend on the code; none of the codes mapped here takes one.
  const body = (errorBody as (c: BodyErrorCode) => ErrorBody)(code);
  return new WritApiError(statusOf(code), body, { cause });
}

/**
 * The error the sidecar would answer for `error`, or null when it is not a refusal of the runtime (a fault, thrown
 * as it is). `SYS-021` is the spec's 404 `Pending override not found`; a full or closed replay store fails closed (503).
 */
export function apiErrorOf(error: unknown): WritApiError | null {
  if (error instanceof AuthorizationError) {
    const code = error.code as BodyErrorCode;
    if (code === "SIGNAL_VALIDATION_FAILED" || code === "SIGNALS_VALIDATION_FAILED") {
      return new WritApiError(422, signalValidationBody(error.details, code), { cause: error });
    }
    return answer(code, error);
  }
  if (error instanceof OverrideError) {
    return answer(error.code === "SYS-021" ? "PENDING_OVERRIDE_NOT_FOUND" : (error.code as OverrideErrorCode & BodyErrorCode), error);
  }
  if (error instanceof IntegrityError) return answer(error.code as "INTEGRITY_INVALID_ATTESTATION" | "INTEGRITY_ALREADY_CONFIRMED", error);
  if (error instanceof ReplayCapacityError || error instanceof ReplayStoreClosedError) return answer("REPLAY_STORE_UNAVAILABLE", error);
  return null;
}

/** A 400 `Invalid request` with what is malformed, as the sidecar words it. */
export function invalidRequest(path: string, message: string): WritApiError {
  return new WritApiError(400, { ...errorBody("BAD_REQUEST"), details: [{ path, message }] });
}

/** Runs `work`, throwing the runtime's refusals as `WritApiError`s. */
export async function refusing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw apiErrorOf(e) ?? e;
  }
}
