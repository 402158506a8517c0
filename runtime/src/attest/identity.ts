import pkg from "../../package.json";
import { MANIFEST_VERSION, SCHEMA_VERSION } from "../bundle/format.js";
import { canonicalJson } from "../canonical/jcs.js";
import { sha256Hex } from "../canonical/digest.js";
import { IR_VERSION } from "../ir/types.js";
import { PAYLOAD_TYPES } from "../signing/payload-types.js";
import { signObject } from "../signing/sign.js";
import type { Signer } from "./trust-root.js";

/** The provenance version every attestation carries (spec 2.2). */
export const PROVENANCE_VERSION = "SERVICE_PROVENANCE_V1" as const;
export const RUNTIME_VERSION: string = pkg.version;
export const SUPPORTED_SCHEMA_VERSIONS: readonly string[] = [SCHEMA_VERSION];
export const CAPABILITIES: readonly string[] = [
  "ed25519-signing",
  "execution-integrity-proof",
  "human-override",
  "replay-protection",
  "signal-validation",
];
/** Names the evaluation semantics (docs/language.md "Evaluation"); changes whenever a decision could. */
export const EVALUATOR_SEMANTICS = "writ.evaluator/first-match/kleene/v1";

/**
 * What the runtime is, as data. `runtimeHash` is SHA-256 over its JCS form, so two runtimes share a hash
 * exactly when they would read the same bundles and decide the same way.
 */
export function runtimeDefinition(): Record<string, unknown> {
  return {
    runtimeVersion: RUNTIME_VERSION,
    irVersion: IR_VERSION,
    bundleManifestVersion: MANIFEST_VERSION,
    supported_schemaVersions: [...SUPPORTED_SCHEMA_VERSIONS],
    capabilities: [...CAPABILITIES],
    evaluatorSemantics: EVALUATOR_SEMANTICS,
    provenanceVersion: PROVENANCE_VERSION,
  };
}

export const RUNTIME_HASH: string = sha256Hex(canonicalJson(runtimeDefinition()));
/** SHA-256 of the evaluation semantics alone: `evaluatorSemanticHash` in the legacy attestation. */
export const EVALUATOR_SEMANTIC_HASH: string = sha256Hex(canonicalJson({ irVersion: IR_VERSION, semantics: EVALUATOR_SEMANTICS }));

/** The library form of the runtime manifest (spec 2.11), signed in its own domain (spec 2.2). */
export interface RuntimeManifest {
  readonly runtimeVersion: string;
  readonly runtimeHash: string;
  readonly supported_schemaVersions: readonly string[];
  readonly capabilities: readonly string[];
  readonly trustRootVersion: string;
  readonly signerKeyId: string;
  readonly signature: string;
}

/** A runtime as it presents itself: its signed manifest and the manifest's hash, fixed at start-up. */
export interface RuntimeIdentity {
  readonly manifest: RuntimeManifest;
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
  const manifest: RuntimeManifest = { ...unsigned, signature: signObject(PAYLOAD_TYPES.runtimeManifest, unsigned, signer.key) };
  return { manifest, manifestHash: sha256Hex(canonicalJson(manifest)) };
}
