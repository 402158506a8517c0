/**
 * INVARIANT (the body text is JCS): the signer writes an attestation body's canonical text without the generic
 * walk, reusing the text of its constant members. Whatever the values, it must equal `canonicalJson(body)`, which is
 * what every verifier recomputes; otherwise attestations would fail verification outside writ.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { attestationBodyText, signedAttestationText } from "../../src/attest/attestation-text.js";
import { CanonicalizationError, attestationBody, buildManifest, canonicalJson, type DecisionRecord } from "../../src/index.js";

const utf8 = new TextEncoder();
const files = new Map([["policy.writ", utf8.encode("source")]]);
// Strings with what JCS escapes or orders specially: quotes, backslashes, controls, non-ASCII and astral characters.
const text = fc.string({ unit: "binary", maxLength: 12 });
const scalar = fc.oneof(text, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.boolean(), fc.constant(null));

const record = fc.record({
  policyId: text,
  version: text,
  governs: text,
  executionId: text,
  signals: fc.dictionary(text, scalar, { maxKeys: 6 }),
  binding: fc.array(text, { maxLength: 4 }),
  verdict: fc.constantFrom("approve", "escalate", "reject") as fc.Arbitrary<DecisionRecord["verdict"]>,
  reason: text,
  issuedAt: text,
  trustRootVersion: text,
  signerKeyId: text,
  manifestHash: text,
});

type Generated = typeof record extends fc.Arbitrary<infer T> ? T : never;

function bodyOf(r: Generated) {
  const bundle = buildManifest(
    { policyId: r.policyId, version: r.version, governs: r.governs, compiler: { name: "writ", version: "0.1.0" } },
    files,
  );
  const d: DecisionRecord = { ...r, bundle };
  return attestationBody(d, r.trustRootVersion, r.signerKeyId, r.manifestHash);
}

describe("attestationBodyText", () => {
  it("equals canonicalJson of the body for arbitrary values", () => {
    fc.assert(
      fc.property(record, (r) => {
        const body = bodyOf(r);
        expect(attestationBodyText(body)).toBe(canonicalJson(body));
      }),
      { numRuns: 2000 },
    );
  });

  it("with the signature added (signedAttestationText), equals canonicalJson of the signed attestation", () => {
    const signature = fc.uint8Array({ minLength: 64, maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString("base64"));
    fc.assert(
      fc.property(record, signature, (r, sig) => {
        const body = bodyOf(r);
        const signed = signedAttestationText(attestationBodyText(body), sig);
        expect(signed).toBe(canonicalJson({ ...body, signature: sig }));
        // As data, through JSON: JCS writes -0 as 0, as JSON.stringify does.
        expect(JSON.parse(signed)).toEqual(JSON.parse(JSON.stringify({ ...body, signature: sig })));
      }),
      { numRuns: 500 },
    );
  });

  it("does not reuse a bundle's constant text for a body whose constants differ", () => {
    // Two bodies under one bundle hash (the cache key) with every constant member changed in turn.
    const base = bodyOf({
      policyId: "p",
      version: "1.0.0",
      governs: "a",
      executionId: "e",
      signals: {},
      binding: [],
      verdict: "approve",
      reason: "r",
      issuedAt: "t",
      trustRootVersion: "tr",
      signerKeyId: "k",
      manifestHash: "m",
    });
    expect(attestationBodyText(base)).toBe(canonicalJson(base));
    const variants = [
      { ...base, policyId: "q" },
      { ...base, policyVersion: "2.0.0" },
      { ...base, schemaVersion: "9" },
      { ...base, runtimeVersion: "9" },
      { ...base, runtimeHash: "9" },
      ...(["provenanceVersion", "manifestHash", "trustRootVersion", "signerKeyId"] as const).map((member) => ({
        ...base,
        provenance: { ...base.provenance, [member]: "changed" },
      })),
    ];
    for (const body of variants) {
      expect(attestationBodyText(body as typeof base)).toBe(canonicalJson(body));
      expect(attestationBodyText(base)).toBe(canonicalJson(base));
    }
  });

  it("refuses a body with a member it would not write, or a value JCS refuses", () => {
    const base = bodyOf({
      policyId: "p",
      version: "1.0.0",
      governs: "a",
      executionId: "e",
      signals: {},
      binding: [],
      verdict: "approve",
      reason: "r",
      issuedAt: "t",
      trustRootVersion: "tr",
      signerKeyId: "k",
      manifestHash: "m",
    });
    const bad: unknown[] = [
      { ...base, extra: 1 },
      { ...base, provenance: { ...base.provenance, extra: 1 } },
      { ...base, decision: { ...base.decision, extra: 1 } },
      { ...base, decision: { ...base.decision, outcome: { ...base.decision.outcome, extra: 1 } } },
      { ...base, decision: { ...base.decision, outcome: { ...base.decision.outcome, reason: "\ud800" } } },
      { ...base, executionId: undefined },
    ];
    for (const body of bad) expect(() => attestationBodyText(body as typeof base)).toThrow(CanonicalizationError);
  });
});
