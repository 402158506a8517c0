/**
 * The audit trail as Surface A answers it (spec 2.11, 4.1). The spec leaves the record fields and the query
 * defaults open; these are docs/audit.md's.
 */
import { Type } from "typebox";
import { Attestation } from "./attestation.js";
import { POLICY_ID_MAX_LENGTH, POLICY_ID_PATTERN } from "./constants.js";
import { DecisionStatus, ExecutionState, JsonObject, Verdict } from "./common.js";
import { ExecutionProof, OverrideRecord } from "./evidence.js";
import { Choice, Closed, Described, Instant, List, Text, type Static } from "./schema.js";

const limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50, description: "1 to 500, default 50." }));
/**
 * A time bound of a query. An RFC 3339 date-time is 20 characters, 35 with nanoseconds and an offset
 * (`2025-01-31T01:00:00.123456789+01:00`); 64 leaves room for any fraction a clock writes.
 */
const bound = Type.Optional(
  Type.String({
    format: "date-time",
    maxLength: 64,
    description: "Inclusive bound: an RFC 3339 date-time with an offset, at most 64 characters.",
  }),
);

/** `GET /audit/decisions` query parameters; every one optional, each given at most once. */
export const DecisionQuery = Closed(
  {
    limit,
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0, description: "0 to 1,000,000, default 0." })),
    policyId: Type.Optional(
      Type.String({
        maxLength: POLICY_ID_MAX_LENGTH,
        pattern: POLICY_ID_PATTERN,
        description:
          "A policy id: at most 128 characters, lowercase letters and digits separated by single `.`, `_` or `-` (the compiler's rule).",
      }),
    ),
    decision: Type.Optional(DecisionStatus),
    from: bound,
    to: bound,
  },
  { title: "DecisionQuery", description: "`GET /audit/decisions` query parameters; every one optional, each given at most once." },
);
export type DecisionQuery = Static<typeof DecisionQuery>;

/** `GET /audit/security` query parameters: newest first, no offset (page backwards with `to`). */
export const SecurityEventQuery = Closed(
  { limit, from: bound, to: bound },
  {
    title: "SecurityEventQuery",
    description: "`GET /audit/security` query parameters: newest first, no offset (page backwards with `to`).",
  },
);
export type SecurityEventQuery = Static<typeof SecurityEventQuery>;

/** An element of `GET /audit/decisions`, newest first. */
export const DecisionRow = Closed(
  {
    executionId: Type.String(),
    execution_fingerprint: Type.String(),
    policyId: Type.String(),
    policyVersion: Type.String(),
    decision: Described(DecisionStatus, "The response status; the `decision` filter matches it."),
    action: Described(Verdict, "The policy verdict."),
    reason: Type.String(),
    ruleMatched: Type.String(),
    execution_state: ExecutionState,
    signalsHash: Type.String(),
    signerKeyId: Type.String({ description: "From the attestation (nested or flat provenance)." }),
    endpoint: Choice(["evaluate", "execute"], { description: "Which endpoint decided." }),
    overrideResolution: Type.Union([Choice(["approved", "rejected"]), Type.Null()], { description: "Set once an override is recorded." }),
    confirmed: Type.Boolean({ description: "A confirmation is recorded, whether or not it matched (see `confirmation.match`)." }),
    recordedAt: Instant("The attestation's `issuedAt`."),
  },
  { title: "DecisionRow", description: "An element of `GET /audit/decisions`, newest first." },
);
export type DecisionRow = Static<typeof DecisionRow>;

/** A resolved override, kept beside the decision it resolves (spec 1.8: an override never replaces it). */
export const AuditedOverride = Closed(
  {
    executionId: Type.String(),
    approved: Type.Boolean(),
    approvedBy: Type.String(),
    approverRole: Type.String(),
    reason: Type.String(),
    overrideId: Type.Union([Type.String(), Type.Null()]),
    record: OverrideRecord,
    recordedAt: Instant(),
  },
  { title: "AuditedOverride", description: "A resolved override, kept beside the decision it resolves (an override never replaces it)." },
);
export type AuditedOverride = Static<typeof AuditedOverride>;

/** An execution confirmation, kept beside the decision it confirms. */
export const AuditedConfirmation = Closed(
  { executionId: Type.String(), match: Type.Boolean(), proof: ExecutionProof, recordedAt: Instant() },
  {
    title: "AuditedConfirmation",
    description:
      "An execution confirmation, kept beside the decision it confirms; `proof` is the signed Execution Integrity Proof as an object.",
  },
);
export type AuditedConfirmation = Static<typeof AuditedConfirmation>;

/**
 * `GET /audit/decisions/{executionId}` path parameters. An executionId is what `POST /evaluate` takes (1 to 1,024
 * characters): no decision is stored under any other.
 */
export const DecisionParams = Closed({
  executionId: Text("The decision's executionId: 1 to 1,024 characters, as `POST /evaluate` takes it."),
});
export type DecisionParams = Static<typeof DecisionParams>;

/** `GET /audit/decisions/:executionId`: the decision with its override and confirmation beside it (spec 1.8). */
export const DecisionDetail = Closed(
  {
    ...DecisionRow.properties,
    attestation: Attestation,
    signalProvenance: Type.Union([JsonObject, Type.Null()]),
    override: Type.Union([AuditedOverride, Type.Null()]),
    confirmation: Type.Union([AuditedConfirmation, Type.Null()]),
  },
  { title: "DecisionDetail", description: "A decision with its override and confirmation beside it; `attestation` exactly as signed." },
);
export type DecisionDetail = Static<typeof DecisionDetail>;

const counter = Type.String({ pattern: "^[0-9]+$" });

/** `GET /audit/stats`: every value a decimal string (spec 2.11). */
export const AuditStats = Closed(
  {
    total_decisions: counter,
    decisions_today: counter,
    total_verifications: counter,
    valid_verifications: counter,
    invalid_verifications: counter,
    total_security_events: counter,
    total_api_calls: counter,
  },
  { title: "AuditStats", description: "Every value a decimal string." },
);
export type AuditStats = Static<typeof AuditStats>;

export const SecurityEventType = Choice(["authentication_failed", "invalid_verification", "replay_attempt", "rate_limited"], {
  title: "SecurityEventType",
});
export type SecurityEventType = Static<typeof SecurityEventType>;

/** An element of `GET /audit/security`, newest first. Never holds a key, token or request body. */
export const SecurityEventRow = Closed(
  {
    id: Type.String({ description: "`<ms>-<ordinal>`: unique and time-ordered." }),
    at: Instant(),
    type: SecurityEventType,
    method: Type.String(),
    path: Type.String({ description: "The path without its query string." }),
    ip: Type.String(),
    detail: Type.String({ description: "A short description written by the service." }),
    executionId: Type.Optional(Type.String()),
    count: Type.Optional(
      Type.Integer({
        description:
          'Present on an aggregated row: how many events of this type from this source (ip) the row stands for, all within one aggregation interval that ended at `at` (docs/audit.md, "Security events under a flood").',
      }),
    ),
  },
  {
    title: "SecurityEventRow",
    description: "An element of `GET /audit/security`, newest first. Never holds a key, token or request body.",
  },
);
export type SecurityEventRow = Static<typeof SecurityEventRow>;

/** `GET /audit/decisions`. */
export const DecisionList = List(DecisionRow, { title: "DecisionList", description: "Decisions, newest first." });
/** `GET /audit/security`. */
export const SecurityEventList = List(SecurityEventRow, { title: "SecurityEventList", description: "Security events, newest first." });
