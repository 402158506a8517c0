/**
 * Request bodies of Surface A (spec 2.1, 2.8, 2.9, 4.1), closed: a member the spec does not name is a 400, not
 * silently dropped. Signals are checked here only as objects; their content is the policy's schema's business (422).
 */
const nonEmpty = { type: "string", minLength: 1, maxLength: 1024 } as const;
const signals = { type: "object" } as const;
const signalProvenance = { type: "object" } as const;

/** `POST /evaluate` variant 1 (spec 2.1), plus writ's optional `signalProvenance` (docs/signing.md). */
export const evaluateBody = {
  type: "object",
  required: ["executionId", "policyId", "policyVersion", "verifiedSignals"],
  properties: { executionId: nonEmpty, policyId: nonEmpty, policyVersion: nonEmpty, verifiedSignals: signals, signalProvenance },
  additionalProperties: false,
} as const;

/** `POST /evaluate` variant 2 (dry run) and `POST /simulate`. */
export const dryRunBody = {
  type: "object",
  required: ["policyId", "policyVersion", "signals"],
  properties: { policyId: nonEmpty, policyVersion: nonEmpty, signals, signalProvenance },
  additionalProperties: false,
} as const;

/** Legacy `POST /execute`: all four required. */
export const executeBody = {
  type: "object",
  required: ["executionId", "policyId", "policyVersion", "signals"],
  properties: { executionId: nonEmpty, policyId: nonEmpty, policyVersion: nonEmpty, signals, signalProvenance },
  additionalProperties: false,
} as const;

/** `POST /override` (spec 2.8): every member required. */
export const overrideBody = {
  type: "object",
  required: ["executionId", "approved", "approvedBy", "approverRole", "reason"],
  properties: { executionId: nonEmpty, approved: { type: "boolean" }, approvedBy: nonEmpty, approverRole: nonEmpty, reason: { type: "string", maxLength: 4096 } },
  additionalProperties: false,
} as const;

/** `POST /confirm-execution` (spec 2.9, endpoint form). */
export const confirmBody = {
  type: "object",
  required: ["attestation", "executedAction"],
  properties: {
    attestation: { type: "object" },
    executedAction: {
      type: "object",
      required: ["actionType", "actionId", "actionTimestamp"],
      properties: { actionType: nonEmpty, actionId: nonEmpty, actionTimestamp: nonEmpty, actionDetails: { type: "object" } },
      additionalProperties: false,
    },
    // A window of zero seconds is meaningless; a year is far beyond any execution an attestation covers.
    timeWindowSeconds: { type: "number", exclusiveMinimum: 0, maximum: 31_536_000 },
  },
  additionalProperties: false,
} as const;

/** `POST /verify`: a full attestation object; its content is what verification judges, so only its type is checked. */
export const verifyBody = { type: "object" } as const;
