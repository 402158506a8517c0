/**
 * Every error the service answers with, in one table: HTTP status, the exact `error` string of the body, whether a
 * client retries, and what it means. docs/errors.md documents the same table and its three kinds of entry (plain HTTP
 * conditions, named codes with a `context`, signal validation codes carried in a 422's `details`); a test checks that
 * the two agree row for row (runtime/test/errors/codes.test.ts). The spec's wording is kept exactly where the spec
 * gives it (`SPEC_ERRORS` of @writ/wire's constants); writ's own messages are lowercase.
 */
import { SPEC_ERRORS } from "@writ/wire/constants";
import { FAULTS, type FaultCode } from "../ir/fault-codes.js";
import type { SignalError } from "../signals/signal-error.js";
// Not from validate.ts, which imports the regex engine and so errors.ts: a cycle through this file.
import type { ErrorBody, RateLimitedErrorBody, SignalValidationErrorBody } from "@writ/wire/types";

/** The HTTP statuses the service answers errors with. */
export type ErrorStatus = 400 | 401 | 404 | 405 | 408 | 409 | 413 | 417 | 422 | 429 | 431 | 500 | 503;

export interface ErrorCodeEntry {
  readonly status: ErrorStatus;
  /** The `error` string of the HTTP body (without the `[CODE@context]` prefix; `<name>` is a placeholder). */
  readonly message: string;
  /** Spec 7: 400, 401, 413 and 422 are not retried; 429 and 5xx are retried with backoff. */
  readonly retryable: boolean;
  readonly meaning: string;
  /** Default context of the `[CODE@context]` prefix; present exactly on the named codes. */
  readonly context?: string;
  /** `body`: the code forms an `{error}` body; `details`: it travels inside a signal validation body. */
  readonly carrier: "body" | "details";
}

/** An evaluation fault (ir/faults.ts): its context is the rule whose condition faulted, `[EVAL-001@over_limit]`. */
const EVAL = (code: FaultCode) =>
  ({
    status: 422,
    message: `${FAULTS[code]} in the rule's condition: nothing was decided`,
    retryable: false,
    meaning: `${FAULTS[code]} while a rule's condition was computed: no attestation, nothing consumed, the executionId stays unused; the context names the rule`,
    context: "evaluate",
    carrier: "body",
  }) as const;

const VAL = (meaning: string) =>
  ({ status: 422, message: SPEC_ERRORS.SIGNAL_VALIDATION_FAILED, retryable: false, meaning, carrier: "details" }) as const;

export const ERROR_CODES = {
  // 400
  BAD_REQUEST: {
    status: 400,
    message: SPEC_ERRORS.BAD_REQUEST,
    retryable: false,
    meaning: "malformed body: not strict JSON, wrong member type, or both verifiedSignals and signals on /evaluate",
    carrier: "body",
  },
  MISSING_PROPERTY: {
    status: 400,
    message: SPEC_ERRORS.MISSING_PROPERTY,
    retryable: false,
    meaning: "a required request field is missing; <name> is the field",
    carrier: "body",
  },
  INVALID_BUSINESS_TRANSACTION_ID: {
    status: 400,
    message: SPEC_ERRORS.INVALID_BUSINESS_TRANSACTION_ID,
    retryable: false,
    meaning: "Surface B POST /execute: businessTransactionId is not a UUID (checked before any execution)",
    carrier: "body",
  },
  // 401
  UNAUTHORIZED: {
    status: 401,
    message: SPEC_ERRORS.UNAUTHORIZED,
    retryable: false,
    meaning: "Authorization header missing, or the Bearer key is none of the configured keys that open the route's scope (scoped keys)",
    carrier: "body",
  },
  // 404
  NOT_FOUND: {
    status: 404,
    message: "not found",
    retryable: false,
    meaning: "no such route",
    carrier: "body",
  },
  POLICY_NOT_FOUND: {
    status: 404,
    message: SPEC_ERRORS.POLICY_NOT_FOUND,
    retryable: false,
    meaning: "the policy version does not exist (/evaluate with verifiedSignals, GET policy schema)",
    carrier: "body",
  },
  DECISION_NOT_FOUND: {
    status: 404,
    message: "decision not found",
    retryable: false,
    meaning: "no audited decision for the executionId (GET /audit/decisions/:executionId)",
    carrier: "body",
  },
  CHECKPOINT_NOT_FOUND: {
    status: 404,
    message: "checkpoint not found",
    retryable: false,
    meaning: "no checkpoint of the audit record log at that size (GET /audit/checkpoints/:size, the proof and export routes)",
    carrier: "body",
  },
  LOG_NOT_FOUND: {
    status: 404,
    message: "audit log not found",
    retryable: false,
    meaning: "the store holds no audit record log of that logId (the logId parameter of the /audit/log routes; GET /audit/logs lists them)",
    carrier: "body",
  },
  NOT_IN_CHECKPOINT: {
    status: 404,
    message: "record not covered by the checkpoint",
    retryable: false,
    meaning:
      "no decision for the executionId in the audit record log up to that checkpoint (GET /audit/proofs/inclusion): not audited, or not checkpointed yet (ask again after the next checkpoint)",
    carrier: "body",
  },
  PENDING_OVERRIDE_NOT_FOUND: {
    status: 404,
    message: SPEC_ERRORS.PENDING_OVERRIDE_NOT_FOUND,
    retryable: false,
    meaning: "no pending override for the executionId (POST /override)",
    carrier: "body",
  },
  TRANSACTION_NOT_FOUND: {
    status: 404,
    message: "transaction not found",
    retryable: false,
    meaning: "Surface B: no business transaction with this id",
    carrier: "body",
  },
  TRUST_RECORD_NOT_FOUND: {
    status: 404,
    message: "trust record not found",
    retryable: false,
    meaning: "Surface B: no Execution Trust Record with this id",
    carrier: "body",
  },
  VERIFICATION_NOT_FOUND: {
    status: 404,
    message: "verification not found",
    retryable: false,
    meaning: "Surface B: the trust record or its verification history is missing",
    carrier: "body",
  },
  RECEIPT_NOT_FOUND: {
    status: 404,
    message: "receipt not found",
    retryable: false,
    meaning: "Surface B: no receipt has been generated for this id",
    carrier: "body",
  },
  // 409
  OVERRIDE_ALREADY_RESOLVED: {
    status: 409,
    message: SPEC_ERRORS.OVERRIDE_ALREADY_RESOLVED,
    retryable: false,
    meaning: "the pending override for the executionId was already approved or rejected",
    carrier: "body",
  },
  INTEGRITY_ALREADY_CONFIRMED: {
    status: 409,
    message: "execution already confirmed",
    retryable: false,
    meaning: "confirm-execution already issued a proof for this executionId (once per executionId)",
    context: "confirm-execution",
    carrier: "body",
  },
  TRUST_RECORD_INVALID: {
    status: 409,
    message: "trust record does not verify: no receipt issued",
    retryable: false,
    meaning:
      "Surface B POST /receipt: the stored trust record no longer verifies (changed after it was sealed), so no receipt is signed for it",
    carrier: "body",
  },
  // 405, 408: below the routes (sidecar/src/http/client-errors.ts)
  METHOD_NOT_ALLOWED: {
    status: 405,
    message: "method not allowed",
    retryable: false,
    meaning: "CONNECT (a proxy tunnel): writ is not a proxy",
    carrier: "body",
  },
  REQUEST_TIMEOUT: {
    status: 408,
    message: "request timeout",
    retryable: false,
    meaning:
      "the request's headers or body did not arrive within SERVICE_HEADERS_TIMEOUT_MS / SERVICE_REQUEST_TIMEOUT_MS; the connection is closed",
    carrier: "body",
  },
  // 413
  BODY_TOO_LARGE: {
    status: 413,
    message: SPEC_ERRORS.BODY_TOO_LARGE,
    retryable: false,
    meaning: "the request body is larger than 65,536 bytes",
    carrier: "body",
  },
  // 417, 431: below the routes
  EXPECTATION_FAILED: {
    status: 417,
    message: "expectation failed: only 100-continue is supported",
    retryable: false,
    meaning: "an Expect header other than 100-continue",
    carrier: "body",
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    message: "request headers too large",
    retryable: false,
    meaning: "the request's headers are larger than Node's limit (16 KB); the connection is closed",
    carrier: "body",
  },
  // 422: signal validation envelopes and the policy bundle
  SIGNAL_VALIDATION_FAILED: {
    status: 422,
    message: SPEC_ERRORS.SIGNAL_VALIDATION_FAILED,
    retryable: false,
    meaning: "verifiedSignals fail the policy signalsSchema (/evaluate with verifiedSignals); VAL codes in details",
    carrier: "body",
  },
  SIGNALS_VALIDATION_FAILED: {
    status: 422,
    message: SPEC_ERRORS.SIGNALS_VALIDATION_FAILED,
    retryable: false,
    meaning: "signals fail the policy signalsSchema (/execute, /evaluate dry run, /simulate); VAL codes in details",
    carrier: "body",
  },
  POLICY_BUNDLE_MISSING: {
    status: 422,
    message: SPEC_ERRORS.POLICY_NOT_FOUND,
    retryable: false,
    meaning: "the policy bundle is missing from SERVICE_POLICIES_ROOT (/execute, /evaluate dry run, /simulate)",
    carrier: "body",
  },
  POLICY_BUNDLE_INVALID: {
    status: 422,
    message: "policy bundle does not load",
    retryable: false,
    meaning:
      "the policy bundle is there but does not load: it fails a check (hash, signature, JSON), a file cannot be read or is not a regular file, or the load timed out; the cause is logged (/execute, /evaluate dry run, /simulate, GET policy schema)",
    carrier: "body",
  },
  // 422: named codes
  "INV-013": {
    status: 422,
    message: "execution already consumed: use a new executionId",
    retryable: false,
    meaning: "the execution_fingerprint or executionId was already consumed; the same id blocks again, a new executionId is needed",
    context: "replay",
    carrier: "body",
  },
  "INV-REPLAY-001": {
    status: 422,
    message: "no replay store configured",
    retryable: false,
    meaning: "the execution path has no replay store, so it fails closed",
    context: "replay",
    carrier: "body",
  },
  "SYS-006": {
    status: 422,
    message: "policy evaluation undecided: no rule matched and the policy has no catch-all",
    retryable: false,
    meaning: "the policy yields no decision for these signals (no catch-all rule)",
    context: "evaluate",
    carrier: "body",
  },
  "EVAL-001": EVAL("EVAL-001"),
  "EVAL-002": EVAL("EVAL-002"),
  "EVAL-003": EVAL("EVAL-003"),
  "EVAL-004": EVAL("EVAL-004"),
  "SYS-021": {
    status: 422,
    message: "no pending execution found for override",
    retryable: false,
    meaning: "the replay store holds no pending execution for the override",
    context: "override",
    carrier: "body",
  },
  "SYS-022": {
    status: 422,
    message: "execution_fingerprint missing in the pending context",
    retryable: false,
    meaning: "the pending override context carries no execution_fingerprint",
    context: "override",
    carrier: "body",
  },
  "SYS-023": {
    status: 422,
    message: "override lineage mismatch",
    retryable: false,
    meaning: "the override token or fingerprint does not match the pending execution",
    context: "override",
    carrier: "body",
  },
  "SYS-024": {
    status: 422,
    message: "replay store does not support override transitions",
    retryable: false,
    meaning: "the configured replay store cannot perform the override transition",
    context: "override",
    carrier: "body",
  },
  "SYS-025": {
    status: 422,
    message: "provenance missing in the pending override",
    retryable: false,
    meaning: "the pending override carries no provenance",
    context: "override",
    carrier: "body",
  },
  INTEGRITY_INVALID_ATTESTATION: {
    status: 422,
    message: "attestation signature verification failed",
    retryable: false,
    meaning: "confirm-execution: the attestation signature does not verify, so no proof is issued",
    context: "confirm-execution",
    carrier: "body",
  },
  // 422: signal validation details
  "VAL-001": VAL("signals must be a JSON object (writ addition)"),
  "VAL-003": VAL("unknown signal (not declared)"),
  "VAL-004": VAL("required signal missing"),
  "VAL-006": VAL("expected a string"),
  "VAL-007": VAL("expected a finite number"),
  "VAL-008": VAL("expected an integer"),
  "VAL-009": VAL("expected a boolean"),
  "VAL-010": VAL("not one of the allowed values"),
  "VAL-011": VAL("outside the declared bounds (min/max, length)"),
  "VAL-012": VAL("does not match the declared pattern or format"),
  "VAL-013": VAL("not a semantic version (SemVer 2.0.0, numbers at most 9007199254740991)"),
  "VAL-014": VAL("not an IP address (IPv4 dotted decimal or IPv6 text, no zone)"),
  // 429
  RATE_LIMITED: {
    status: 429,
    message: SPEC_ERRORS.RATE_LIMITED,
    retryable: true,
    meaning: "more than 100 requests per minute to POST /execute; the body adds limit, remaining and reset",
    carrier: "body",
  },
  // 500
  EVALUATION_FAILED: {
    status: 500,
    message: SPEC_ERRORS.EVALUATION_FAILED,
    retryable: true,
    meaning: "unexpected runtime error during evaluate",
    carrier: "body",
  },
  INTERNAL_ERROR: {
    status: 500,
    message: "internal error",
    retryable: true,
    meaning: "unexpected error outside evaluate; the cause is logged, never sent to the client",
    carrier: "body",
  },
  AUDIT_TRAIL_DISAGREES: {
    status: 500,
    message: "audit trail disagrees with its own records",
    retryable: true,
    meaning:
      "a decision read from the audit store contradicts its attestation, or the filter that found it: the store was edited around writ; the sidecar's log names the executionId, and writ audit verify of an export names the entry",
    carrier: "body",
  },
  // 503
  AUDIT_LOG_UNAVAILABLE: {
    status: 503,
    message: "audit record log unavailable",
    retryable: true,
    meaning: "this sidecar keeps no tamper-evident audit record log: audit is off, or its store has none yet",
    carrier: "body",
  },
  AUDIT_STORE_UNAVAILABLE: {
    status: 503,
    message: "audit store unavailable",
    retryable: true,
    meaning:
      "the database an audit read goes to failed or did not answer in time (the read database for the reads that scan history when SERVICE_DATABASE_READ_URL is set); the sidecar's log names which; decisions are not affected",
    carrier: "body",
  },
  RUNTIME_NOT_CONFIGURED: {
    status: 503,
    message: SPEC_ERRORS.RUNTIME_NOT_CONFIGURED,
    retryable: true,
    meaning: "signer, verifier or replay store not configured",
    carrier: "body",
  },
  REPLAY_STORE_UNAVAILABLE: {
    status: 503,
    message: "replay store unavailable",
    retryable: true,
    meaning:
      "a configured store failed: a write or its flush failed (a full disk, an I/O error), the data dir's disk is below its free-space reserve (SERVICE_DATA_DIR_RESERVE), or capacity reached; execution fails closed",
    carrier: "body",
  },
  SIGNER_UNAVAILABLE: {
    status: 503,
    message: "signer unavailable",
    retryable: true,
    meaning:
      "the signing thread holding the request stopped (it crashed or exited; it is replaced) or the sidecar is shutting down: what it was to sign was not signed, and nothing unsigned was stored or answered (an /evaluate consumed nothing: retry with the same executionId)",
    carrier: "body",
  },
} as const satisfies Record<string, ErrorCodeEntry>;

type Table = typeof ERROR_CODES;

/** Every code the service can answer with (closed union). */
export type ErrorCode = keyof Table;

/** Codes that travel inside a signal validation body's `details` (the VAL codes). */
export type DetailErrorCode = { [K in ErrorCode]: Table[K] extends { carrier: "details" } ? K : never }[ErrorCode];
/** Codes that form an `{error}` body of their own. */
export type BodyErrorCode = Exclude<ErrorCode, DetailErrorCode>;
/** Named codes whose message starts with `[CODE@context]`. */
export type ContextErrorCode = { [K in ErrorCode]: Table[K] extends { context: string } ? K : never }[ErrorCode];

type ContextArgs<C extends BodyErrorCode> = C extends "MISSING_PROPERTY"
  ? [name: string]
  : C extends ContextErrorCode
    ? [context?: string]
    : [];

/** The error table's bodies, as the wire declares them. */
export type { ErrorBody, RateLimitedErrorBody as RateLimitedBody, SignalValidationErrorBody as SignalValidationBody };

/** A context: a route-like word, or a rule's name (`[EVAL-001@over_limit]`). */
const CONTEXT = /^[A-Za-z0-9_][A-Za-z0-9_./-]*$/;

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_CODES, value);
}

function entryOf(code: ErrorCode): ErrorCodeEntry {
  if (!isErrorCode(code)) throw new TypeError(`unknown error code \`${String(code)}\``);
  return ERROR_CODES[code];
}

export function statusOf(code: ErrorCode): ErrorStatus {
  return entryOf(code).status;
}

export function isRetryable(code: ErrorCode): boolean {
  return entryOf(code).retryable;
}

/**
 * The exact JSON body for `code`. Named codes get `[CODE@context]` in front of the message (`context` defaults
 * to the table's); `MISSING_PROPERTY` takes the missing field's name. VAL codes have no body of their own:
 * use `signalValidationBody`.
 */
export function errorBody<C extends BodyErrorCode>(code: C, ...args: ContextArgs<C>): ErrorBody {
  const entry = entryOf(code);
  const [arg] = args as [string?];
  if (entry.carrier === "details") {
    throw new TypeError(`\`${code}\` travels inside a signal validation body: use signalValidationBody`);
  }
  if (code === "MISSING_PROPERTY") {
    if (arg === undefined || arg === "") throw new TypeError("MISSING_PROPERTY needs the name of the missing property");
    return { error: entry.message.replace("<name>", () => arg) };
  }
  if (entry.context === undefined) return { error: entry.message };
  const context = arg ?? entry.context;
  if (!CONTEXT.test(context)) throw new TypeError(`error context \`${context}\` must match ${String(CONTEXT)}`);
  return { error: `[${code}@${context}] ${entry.message}` };
}

/**
 * The 422 body of a failed signal validation, every failure at once. `envelope` picks the spec's wording:
 * `SIGNAL_VALIDATION_FAILED` for /evaluate with `verifiedSignals`, `SIGNALS_VALIDATION_FAILED` for the
 * endpoints that take `signals`.
 */
export function signalValidationBody(
  errors: readonly SignalError[],
  envelope: "SIGNAL_VALIDATION_FAILED" | "SIGNALS_VALIDATION_FAILED" = "SIGNAL_VALIDATION_FAILED",
): SignalValidationErrorBody {
  return {
    error: ERROR_CODES[envelope].message,
    details: errors.map(({ code, signal, message }) => ({ code, signal, message })),
  };
}

/** The 429 body: `Rate limit exceeded` plus the window's `limit`, `remaining` and `reset`. */
export function rateLimitedBody(window: { limit: number; remaining: number; reset: number }): RateLimitedErrorBody {
  return { error: ERROR_CODES.RATE_LIMITED.message, limit: window.limit, remaining: window.remaining, reset: window.reset };
}
