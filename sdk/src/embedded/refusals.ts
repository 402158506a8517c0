/**
 * The runtime's refusals as the sidecar answers them (sidecar/src/http/errors.ts, from the one error table in
 * runtime/src/errors/codes.ts): the embedded authorizer throws the same `WritApiError`, status, message and details
 * as the Surface A client would receive, so an application handles both alike.
 */
import { answerOf, errorBody } from "@writ/runtime";
import { WritApiError } from "../errors.js";

/** The error the sidecar would answer for `error` (`answerOf`), or null when it is not a refusal of the runtime. */
export function apiErrorOf(error: unknown): WritApiError | null {
  const answer = answerOf(error);
  return answer === null ? null : new WritApiError(answer.status, answer.body, { cause: error });
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
