/**
 * The sidecar's errors: one base class, each answer an exact body from the runtime's error table
 * (runtime/src/errors/codes.ts, documented in docs/errors.md), so no route invents a status or a message.
 */
import { StrictJsonError, answerOf, errorBody, statusOf, type BodyErrorCode, type ErrorStatus } from "@writ/runtime";

export class SidecarHttpError extends Error {
  override readonly name = "SidecarHttpError";
  constructor(
    readonly statusCode: ErrorStatus,
    /** `{error}`, with the members some answers add (`details`, the 429 window). */
    readonly body: { readonly error: string },
    /** Set when the answer stands for a code of the error table. */
    readonly code?: string,
    readonly headers: Readonly<Record<string, string>> = {},
    /** What caused it, logged with a 5xx (never sent). */
    options?: ErrorOptions,
  ) {
    super(body.error, options);
  }

  /** The table's answer for `code`; `arg` is the missing property's name (MISSING_PROPERTY) or a `[CODE@context]`. */
  static of(code: BodyErrorCode, arg?: string): SidecarHttpError {
    const body = (errorBody as (c: BodyErrorCode, a?: string) => { error: string })(code, arg);
    return new SidecarHttpError(statusOf(code), body, code);
  }

  /** The table's answer for `code` (a code without argument), caused by `cause`: the log shows both. */
  static causedBy(code: BodyErrorCode, cause: unknown): SidecarHttpError {
    const body = (errorBody as (c: BodyErrorCode) => { error: string })(code);
    return new SidecarHttpError(statusOf(code), body, code, {}, { cause });
  }
}

/** A 400 with what was wrong, as `{error: "Invalid request", details: [{path, message}]}`. */
export function invalidRequest(details: readonly { readonly path: string; readonly message: string }[]): SidecarHttpError {
  const body = { ...errorBody("BAD_REQUEST"), details };
  return new SidecarHttpError(400, body, "BAD_REQUEST");
}

/**
 * The HTTP answer for an error thrown by the runtime (`answerOf`, the runtime's mapping of its refusals), or a 400
 * for JSON the strict parser refused; null when it is neither (then it is a fault: 500 without detail, the cause
 * logged).
 */
export function fromRuntimeError(error: unknown): SidecarHttpError | null {
  if (error instanceof StrictJsonError) return invalidRequest([{ path: "body", message: error.message }]);
  const answer = answerOf(error);
  return answer === null ? null : new SidecarHttpError(answer.status, answer.body, answer.code);
}
