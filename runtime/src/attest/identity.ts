import { PROVENANCE_VERSION } from "@writ/wire/constants";
import type { SignedRuntimeManifest } from "@writ/wire/types";
import pkg from "../../package.json";
import { MANIFEST_VERSION, SCHEMA_VERSION } from "../bundle/format.js";
import { canonicalJson } from "../canonical/jcs.js";
import { sha256Hex } from "../canonical/digest.js";
import { IR_VERSION } from "../ir/types.js";
import { PAYLOAD_TYPES } from "../signing/payload-types.js";
import { signObject } from "../signing/sign.js";
import type { Signer } from "./trust-root.js";

/** The provenance version every attestation carries (spec 2.2): one of the wire format's fixed strings. */
export { PROVENANCE_VERSION };
/** The package version: named in attestations and manifests, not part of `runtimeHash`. */
export const RUNTIME_VERSION: string = pkg.version;
/** Schema versions this release reads; a minor release may add one. Checked per attestation (`schemaVersion`). */
export const SUPPORTED_SCHEMA_VERSIONS: readonly string[] = [SCHEMA_VERSION];
/** What this release offers, advertised in its manifest; a minor release may add one. Not part of `runtimeHash`. */
export const CAPABILITIES: readonly string[] = [
  "ed25519-signing",
  "execution-integrity-proof",
  "human-override",
  "replay-protection",
  "signal-validation",
];
/** Names the evaluation semantics (docs/language.md "Evaluation"); changes whenever a decision could. */
export const EVALUATOR_SEMANTICS = "writ.evaluator/first-match/kleene/exact-decimal/faults/remainder/semver/ip/time/now/zones/v5";
/**
 * Names how signals are validated before evaluation (signals/validate.ts): the signals schema as JSON Schema draft-07
 * without coercion, defaults or removal of members, patterns with the `u` flag, `date-time` as writ's RFC 3339
 * timestamps, `decimal(S)`, `nfc`, `semver` and `ip` formats, numbers a double does not carry refused. Changes whenever the same signals
 * could pass where they failed, or fail where they passed.
 */
export const SIGNAL_VALIDATION_SEMANTICS = "writ.signals/json-schema-draft-07/strict/rfc3339/decimal/nfc/exact-numbers/semver/ip/v3";

/**
 * The runtime definition: what decides how a bundle is read and a decision made and attested, and nothing else.
 *
 * INVARIANT (runtimeHash changes exactly when a decision could): `runtimeHash` is SHA-256 over the JCS form of this
 * definition, so two releases share it exactly when they read the same bundles, validate the same signals, decide
 * the same way and attest in the same form. The package version is not in it, nor are the capabilities or the
 * supported schema versions, which a minor release may extend without changing any decision (an attestation's
 * schema version is checked on its own). A release that changes any of the meanings below changes its constant, and
 * so the hash; docs/attestations.md ("Runtime upgrades") says what each kind of release may change.
 * runtime/test/attest/runtime-hash.test.ts checks that the hash follows each member and nothing else.
 */
export interface RuntimeDefinition {
  /** The meaning of `policy.ir.json` (ir/types.ts). */
  readonly irVersion: number;
  /** The meaning of `bundle.manifest.json` (bundle/format.ts). */
  readonly bundleManifestVersion: number;
  readonly evaluatorSemantics: string;
  readonly signalValidationSemantics: string;
  /** The form in which decisions are attested. */
  readonly provenanceVersion: string;
}

export function runtimeDefinition(): RuntimeDefinition {
  return {
    irVersion: IR_VERSION,
    bundleManifestVersion: MANIFEST_VERSION,
    evaluatorSemantics: EVALUATOR_SEMANTICS,
    signalValidationSemantics: SIGNAL_VALIDATION_SEMANTICS,
    provenanceVersion: PROVENANCE_VERSION,
  };
}

/** `runtimeHash` of a runtime definition: lowercase hex SHA-256 of its JCS form. */
export function runtimeHashOf(definition: RuntimeDefinition): string {
  return sha256Hex(canonicalJson(definition));
}

export const RUNTIME_HASH: string = runtimeHashOf(runtimeDefinition());
/** SHA-256 of the evaluation semantics alone: `evaluatorSemanticHash` in the legacy attestation. */
export const EVALUATOR_SEMANTIC_HASH: string = sha256Hex(canonicalJson({ irVersion: IR_VERSION, semantics: EVALUATOR_SEMANTICS }));

/** The runtime manifest (spec 2.11), signed in its own domain (spec 2.2). */
export type { SignedRuntimeManifest as RuntimeManifest };

/** A runtime as it presents itself: its signed manifest and the manifest's hash, fixed at start-up. */
export interface RuntimeIdentity {
  readonly manifest: SignedRuntimeManifest;
  /** SHA-256 of the JCS form of the signed manifest (signature included): `provenance.manifestHash`. */
  readonly manifestHash: string;
}

export function createRuntimeIdentity(signer: Signer): RuntimeIdentity {
  const unsigned = {
    runtimeVersion: RUNTIME_VERSION,
    runtimeHash: RUNTIME_HASH,
    supported_schemaVersions: [...SUPPORTED_SCHEMA_VERSIONS],
    capabilities: [...CAPABILITIES],
    trustRootVersion: signer.trustRoot.version,
    signerKeyId: signer.key.keyId,
  };
  const manifest: SignedRuntimeManifest = { ...unsigned, signature: signObject(PAYLOAD_TYPES.runtimeManifest, unsigned, signer.key) };
  return { manifest, manifestHash: sha256Hex(canonicalJson(manifest)) };
}
