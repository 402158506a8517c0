/**
 * One error base class for the runtime package, a closed union of codes, one subclass per failure.
 * Messages are lowercase, without a final period, with user input in backticks.
 */
import type { ErrorCode } from "./errors/codes.js";

export type RuntimeErrorCode =
  | "JSON_INVALID"
  | "CANONICALIZATION_FAILED"
  | "KEY_INVALID"
  | "KEY_SMALL_ORDER"
  | "SIGNATURE_MALFORMED"
  | BundleErrorCode
  | "IR_UNSUPPORTED"
  | "PATTERN_REFUSED"
  | "INTEGRITY_INVALID_ATTESTATION"
  | "INTEGRITY_ALREADY_CONFIRMED"
  | OverrideErrorCode
  | ErrorCode;

/**
 * A bundle that does not load (BUNDLE_*; BUNDLE_VERSION_CONFLICT: a version already served with another `bundle_hash`),
 * and a bundle source's index that is refused (INDEX_*; docs/bundles.md).
 */
export type BundleErrorCode =
  | "BUNDLE_NOT_FOUND"
  | "BUNDLE_INVALID"
  | "BUNDLE_TAMPERED"
  | "BUNDLE_SIGNATURE_INVALID"
  | "BUNDLE_UNSIGNED"
  | "BUNDLE_VERSION_CONFLICT"
  | "INDEX_INVALID"
  | "INDEX_SIGNATURE_INVALID"
  | "INDEX_EXPIRED";

/** Override refusals: the spec's lineage codes, and a second resolution of the same decision. */
export type OverrideErrorCode = "SYS-021" | "SYS-022" | "SYS-023" | "SYS-024" | "SYS-025" | "OVERRIDE_ALREADY_RESOLVED";

export class WritRuntimeError extends Error {
  readonly code: RuntimeErrorCode;
  constructor(code: RuntimeErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** Untrusted JSON that a strict parser refuses; `line` and `column` are 1-based. */
export class StrictJsonError extends WritRuntimeError {
  readonly line: number;
  readonly column: number;
  constructor(message: string, line: number, column: number) {
    super("JSON_INVALID", `${message} at line ${line} column ${column}`);
    this.line = line;
    this.column = column;
  }
}

export class CanonicalizationError extends WritRuntimeError {
  constructor(message = "value cannot be canonicalized (RFC 8785)") {
    super("CANONICALIZATION_FAILED", message);
  }
}

export class KeyError extends WritRuntimeError {
  constructor(message = "key is not a valid Ed25519 key", code: "KEY_INVALID" | "KEY_SMALL_ORDER" = "KEY_INVALID") {
    super(code, message);
  }
}

/**
 * An `Ed25519Engine` that signs on other threads lost the thread holding the request (it crashed or exited), or is
 * closed: nothing was signed. 503 at the HTTP edge (SIGNER_UNAVAILABLE), never an answer without a verified signature.
 */
export class SignerUnavailableError extends WritRuntimeError {
  constructor(message: string) {
    super("SIGNER_UNAVAILABLE", message);
  }
}

export class SignatureFormatError extends WritRuntimeError {
  constructor(message = "signature is not 64 bytes of standard padded base64") {
    super("SIGNATURE_MALFORMED", message);
  }
}

/**
 * A bundle, a bundle archive or a bundle source's signed index that does not load. `bundleDir` is where it came from:
 * the bundle directory, or the archive's or index's origin (a file name or URL, never another server path).
 */
export class BundleError extends WritRuntimeError {
  declare readonly code: BundleErrorCode;
  readonly bundleDir: string;
  constructor(code: BundleErrorCode, message: string, bundleDir: string) {
    super(code, message);
    this.bundleDir = bundleDir;
  }
}

export class IrUnsupportedError extends WritRuntimeError {
  constructor(message: string) {
    super("IR_UNSUPPORTED", message);
  }
}

/**
 * A regular expression the linear-time engine does not run (docs/language.md, E310): `construct` is the part of
 * `pattern` it refuses, which the message names with what to write instead.
 */
export class PatternRefusedError extends WritRuntimeError {
  constructor(
    readonly pattern: string,
    readonly construct: string,
    reason: string,
  ) {
    // The reason first: a message shown shortened (bundle/shown.ts) keeps it whole, however long the pattern.
    super("PATTERN_REFUSED", `${reason} (pattern \`/${pattern}/\`)`);
  }
}

/** Confirm-execution refusals (spec 3): a bad attestation, or an executionId already confirmed. */
export class IntegrityError extends WritRuntimeError {
  constructor(code: "INTEGRITY_INVALID_ATTESTATION" | "INTEGRITY_ALREADY_CONFIRMED", message: string) {
    super(code, message);
  }
}

export class OverrideError extends WritRuntimeError {
  constructor(code: OverrideErrorCode, message: string) {
    super(code, message);
  }
}

/**
 * A refusal of the authorizer, named by its code in the error table (runtime/src/errors/codes.ts), which
 * gives its HTTP status and body. `details` holds every signal validation failure at once.
 */
export class AuthorizationError extends WritRuntimeError {
  readonly details: readonly { readonly code: string; readonly signal: string; readonly message: string }[];
  /** The `[CODE@context]` context of a named code, where it is not the table's: the rule of an EVAL fault. */
  readonly context: string | undefined;
  constructor(code: ErrorCode, message: string, details: AuthorizationError["details"] = [], context?: string) {
    super(code, message);
    this.details = details;
    this.context = context;
  }
}
