/**
 * The attestation (spec 2.2): the signed authorization record, stored and passed on exactly as returned. Variant 1
 * comes from `POST /evaluate`, variant 2 from the legacy `POST /execute`. The signature covers
 * PAE(`PAYLOAD_TYPES.attestation`, JCS(attestation without `signature`)) (docs/attestations.md, docs/signing.md).
 */
import { Type } from "typebox";
import { ExecutionState, Verdict } from "./common.js";
import { PROVENANCE_VERSION } from "./constants.js";
import { Closed, Hex64, Instant, OpenObject, type Static } from "./schema.js";

/** The decided outcome; `action` is the verdict. */
export const Outcome = Closed(
  {
    action: Verdict,
    requires_override: Type.Boolean({ description: "True only for `escalate`." }),
    reason: Type.String(),
  },
  { title: "Outcome", description: "The decided outcome; `action` is the verdict." },
);
export type Outcome = Static<typeof Outcome>;

/** What both variants carry at the top level. `actionType`, `actionBinding` and `issuedAt` are writ's additions. */
const AttestationCommon = Closed({
  executionId: Type.String(),
  execution_fingerprint: Hex64("The key of replay protection and override lineage."),
  policyId: Type.String(),
  policyVersion: Type.String(),
  schemaVersion: Type.String(),
  runtimeVersion: Type.String(),
  runtimeHash: Type.String(),
  actionType: Type.String({ description: "The action the policy governs." }),
  actionBinding: OpenObject({
    description: "The bound signals' authorized values, which the executed action must echo (confirm-execution).",
  }),
  issuedAt: Instant("The instant of the decision."),
  signalsHash: Hex64("Fingerprint of the verified signals: lowercase hex SHA-256 of their JCS form."),
  execution_state: ExecutionState,
  signature: Type.String({
    description: "Base64 Ed25519 over PAE(`application/vnd.writ.attestation.v1+json`, JCS(attestation without `signature`)).",
  }),
});

/** Spec 2.2 variant 1, returned by `POST /evaluate`: outcome and provenance nested. */
export const AttestationV1 = Closed(
  {
    ...AttestationCommon.properties,
    decision: Closed({ status: Type.Literal("decided"), outcome: Outcome }),
    provenance: Closed({
      provenanceVersion: Type.Literal(PROVENANCE_VERSION),
      bundleHash: Type.String(),
      manifestHash: Type.String(),
      trustRootVersion: Type.String(),
      signerKeyId: Type.String(),
    }),
  },
  { title: "AttestationV1", description: "The attestation of `POST /evaluate` (variant 1): outcome and provenance nested." },
);
export type AttestationV1 = Static<typeof AttestationV1>;

/** Spec 2.2 variant 2, the legacy `POST /execute` shape: provenance flat, `decision` holding the outcome. */
export const AttestationV2 = Closed(
  {
    ...AttestationCommon.properties,
    decision: Outcome,
    bundleHash: Type.String(),
    manifestHash: Type.String(),
    manifestSignature: Type.String(),
    trustRootVersion: Type.String(),
    signerKeyId: Type.String(),
    evaluatorHash: Type.String(),
    evaluatorSemanticHash: Type.String(),
    evaluatorArtifactHash: Type.String(),
    releaseManifestHash: Type.String(),
  },
  {
    title: "AttestationV2",
    description: "The attestation of the legacy `POST /execute` (variant 2): provenance flat, `decision` holding the outcome.",
  },
);
export type AttestationV2 = Static<typeof AttestationV2>;

/** Either variant: what `POST /verify`, `POST /confirm-execution` and the audit trail take. */
export const Attestation = Type.Union([AttestationV1, AttestationV2], {
  title: "Attestation",
  description: "An attestation of either variant.",
});
export type Attestation = Static<typeof Attestation>;

/**
 * An attestation a caller sends back (`POST /verify`, `POST /confirm-execution`): typed as an attestation, checked
 * only as an object, since its content is what verification judges (a changed one is `valid: false`, not a 400).
 */
export const AttestationInput = Type.Unsafe<Attestation>(
  OpenObject({
    title: "AttestationInput",
    description:
      "An attestation of either variant (`AttestationV1`, `AttestationV2`), exactly as returned. It is checked here only as a JSON object: its content is what verification judges.",
  }),
);

/** `attestationPreview` of `POST /simulate`: the variant 1 attestation that would be signed, without a signature. */
const { signature: _signature, ...unsigned } = AttestationV1.properties;
export const AttestationPreview = Closed(unsigned, {
  title: "AttestationPreview",
  description: "The variant 1 attestation that would be signed, without its signature (and with a placeholder executionId).",
});
export type AttestationPreview = Static<typeof AttestationPreview>;
