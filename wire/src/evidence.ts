/**
 * The other signed objects on the wire: the override record (spec 2.8), the Execution Integrity Proof (spec 2.9)
 * and the runtime manifest (spec 2.11). Each is signed in its own domain (`PAYLOAD_TYPES`).
 */
import { Type } from "typebox";
import { Verdict } from "./common.js";
import { Closed, Hex64, Instant, List, OpenObject, type Static } from "./schema.js";

/** The override record of `POST /override`: signed when the service has a signing key, else carrying a digest. */
export const OverrideRecord = Closed(
  {
    overrideId: Type.String(),
    executionId: Type.String(),
    execution_fingerprint: Type.String(),
    approved: Type.Boolean(),
    approved_by: Type.String(),
    approver_role: Type.String(),
    reason: Type.String(),
    decidedAt: Instant(),
    attestationHash: Hex64("SHA-256 of the JCS form of the original signed attestation: the decision this record resolves."),
    signature: Type.Optional(Type.String({ description: "Base64 Ed25519 in the override domain." })),
    digest: Type.Optional(
      Type.String({ description: "SHA-256 digest, when the record was made without a signing key (nothing authenticates it)." }),
    ),
  },
  { title: "OverrideRecord", description: "The override record: signed when the service has a signing key, else carrying a digest." },
);
export type OverrideRecord = Static<typeof OverrideRecord>;

/** The library form of an executed action (spec 2.9), as the proof carries it. */
export const ExecutedAction = Closed(
  {
    type: Type.String(),
    payload: OpenObject(),
    executedAt: Type.String({ description: "ISO 8601." }),
    executedBy: Type.Optional(Type.String()),
    actionId: Type.Optional(
      Type.String({ description: "The executing system's own identifier of the action (`executedAction.actionId` of the endpoint form)." }),
    ),
  },
  { title: "ExecutedAction", description: "The executed action as the proof carries it." },
);
export type ExecutedAction = Static<typeof ExecutedAction>;

/** Spec 2.9: `match` is true only when the first three are all true. */
export const MatchDetails = Closed(
  {
    actionTypeMatch: Type.Boolean(),
    payloadConsistent: Type.Boolean(),
    withinTimeWindow: Type.Boolean(),
    timeWindowSeconds: Type.Number(),
    executionAuthorized: Type.Boolean({
      description: "writ's addition: the attestation authorized execution (an approval, or an escalation whose override was approved).",
    }),
  },
  { title: "MatchDetails", description: "`match` is true only when the first three are all true." },
);
export type MatchDetails = Static<typeof MatchDetails>;

/**
 * The Execution Integrity Proof (spec 2.9). `POST /confirm-execution` answers it as a string (its canonical JSON
 * text); the audit trail's `confirmation.proof` holds it as an object.
 */
export const ExecutionProof = Closed(
  {
    executionId: Type.String(),
    authorizationId: Hex64("SHA-256 of the JCS form of the whole signed attestation: names the authorization confirmed."),
    integrityHash: Hex64("SHA-256 of JCS(`{authorizationId, executed}`): binds what ran to what was authorized."),
    authorized: Closed({
      action: Verdict,
      actionType: Type.String(),
      reason: Type.String(),
      policyId: Type.String(),
      policyVersion: Type.String(),
    }),
    executed: ExecutedAction,
    match: Type.Boolean(),
    matchDetails: MatchDetails,
    confirmedAt: Instant(),
    verified: Type.Literal(true),
    signature: Type.String(),
  },
  {
    title: "ExecutionProof",
    description:
      "The Execution Integrity Proof. `POST /confirm-execution` answers it as a string (its canonical JSON text); the audit trail's `confirmation.proof` holds it as an object.",
  },
);
export type ExecutionProof = Static<typeof ExecutionProof>;

/** The signed runtime manifest (spec 2.11's library form), whose hash attestations name as `manifestHash`. */
export const SignedRuntimeManifest = Closed(
  {
    runtimeVersion: Type.String(),
    runtimeHash: Type.String({ description: "SHA-256 of the runtime definition." }),
    supported_schemaVersions: List(Type.String()),
    capabilities: List(Type.String()),
    trustRootVersion: Type.String(),
    signerKeyId: Type.String(),
    signature: Type.String(),
  },
  { title: "SignedRuntimeManifest", description: "The signed runtime manifest, whose hash attestations name as `manifestHash`." },
);
export type SignedRuntimeManifest = Static<typeof SignedRuntimeManifest>;
