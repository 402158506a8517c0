/**
 * The DSSE payloadType of every signed writ object (docs/signing.md). The payloadType is part of the signing
 * input, so a signature made in one domain never verifies in another (e.g. an attestation is never accepted as a
 * runtime manifest).
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
  /** a bundle source's signed index (`index.json`, docs/bundles.md) */
  bundleIndex: "application/vnd.writ.bundle-index.v1+json",
  /** Surface B trust record */
  trustRecord: "application/vnd.writ.trust-record.v1+json",
  /** Surface B receipt */
  receipt: "application/vnd.writ.receipt.v1+json",
  /** audit log checkpoint (docs/audit.md, "Tamper evidence: the audit log") */
  auditCheckpoint: "application/vnd.writ.audit-checkpoint.v1+json",
} as const;

export type PayloadType = (typeof PAYLOAD_TYPES)[keyof typeof PAYLOAD_TYPES];
