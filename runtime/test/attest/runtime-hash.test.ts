/**
 * Runtime upgrades (docs/attestations.md, "Runtime upgrades"): `runtimeHash` names the decision semantics, not the
 * release, so an attestation of an earlier release that decides the same way verifies with default options, and one of
 * a runtime with other semantics does not, unless the verifier's trust root (or its explicit options) accepts it.
 */
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { describe, expect, it } from "vitest";
import {
  CAPABILITIES,
  KeyError,
  PAYLOAD_TYPES,
  RUNTIME_HASH,
  RUNTIME_VERSION,
  SUPPORTED_SCHEMA_VERSIONS,
  createAttestation,
  createLegacyAttestation,
  createRuntimeIdentity,
  createSigner,
  createTrustRoot,
  releaseManifestHash,
  runtimeDefinition,
  runtimeHashOf,
  signObject,
  toEndpointVerification,
  trustRootFromDocument,
  verifyAttestation,
  type Attestation,
  type RuntimeDefinition,
} from "../../src/index.js";
import { TRANSFER_MANIFEST } from "../support/manifest.js";
import { TEST_SEED_1, keyFromSeed } from "../support/signer.js";

const key = keyFromSeed(TEST_SEED_1);
const trustRoot = createTrustRoot("tr-1", [key.publicKey]);
const signer = createSigner(key, trustRoot);
const runtime = createRuntimeIdentity(signer);
const bundle = TRANSFER_MANIFEST;
const decision = {
  executionId: "exec-7",
  bundle,
  binding: ["amount"],
  signals: { amount: 250 },
  verdict: "approve",
  reason: "verified customer",
  issuedAt: "2026-11-22T03:00:00.000Z",
} as const;

const OTHER_SEMANTICS = runtimeHashOf({ ...runtimeDefinition(), evaluatorSemantics: "writ.evaluator/first-match/kleene/v2" });

/** The attestation as another release would sign it: its runtimeVersion and runtimeHash (the legacy release hash too). */
function fromRelease(att: Attestation, runtimeVersion: string, runtimeHash: string): Record<string, unknown> {
  const { signature: _signature, ...body } = { ...att, runtimeVersion, runtimeHash } as Record<string, unknown>;
  if ("releaseManifestHash" in body) body["releaseManifestHash"] = releaseManifestHash(runtimeHash, String(body["bundleHash"]));
  return { ...body, signature: signObject(PAYLOAD_TYPES.attestation, body, key) };
}

describe("the runtime definition", () => {
  it("holds the decision semantics and nothing else, and runtimeHash is SHA-256 of its JCS form", () => {
    const definition = runtimeDefinition();
    expect(definition).toEqual({
      irVersion: 2,
      bundleManifestVersion: 1,
      evaluatorSemantics: "writ.evaluator/first-match/kleene/exact-decimal/faults/remainder/semver/ip/time/now/zones/v5",
      signalValidationSemantics: "writ.signals/json-schema-draft-07/strict/rfc3339/decimal/nfc/exact-numbers/semver/ip/v3",
      provenanceVersion: "SERVICE_PROVENANCE_V1",
    });
    const independent = createHash("sha256").update(canonicalize(definition)!).digest("hex");
    expect(RUNTIME_HASH).toBe(independent);
    expect(runtime.manifest.runtimeHash).toBe(RUNTIME_HASH);
  });

  it("leaves out the release: its version, capabilities and schema versions", () => {
    const text = JSON.stringify(runtimeDefinition());
    expect(text).not.toContain(RUNTIME_VERSION);
    for (const c of CAPABILITIES) expect(text).not.toContain(c);
    for (const s of SUPPORTED_SCHEMA_VERSIONS) expect(text).not.toContain(`"${s}"`);
  });

  it("changes the hash with every member: each names something a decision depends on", () => {
    const base = runtimeDefinition();
    const changed: RuntimeDefinition[] = [
      { ...base, irVersion: 3 },
      { ...base, bundleManifestVersion: 2 },
      { ...base, evaluatorSemantics: "writ.evaluator/first-match/kleene/v3" },
      { ...base, signalValidationSemantics: "writ.signals/json-schema-draft-07/strict/rfc3339/v3" },
      { ...base, provenanceVersion: "SERVICE_PROVENANCE_V2" },
    ];
    const hashes = new Set([RUNTIME_HASH, ...changed.map(runtimeHashOf)]);
    expect(hashes.size).toBe(changed.length + 1);
  });
});

describe.each([
  ["variant 1", () => createAttestation(decision, signer, runtime)],
  ["variant 2 (legacy)", () => createLegacyAttestation(decision, signer, runtime)],
])("%s with default options", (_name, make) => {
  it("verifies an earlier or later release with the same semantics", () => {
    for (const version of ["0.0.9", "0.1.1", "0.2.0"]) {
      const v = verifyAttestation(fromRelease(make(), version, RUNTIME_HASH), { trustRoot });
      expect(v.errors, version).toEqual([]);
      expect(v.valid, version).toBe(true);
    }
  });

  it("refuses a runtime whose semantics differ: the runtime check fails, as undetermined", () => {
    const v = verifyAttestation(fromRelease(make(), "1.0.0", OTHER_SEMANTICS), { trustRoot });
    expect(v.valid).toBe(false);
    expect(v.checks.runtime_verified).toBe(false);
    expect(v.checks.signature_verified).toBe(true);
    expect(v.errors).toContain(`runtime \`1.0.0\` (\`${OTHER_SEMANTICS}\`) is not an accepted runtime`);
    expect(v.undetermined).toEqual(["runtime"]);
    expect(toEndpointVerification(v).checks.runtime).toBe("unknown");
  });

  it("refuses a runtimeVersion that is not semver, as failed (a broken record, not an unknown runtime)", () => {
    const v = verifyAttestation(fromRelease(make(), "release-7", RUNTIME_HASH), { trustRoot });
    expect(v.checks.runtime_verified).toBe(false);
    expect(v.errors).toContain("runtime version `release-7` is not semver");
    expect(toEndpointVerification(v).checks.runtime).toBe("failed");
  });
});

describe("a trust root that accepts other runtimes", () => {
  const document = { trustRootVersion: "tr-1", keys: [key.publicKey.pem], acceptedRuntimeHashes: [OTHER_SEMANTICS] };
  const older = fromRelease(createAttestation(decision, signer, runtime), "1.0.0", OTHER_SEMANTICS);
  const own = createAttestation(decision, signer, runtime);

  it("accepts them without options, besides this runtime's own", () => {
    const pinned = trustRootFromDocument(document);
    expect(pinned.acceptedRuntimeHashes).toEqual([OTHER_SEMANTICS]);
    expect(verifyAttestation(older, { trustRoot: pinned }).valid).toBe(true);
    expect(verifyAttestation(own, { trustRoot: pinned }).valid).toBe(true);
  });

  it("is overridden by the verifier's explicit acceptedRuntimeHashes", () => {
    const pinned = trustRootFromDocument(document);
    const v = verifyAttestation(older, { trustRoot: pinned, acceptedRuntimeHashes: [RUNTIME_HASH] });
    expect(v.checks.runtime_verified).toBe(false);
    expect(verifyAttestation(own, { trustRoot: pinned, acceptedRuntimeHashes: [OTHER_SEMANTICS] }).checks.runtime_verified).toBe(false);
  });

  it("accepts nothing more when the document lists none", () => {
    const pinned = trustRootFromDocument({ trustRootVersion: "tr-1", keys: [key.publicKey.pem] });
    expect(pinned.acceptedRuntimeHashes).toEqual([]);
    expect(verifyAttestation(older, { trustRoot: pinned }).checks.runtime_verified).toBe(false);
  });

  it.each([
    ["a string", OTHER_SEMANTICS, "trust root `acceptedRuntimeHashes` must be a list of runtime hashes (64 lowercase hex digits)"],
    ["a number in the list", [OTHER_SEMANTICS, 7], "trust root accepted runtime hash 1 is not a string"],
    [
      "upper-case hex",
      [OTHER_SEMANTICS.toUpperCase()],
      `accepted runtime hash \`${OTHER_SEMANTICS.toUpperCase()}\` is not a runtimeHash (64 lowercase hex digits)`,
    ],
    [
      "63 digits",
      [OTHER_SEMANTICS.slice(1)],
      `accepted runtime hash \`${OTHER_SEMANTICS.slice(1)}\` is not a runtimeHash (64 lowercase hex digits)`,
    ],
    ["a version", ["0.1.0"], "accepted runtime hash `0.1.0` is not a runtimeHash (64 lowercase hex digits)"],
    [
      "a hash listed twice",
      [OTHER_SEMANTICS, OTHER_SEMANTICS],
      `accepted runtime hash \`${OTHER_SEMANTICS}\` is listed twice in the trust root`,
    ],
  ])("refuses `acceptedRuntimeHashes` holding %s", (_what, acceptedRuntimeHashes, message) => {
    const load = () => trustRootFromDocument({ ...document, acceptedRuntimeHashes });
    expect(load).toThrow(KeyError);
    expect(load).toThrow(message);
  });
});
