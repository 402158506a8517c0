/**
 * The SDK's errors: one base class and a closed union of codes.
 *
 * - `WritApiError`: a refusal of the service, as the HTTP surfaces answer it (spec 7: `status`, `message` = the
 *   body's `error`, `name`). The clients throw it for every error answer; the embedded authorizer throws the same
 *   error with the status and message the sidecar would answer, so code written against one runs against the other.
 * - `WritKeyError`: a pinned or signing key that cannot be used.
 *
 * Network failures, timeouts and aborts are not wrapped (spec 7): they reach the caller as undici throws them.
 */
import { ERROR_CODES, isErrorCode, type ContextErrorCode } from "@writ/runtime";
import type { ErrorDetail } from "@writ/wire";

/** Codes of `[CODE@context]` messages: replay, undecided policy, override lineage, confirmation. */
export type NamedErrorCode = ContextErrorCode;
export type KeyErrorCode = "KEY_INVALID" | "KEY_SMALL_ORDER";
export type WritErrorCode = NamedErrorCode | KeyErrorCode;

export class WritError extends Error {
  /** Absent when the error has no code: most HTTP refusals are named by their status and message alone. */
  declare readonly code?: WritErrorCode;

  constructor(message: string, code: WritErrorCode | undefined, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    // Set only when there is one, so `"code" in error` says whether the service named a code.
    if (code !== undefined) this.code = code;
  }
}

/** An element of `details`: a signal that failed validation (422), or what is malformed in a request (400). */
export type { ErrorDetail };

/** `[CODE@context] message` (docs/errors.md). */
const NAMED = /^\[([A-Za-z0-9_-]+)@([a-z0-9][a-z0-9._/-]*)\] /;

function isNamedCode(value: string): value is NamedErrorCode {
  return isErrorCode(value) && "context" in ERROR_CODES[value];
}

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export class WritApiError extends WritError {
  declare readonly code?: NamedErrorCode;
  /** The `context` of the message's `[CODE@context]` prefix, when it has one. */
  declare readonly context?: string;
  /** The body's `details`, when it has them (signal validation failures, malformed request members). */
  declare readonly details?: readonly ErrorDetail[];
  readonly status: number;
  /**
   * The whole answer body: JSON when it was JSON (with members such as the 429 body's `limit`, `remaining` and
   * `reset`), else its text (a proxy's error page), or null when empty.
   */
  readonly body: unknown;

  constructor(status: number, body: unknown, options?: ErrorOptions) {
    const error = isObject(body) && typeof body["error"] === "string" ? body["error"] : `HTTP ${status} without an error body`;
    const named = NAMED.exec(error);
    // A code this SDK does not know (a newer service) stays in the message but is not claimed as a known code.
    const code = named?.[1] !== undefined && isNamedCode(named[1]) ? named[1] : undefined;
    super(error, code, options);
    this.status = status;
    this.body = body;
    if (code !== undefined && named?.[2] !== undefined) this.context = named[2];
    const details = isObject(body) ? body["details"] : undefined;
    if (Array.isArray(details)) this.details = details as ErrorDetail[];
  }
}

export class WritKeyError extends WritError {
  declare readonly code: KeyErrorCode;

  constructor(message: string, code: KeyErrorCode, options?: ErrorOptions) {
    super(message, code, options);
  }
}
