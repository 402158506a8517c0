import semver from "semver";
import { PAYLOAD_TYPES } from "../signing/payload-types.js";
import type { Ed25519Engine } from "../signing/engine.js";
import { verifyObject } from "../signing/sign.js";
import type { Verdict } from "../ir/types.js";
import type { CheckResult, VerifyResponse } from "@writ/wire/types";
import { VERDICT_STATUS, evaluatorHash, executionFingerprint, releaseManifestHash } from "./attestation.js";
import { EVALUATOR_SEMANTIC_HASH, PROVENANCE_VERSION, RUNTIME_HASH, SUPPORTED_SCHEMA_VERSIONS } from "./identity.js";
import { trustedKey, type TrustRoot } from "./trust-root.js";

/** What a verifier pins. Only the trust root is required: verification is stateless and offline. */
export interface VerifierOptions {
  readonly trustRoot: TrustRoot;
  /**
   * Runtimes whose decisions are accepted, by `runtimeHash` (docs/attestations.md, "Runtime upgrades"). Given, it is
   * the whole list; absent: this runtime's own and those the trust root lists (`acceptedRuntimeHashes`).
   */
  readonly acceptedRuntimeHashes?: readonly string[];
  readonly supportedSchemaVersions?: readonly string[];
  /** Signed runtime manifests known to the verifier, by hash; when absent, only their form is checked. */
  readonly acceptedManifestHashes?: readonly string[];
  /** `policyId@version` to the `bundle_hash` the verifier holds; when absent, only its form is checked. */
  readonly bundleHashes?: ReadonlyMap<string, string>;
  /** Whose curve arithmetic checks signatures (`Ed25519Engine.verify`): node:crypto when absent. */
  readonly engine?: Ed25519Engine;
}

export interface VerificationChecks {
  readonly signature_verified: boolean;
  readonly runtime_verified: boolean;
  readonly schema_compatible: boolean;
  readonly bundle_verified: boolean;
  readonly release_verified: boolean;
  readonly trust_root_verified: boolean;
  readonly evaluator_verified: boolean;
  readonly governed: boolean;
}

/** Spec 2.10, library form: `valid` only when every check passes. */
export interface AttestationVerification {
  readonly valid: boolean;
  readonly checks: VerificationChecks;
  readonly warnings: readonly string[];
  readonly errors: readonly string[];
  /**
   * writ's addition: checks that failed only because the verifier lacks what it would need (a signer key it
   * does not pin, a runtime it does not accept). The endpoint form answers `unknown` for these.
   */
  readonly undetermined: readonly ("signature" | "runtime")[];
}

/** Spec 2.10, endpoint form: EndpointVerification, each check a CheckResult. */
export type { CheckResult, VerifyResponse as EndpointVerification };

const HEX64 = /^[0-9a-f]{64}$/;
const VERDICTS: readonly string[] = ["approve", "escalate", "reject"];

/** The fields verification reads, whichever of the two shapes carried them. */
interface View {
  readonly legacy: boolean;
  readonly executionId: string;
  readonly fingerprint: string;
  readonly policyId: string;
  readonly policyVersion: string;
  readonly schemaVersion: string;
  readonly runtimeVersion: string;
  readonly runtimeHash: string;
  readonly actionType: string;
  readonly issuedAt: string;
  readonly outcome: { readonly action: string; readonly requires_override: unknown; readonly reason: unknown };
  readonly decisionStatus: unknown;
  readonly executionState: string;
  readonly bundleHash: string;
  readonly manifestHash: string;
  readonly trustRootVersion: string;
  readonly signerKeyId: string;
  readonly provenanceVersion: unknown;
  readonly raw: Record<string, unknown>;
}

const FAILED: VerificationChecks = {
  signature_verified: false,
  runtime_verified: false,
  schema_compatible: false,
  bundle_verified: false,
  release_verified: false,
  trust_root_verified: false,
  evaluator_verified: false,
  governed: false,
};

/**
 * The executionId and verdict (`action`) an attestation states, read as `verifyAttestation` reads them (either shape);
 * null when it is not an object. A field it lacks reads as "". Trust them only once its signature verified.
 */
export function attestedDecision(value: unknown): { readonly executionId: string; readonly action: string } | null {
  const view = readView(value, []);
  return view === null ? null : { executionId: view.executionId, action: view.outcome.action };
}

/**
 * Verifies an attestation of either shape against pinned keys. Every check runs, so the result says all
 * that is wrong at once; nothing here trusts a field before the signature over it has been checked, and
 * the signature is checked only against the trust root's key that `signerKeyId` names.
 */
export function verifyAttestation(value: unknown, options: VerifierOptions): AttestationVerification {
  const errors: string[] = [];
  const warnings: string[] = [];
  const view = readView(value, errors);
  if (!view) return { valid: false, checks: FAILED, warnings, errors, undetermined: [] };

  const key = trustedKey(options.trustRoot, view.signerKeyId);
  if (!key) errors.push(`signer key \`${view.signerKeyId}\` is not in the pinned trust root \`${options.trustRoot.version}\``);
  const signature_verified =
    key !== undefined && verifyObject(PAYLOAD_TYPES.attestation, view.raw, String(view.raw["signature"]), [key], options.engine) !== null;
  if (key && !signature_verified) errors.push("signature does not verify: the attestation was changed, or not signed by this key");

  const trust_root_verified = key !== undefined;
  if (key && view.trustRootVersion !== options.trustRoot.version) {
    warnings.push(`signed under trust root \`${view.trustRootVersion}\`, verified with \`${options.trustRoot.version}\``);
  }

  const runtimeKnown = isAcceptedRuntime(options, view.runtimeHash);
  if (!runtimeKnown) errors.push(`runtime \`${view.runtimeVersion}\` (\`${view.runtimeHash}\`) is not an accepted runtime`);
  const versioned = semver.valid(view.runtimeVersion) !== null;
  if (!versioned) errors.push(`runtime version \`${view.runtimeVersion}\` is not semver`);
  const runtime_verified = runtimeKnown && versioned;

  const schemas = options.supportedSchemaVersions ?? SUPPORTED_SCHEMA_VERSIONS;
  const schema_compatible = schemas.includes(view.schemaVersion);
  if (!schema_compatible) errors.push(`schema version \`${view.schemaVersion}\` is not supported (supported: ${schemas.join(", ")})`);

  const bundle_verified = checkBundle(view, options, errors, warnings);
  const release_verified = checkRelease(view, options, errors, warnings);
  const evaluator_verified = view.legacy ? checkEvaluator(view, errors) : runtime_verified;
  const governed = checkGoverned(view, errors);

  const checks: VerificationChecks = {
    signature_verified,
    runtime_verified,
    schema_compatible,
    bundle_verified,
    release_verified,
    trust_root_verified,
    evaluator_verified,
    governed,
  };
  const undetermined: ("signature" | "runtime")[] = [];
  if (!key) undetermined.push("signature");
  if (!runtimeKnown && versioned) undetermined.push("runtime");
  return { valid: Object.values(checks).every(Boolean), checks, warnings, errors, undetermined };
}

/** Whether `runtimeHash` is accepted: by the verifier's explicit list, or else as this runtime's or the trust root's. */
function isAcceptedRuntime(options: VerifierOptions, runtimeHash: string): boolean {
  if (options.acceptedRuntimeHashes !== undefined) return options.acceptedRuntimeHashes.includes(runtimeHash);
  return runtimeHash === RUNTIME_HASH || (options.trustRoot.acceptedRuntimeHashes?.includes(runtimeHash) ?? false);
}

/** The endpoint form: `unknown` where the verifier lacks what it would need to decide, `failed` otherwise. */
export function toEndpointVerification(v: AttestationVerification): VerifyResponse {
  const c = v.checks;
  const signerUnknown = v.undetermined.includes("signature");
  const runtimeUnknown = v.undetermined.includes("runtime");
  return {
    valid: v.valid,
    checks: {
      signature: c.signature_verified ? "verified" : signerUnknown ? "unknown" : "failed",
      runtime: c.runtime_verified && c.release_verified && c.evaluator_verified ? "verified" : runtimeUnknown ? "unknown" : "failed",
      schema: c.schema_compatible ? "verified" : "failed",
    },
  };
}

function checkBundle(view: View, options: VerifierOptions, errors: string[], warnings: string[]): boolean {
  if (!HEX64.test(view.bundleHash)) {
    errors.push("`bundleHash` is not a SHA-256 hex digest");
    return false;
  }
  const known = options.bundleHashes?.get(`${view.policyId}@${view.policyVersion}`);
  if (known === undefined) {
    warnings.push(`bundle of ${view.policyId}@${view.policyVersion} not compared with a local copy`);
    return true;
  }
  if (known !== view.bundleHash) errors.push(`bundle hash differs from the local bundle of ${view.policyId}@${view.policyVersion}`);
  return known === view.bundleHash;
}

function checkRelease(view: View, options: VerifierOptions, errors: string[], warnings: string[]): boolean {
  let ok = HEX64.test(view.manifestHash);
  if (!ok) errors.push("`manifestHash` is not a SHA-256 hex digest");
  if (!view.legacy && view.provenanceVersion !== PROVENANCE_VERSION) {
    errors.push(`provenance version \`${String(view.provenanceVersion)}\` is not \`${PROVENANCE_VERSION}\``);
    ok = false;
  }
  if (view.legacy && view.raw["releaseManifestHash"] !== releaseManifestHash(view.runtimeHash, view.bundleHash)) {
    errors.push("`releaseManifestHash` does not match the runtime and bundle hashes");
    ok = false;
  }
  if (options.acceptedManifestHashes === undefined) warnings.push("runtime manifest not compared with a known one");
  else if (!options.acceptedManifestHashes.includes(view.manifestHash)) {
    errors.push("`manifestHash` names no accepted runtime manifest");
    ok = false;
  }
  return ok;
}

function checkEvaluator(view: View, errors: string[]): boolean {
  const r = view.raw;
  const artifact = typeof r["evaluatorArtifactHash"] === "string" ? r["evaluatorArtifactHash"] : "";
  const ok =
    HEX64.test(artifact) && r["evaluatorSemanticHash"] === EVALUATOR_SEMANTIC_HASH && r["evaluatorHash"] === evaluatorHash(artifact);
  if (!ok) errors.push("evaluator hashes do not match this runtime's evaluator");
  return ok;
}

/** The decision is internally consistent: a verifier can rely on status, fingerprint and action type. */
function checkGoverned(view: View, errors: string[]): boolean {
  const o = view.outcome;
  const problems: string[] = [];
  if (!VERDICTS.includes(o.action)) problems.push(`outcome action \`${o.action}\` is not approve, escalate or reject`);
  else {
    const expected = VERDICT_STATUS[o.action as Verdict];
    if (o.requires_override !== expected.requiresOverride) problems.push("`requires_override` contradicts the outcome");
    if (view.executionState !== expected.executionState) problems.push("`execution_state` contradicts the outcome");
  }
  if (typeof o.reason !== "string") problems.push("outcome has no reason");
  if (!view.legacy && view.decisionStatus !== "decided") problems.push("`decision.status` is not `decided`");
  if (view.fingerprint !== executionFingerprint(view.executionId))
    problems.push("`execution_fingerprint` is not the fingerprint of `executionId`");
  if (view.actionType === "") problems.push("no governed `actionType`");
  if (Number.isNaN(Date.parse(view.issuedAt))) problems.push("`issuedAt` is not an ISO 8601 instant");
  const binding = view.raw["actionBinding"];
  if (typeof binding !== "object" || binding === null || Array.isArray(binding)) problems.push("`actionBinding` is not an object");
  errors.push(...problems);
  return problems.length === 0;
}

function readView(value: unknown, errors: string[]): View | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    errors.push("attestation is not a JSON object");
    return null;
  }
  const r = value as Record<string, unknown>;
  const legacy = typeof r["provenance"] !== "object" || r["provenance"] === null;
  const p = (legacy ? r : r["provenance"]) as Record<string, unknown>;
  const d = (r["decision"] ?? {}) as Record<string, unknown>;
  const outcome = (legacy ? d : (d["outcome"] ?? {})) as Record<string, unknown>;
  const str = (obj: Record<string, unknown>, name: string, shown = name): string => {
    const v = obj[name];
    if (typeof v !== "string") errors.push(`attestation is missing \`${shown}\` (a string)`);
    return typeof v === "string" ? v : "";
  };
  const view: View = {
    legacy,
    executionId: str(r, "executionId"),
    fingerprint: str(r, "execution_fingerprint"),
    policyId: str(r, "policyId"),
    policyVersion: str(r, "policyVersion"),
    schemaVersion: str(r, "schemaVersion"),
    runtimeVersion: str(r, "runtimeVersion"),
    runtimeHash: str(r, "runtimeHash"),
    actionType: str(r, "actionType"),
    issuedAt: str(r, "issuedAt"),
    outcome: {
      action: str(outcome, "action", "decision outcome action"),
      requires_override: outcome["requires_override"],
      reason: outcome["reason"],
    },
    decisionStatus: d["status"],
    executionState: str(r, "execution_state"),
    bundleHash: str(p, "bundleHash"),
    manifestHash: str(p, "manifestHash"),
    trustRootVersion: str(p, "trustRootVersion"),
    signerKeyId: str(p, "signerKeyId"),
    provenanceVersion: p["provenanceVersion"],
    raw: r,
  };
  if (typeof r["signature"] !== "string") errors.push("attestation is missing `signature` (a string)");
  return errors.length === 0 ? view : null;
}
