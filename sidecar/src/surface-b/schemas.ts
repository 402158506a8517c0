/**
 * Request bodies of Surface B (spec 2.13, 4.2), closed like Surface A's: a member the spec does not name is a 400.
 * Signals are checked here only as an object; their content is the policy's schema's business (422).
 *
 * `POST /execute` takes the whole Business Transaction: every section and every member the spec names, timestamps
 * in ISO 8601 (RFC 3339 with a time zone, a date that exists: checked by `withTimestamps`, timestamps.ts, after the
 * schema). `POST /transactions` is the weaker form the spec allows: any storable id, sections optional and open,
 * `status` and `createdAt` kept as given; only what execution needs (`policy`, `signals`) is required.
 */
import { RECORD_ID_PATTERN } from "./ids.js";
import { TIMESTAMP as timestamp } from "./timestamps.js";

const text = { type: "string", minLength: 1, maxLength: 1024 } as const;

function section(members: Readonly<Record<string, object>>): object {
  return { type: "object", required: Object.keys(members), properties: members, additionalProperties: false };
}

const policy = section({ name: text, version: text });
const signals = { type: "object" } as const;

/** `POST /execute`; `businessTransactionId` has been checked as a UUID before this runs. */
export const executeBody = {
  type: "object",
  required: ["businessTransactionId", "metadata", "authority", "authorization", "intent", "policy", "signals"],
  properties: {
    businessTransactionId: { type: "string" },
    metadata: section({ businessTransactionId: text, correlationId: text, createdBy: text, createdAt: timestamp }),
    authority: section({ authorityId: text, authorityType: text, principalId: text, displayName: text, issuedAt: timestamp }),
    authorization: section({ authorizationId: text, authorityId: text, purpose: text, authorizedAt: timestamp }),
    intent: section({ intentId: text, authorizationId: text, action: text, resource: text, issuedAt: timestamp }),
    policy,
    signals,
    // Whatever the client sends is replaced (spec 3: `RECEIVED` and the current time), so any value is accepted.
    status: {},
    createdAt: {},
  },
  additionalProperties: false,
} as const;

const openSection = { type: "object" } as const;

/** `POST /transactions`: the body is used as given. */
export const transactionBody = {
  type: "object",
  required: ["businessTransactionId", "policy", "signals"],
  properties: {
    businessTransactionId: { type: "string", pattern: RECORD_ID_PATTERN },
    metadata: openSection,
    authority: openSection,
    authorization: openSection,
    intent: openSection,
    policy,
    signals,
    status: { type: "string", minLength: 1, maxLength: 64 },
    createdAt: { type: "string", minLength: 1, maxLength: 64 },
  },
  additionalProperties: false,
} as const;

/** `POST /verify`, `POST /receipt`, `POST /replay`. */
export const recordRefBody = {
  type: "object",
  required: ["businessTransactionId"],
  properties: { businessTransactionId: text },
  additionalProperties: false,
} as const;

/** `POST /policies/validate`. */
export const policyRefBody = {
  type: "object",
  required: ["policyId", "policyVersion"],
  properties: { policyId: text, policyVersion: text },
  additionalProperties: false,
} as const;
