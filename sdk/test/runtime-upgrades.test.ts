/**
 * Runtime upgrades from the SDK's side (docs/attestations.md, "Runtime upgrades"), on the published conformance
 * vectors: with default options the SDK accepts an attestation of an earlier release that decides the same way and
 * refuses one of a runtime whose decision semantics changed, unless the pinned trust root document accepts it.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { WritKeyError, verifyAttestation } from "@writ/sdk";

interface UpgradeVector {
  readonly id: string;
  readonly publicKey: string;
  readonly json: string;
  readonly defaultVerification?: { readonly valid: boolean; readonly failedChecks: readonly string[] };
}

const file = JSON.parse(readFileSync(new URL("../../conformance/vectors/attestations.json", import.meta.url), "utf8")) as {
  vectors: UpgradeVector[];
};

function vector(id: string): UpgradeVector {
  const v = file.vectors.find((x) => x.id === id);
  if (v === undefined) throw new Error(`conformance/vectors/attestations.json has no ${id}`);
  return v;
}

const earlier = vector("attestation-v1-earlier-release");
const otherSemantics = vector("attestation-v1-other-semantics");
const otherHash = String((JSON.parse(otherSemantics.json) as Record<string, unknown>)["runtimeHash"]);

describe("the SDK's verifyAttestation with default options", () => {
  it("verifies the attestation of an earlier release with the same semantics", () => {
    const v = verifyAttestation(JSON.parse(earlier.json), earlier.publicKey);
    expect(v).toMatchObject({ valid: true, errors: [] });
    expect(v.valid).toBe(earlier.defaultVerification?.valid);
  });

  it("refuses the attestation of a runtime whose semantics changed, on the runtime check alone", () => {
    const v = verifyAttestation(JSON.parse(otherSemantics.json), otherSemantics.publicKey);
    expect(v.valid).toBe(false);
    expect(v.checks).toMatchObject({ signature_verified: true, runtime_verified: false, schema_compatible: true, governed: true });
    expect(
      Object.entries(v.checks)
        .filter(([, ok]) => !ok)
        .map(([check]) => check),
    ).toEqual(otherSemantics.defaultVerification?.failedChecks);
    expect(v.undetermined).toEqual(["runtime"]);
  });
});

describe("a pinned trust root document listing acceptedRuntimeHashes", () => {
  const document = (acceptedRuntimeHashes: readonly string[]) => ({
    trustRootVersion: "2026-11",
    keys: [otherSemantics.publicKey],
    acceptedRuntimeHashes,
  });

  it("accepts that runtime's decisions without options, and still this runtime's own", () => {
    expect(verifyAttestation(JSON.parse(otherSemantics.json), document([otherHash]))).toMatchObject({ valid: true, errors: [] });
    expect(verifyAttestation(JSON.parse(earlier.json), document([otherHash])).valid).toBe(true);
  });

  it("yields to explicit acceptedRuntimeHashes", () => {
    const ownOnly = String((JSON.parse(earlier.json) as Record<string, unknown>)["runtimeHash"]);
    const v = verifyAttestation(JSON.parse(otherSemantics.json), document([otherHash]), { acceptedRuntimeHashes: [ownOnly] });
    expect(v.checks.runtime_verified).toBe(false);
  });

  it("refuses a malformed list with WritKeyError", () => {
    expect(() => verifyAttestation(JSON.parse(earlier.json), document([otherHash.toUpperCase()]))).toThrow(WritKeyError);
    // A document read from JSON may hold anything: one hash where a list belongs.
    expect(() => verifyAttestation(JSON.parse(earlier.json), document(otherHash as unknown as string[]))).toThrow(
      "trust root `acceptedRuntimeHashes` must be a list",
    );
  });
});
