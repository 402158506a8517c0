/**
 * The only values of this package: strings fixed by the spec and by writ's signing format, which a client checks
 * answers against. Declared here once: the runtime signs, verifies and answers with these (it imports this module as
 * `@writ/wire/constants`, an entry of its own that imports nothing, so neither the runtime nor its clients load TypeBox).
 */

/** `provenance.provenanceVersion` of a variant 1 attestation (spec 2.2, 9). */
export const PROVENANCE_VERSION = "SERVICE_PROVENANCE_V1";

/** A policy id (the compiler's rule; the `policyId` filter of `GET /audit/decisions` takes only these). */
export const POLICY_ID_PATTERN = "^[a-z0-9]+(?:[._-][a-z0-9]+)*$";

/** The longest policy id the compiler takes (E304): no bundle, and so no decision, has a longer one. */
export const POLICY_ID_MAX_LENGTH = 128;

/**
 * The longest version a bundle can have: a bundle reference `policyId@version` is at most 200 characters (the runtime's
 * MAX_BUNDLE_REF_LENGTH, within semver's own 256), so with the shortest policy id its version has at most 198.
 */
export const POLICY_VERSION_MAX_LENGTH = 198;

/**
 * The DSSE payloadType of every signed writ object (docs/signing.md): a signature covers
 * PAE(payloadType, JCS(object without its `signature` member)), so one made in one domain never verifies in another.
 */
export const PAYLOAD_TYPES = {
  /** attestation (both shapes) */
  attestation: "application/vnd.writ.attestation.v1+json",
  /** override record */
  override: "application/vnd.writ.override.v1+json",
  /** execution integrity proof */
  executionProof: "application/vnd.writ.execution-proof.v1+json",
  /** runtime manifest */
  runtimeManifest: "application/vnd.writ.runtime-manifest.v1+json",
  /** bundle manifest (`bundle.sig`) */
  bundle: "application/vnd.writ.bundle.v1+json",
  /** a bundle source's signed index (`index.json`) */
  bundleIndex: "application/vnd.writ.bundle-index.v1+json",
  /** Surface B trust record */
  trustRecord: "application/vnd.writ.trust-record.v1+json",
  /** Surface B receipt */
  receipt: "application/vnd.writ.receipt.v1+json",
  /** audit log checkpoint (docs/audit.md) */
  auditCheckpoint: "application/vnd.writ.audit-checkpoint.v1+json",
} as const;

export type PayloadType = (typeof PAYLOAD_TYPES)[keyof typeof PAYLOAD_TYPES];

/**
 * The `error` strings the spec words itself (section 7, 2.13), exactly as it writes them. writ's own messages
 * (docs/errors.md) are not here: a client matches them by status, or a named code by its `[CODE@context]` prefix.
 * `MISSING_PROPERTY` is a template: `<name>` stands for the missing member.
 */
export const SPEC_ERRORS = {
  BAD_REQUEST: "Invalid request",
  MISSING_PROPERTY: "body must have required property '<name>'",
  INVALID_BUSINESS_TRANSACTION_ID: "businessTransactionId must be a valid UUID.",
  UNAUTHORIZED: "Unauthorized",
  POLICY_NOT_FOUND: "Policy not found",
  PENDING_OVERRIDE_NOT_FOUND: "Pending override not found",
  OVERRIDE_ALREADY_RESOLVED: "Override already resolved",
  BODY_TOO_LARGE: "Request body too large",
  SIGNAL_VALIDATION_FAILED: "Signal validation failed",
  SIGNALS_VALIDATION_FAILED: "Signals validation failed",
  RATE_LIMITED: "Rate limit exceeded",
  EVALUATION_FAILED: "Evaluation failed",
  RUNTIME_NOT_CONFIGURED: "Governed execution runtime not configured",
} as const;
