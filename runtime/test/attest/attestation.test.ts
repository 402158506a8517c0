/**
 * Attestations from the outside: both shapes verify with pinned keys, with our verifier and with an
 * independent Ed25519 library following docs/signing.md alone; every signed field is covered; the attack
 * vectors below (kept as data) all fail.
 */
import { sign as edSign } from "node:crypto";
import * as ed from "@noble/ed25519";
import canonicalize from "canonicalize";
import { describe, expect, it } from "vitest";
import {
  KeyError,
  PAYLOAD_TYPES,
  RUNTIME_HASH,
  canonicalBytes,
  createAttestation,
  createLegacyAttestation,
  createRuntimeIdentity,
  createSigner,
  createTrustRoot,
  executionFingerprint,
  generateSigningKeyPair,
  loadSigningKeyPem,
  pae,
  parseStrictJson,
  publicKeyFromRaw,
  signObject,
  signalsHash,
  verifyObject,
  toEndpointVerification,
  verifyAttestation,
  type Attestation,
  type DecisionRecord,
  type SigningKey,
} from "../../src/index.js";
import { TRANSFER_MANIFEST } from "../support/manifest.js";
import { TEST_SEED_1, TEST_SEED_2, keyFromSeed } from "../support/signer.js";

const key = keyFromSeed(TEST_SEED_1);
const otherKey = keyFromSeed(TEST_SEED_2);
const trustRoot = createTrustRoot("tr-1", [key.publicKey, otherKey.publicKey]);
const signer = createSigner(key, trustRoot);
const runtime = createRuntimeIdentity(signer);
const utf8 = new TextEncoder();
const bundle = TRANSFER_MANIFEST;
const decision = (verdict: DecisionRecord["verdict"]): DecisionRecord => ({
  executionId: "exec-42",
  bundle,
  binding: ["amount", "currency", "destination"],
  signals: { amount: 250, currency: "EUR", kyc: true },
  verdict,
  reason: "verified customer within limits",
  issuedAt: "2026-11-22T03:00:00.000Z",
});
const options = { trustRoot, acceptedManifestHashes: [runtime.manifestHash] };

const shapes: [string, () => Attestation][] = [
  ["variant 1", () => createAttestation(decision("approve"), signer, runtime)],
  ["variant 2 (legacy)", () => createLegacyAttestation(decision("approve"), signer, runtime)],
];

/** docs/signing.md, independently: Ed25519 over "DSSEv1 LEN(type) type LEN(body) body", body = JCS without signature. */
async function independentlyVerifies(att: Record<string, unknown>, payloadType: string, publicKey: Uint8Array): Promise<boolean> {
  const { signature, ...unsigned } = att;
  const body = utf8.encode(canonicalize(unsigned)!);
  const head = utf8.encode(`DSSEv1 ${utf8.encode(payloadType).length} ${payloadType} ${body.length} `);
  const message = new Uint8Array([...head, ...body]);
  const sig = new Uint8Array(Buffer.from(String(signature), "base64"));
  if (sig.length !== 64) return false;
  return ed.verifyAsync(sig, message, publicKey, { zip215: false });
}

/** Every leaf of a JSON object, as a path. */
function leaves(o: unknown, path: string[] = []): string[][] {
  if (typeof o !== "object" || o === null) return [path];
  return Object.entries(o).flatMap(([k, v]) => leaves(v, [...path, k]));
}

function withChanged(att: Attestation, path: string[]): Record<string, unknown> {
  const copy = structuredClone(att) as unknown as Record<string, unknown>;
  let at: Record<string, unknown> = copy;
  for (const k of path.slice(0, -1)) at = at[k] as Record<string, unknown>;
  const last = path[path.length - 1]!;
  const v = at[last];
  at[last] = typeof v === "string" ? `${v}x` : typeof v === "boolean" ? !v : typeof v === "number" ? v + 1 : null;
  return copy;
}

describe.each(shapes)("%s", (_name, make) => {
  const att = make();

  it("verifies with the pinned trust root: every check passes", () => {
    const v = verifyAttestation(att, options);
    expect(v.errors).toEqual([]);
    expect(v.valid).toBe(true);
    expect(Object.values(v.checks).every(Boolean)).toBe(true);
    expect(toEndpointVerification(v)).toEqual({ valid: true, checks: { signature: "verified", runtime: "verified", schema: "verified" } });
  });

  it("verifies with an independent Ed25519 library from docs/signing.md alone", async () => {
    expect(await independentlyVerifies(att as never, "application/vnd.writ.attestation.v1+json", key.publicKey.raw)).toBe(true);
    expect(await independentlyVerifies(att as never, "application/vnd.writ.override.v1+json", key.publicKey.raw)).toBe(false);
  });

  it("fails verification when any signed field changes", async () => {
    const paths = leaves(att).filter((p) => p[0] !== "signature");
    expect(paths.length).toBeGreaterThan(15);
    for (const path of paths) {
      const changed = withChanged(att, path);
      expect(verifyAttestation(changed, options).checks.signature_verified, path.join(".")).toBe(false);
      expect(await independentlyVerifies(changed, PAYLOAD_TYPES.attestation, key.publicKey.raw), path.join(".")).toBe(false);
    }
  });

  it("tells from the signed record alone what was authorized and how it was decided", () => {
    const r = att as unknown as Record<string, unknown>;
    expect(r["actionType"]).toBe("transfer.execute");
    expect(r["execution_fingerprint"]).toBe(executionFingerprint("exec-42"));
    expect(r["signalsHash"]).toBe(signalsHash({ kyc: true, currency: "EUR", amount: 250 }));
    // The bound signals an executed action must echo; the absent optional `destination` is left out.
    expect(r["actionBinding"]).toEqual({ amount: 250, currency: "EUR" });
    expect(r["issuedAt"]).toBe("2026-11-22T03:00:00.000Z");
    expect(r["runtimeHash"]).toBe(RUNTIME_HASH);
  });
});

describe("decision states", () => {
  it.each([
    ["approve", "completed", false],
    ["escalate", "pending_override", true],
    ["reject", "completed", false],
  ] as const)("%s: execution_state %s, requires_override %s", (verdict, state, requires) => {
    const att = createAttestation(decision(verdict), signer, runtime);
    expect(att.execution_state).toBe(state);
    expect(att.decision).toEqual({
      status: "decided",
      outcome: { action: verdict, requires_override: requires, reason: "verified customer within limits" },
    });
    expect(verifyAttestation(att, options).valid).toBe(true);
  });

  it("refuses a signed record whose outcome contradicts its state", () => {
    // Re-signed by a trusted key, so only the consistency check can catch it.
    const att = createAttestation(decision("reject"), signer, runtime);
    const { signature: _s, ...body } = { ...att, execution_state: "pending_override" as const };
    const forged = { ...body, signature: signObject(PAYLOAD_TYPES.attestation, body, key) };
    const v = verifyAttestation(forged, options);
    expect(v.checks.signature_verified).toBe(true);
    expect(v.checks.governed).toBe(false);
    expect(v.valid).toBe(false);
  });
});

/** Attack vectors, as data: each must leave the attestation invalid (or be refused before verification). */
const ATTACKS: { name: string; attack: (att: Attestation) => unknown; check?: "parse" }[] = [
  { name: "all-zero signature", attack: (a) => ({ ...a, signature: Buffer.alloc(64).toString("base64") }) },
  {
    name: "S+L malleated signature",
    attack: (a) => {
      const sig = Buffer.from(a.signature, "base64");
      // S is little-endian in the last 32 bytes; adding the group order L gives the same point, a non-canonical S.
      const L = 2n ** 252n + 27742317777372353535851937790883648493n;
      let s = 0n;
      for (let i = 63; i >= 32; i--) s = (s << 8n) + BigInt(sig[i]!);
      let t = s + L;
      for (let i = 32; i < 64; i++) {
        sig[i] = Number(t & 0xffn);
        t >>= 8n;
      }
      return { ...a, signature: sig.toString("base64") };
    },
  },
  { name: "truncated signature", attack: (a) => ({ ...a, signature: a.signature.slice(0, 80) }) },
  { name: "signature of another payloadType", attack: (a) => ({ ...a, signature: signObject(PAYLOAD_TYPES.override, stripSig(a), key) }) },
  {
    name: "signature over the object including its signature member",
    attack: (a) => ({
      ...a,
      signature: edSign(null, pae(PAYLOAD_TYPES.attestation, canonicalBytes({ ...a })), key.privateKey).toString("base64"),
    }),
  },
  { name: "wrong key id: names the other trusted key", attack: (a) => rename(a, otherKey.keyId) },
  { name: "key id not in the trust root", attack: (a) => rename(a, "0".repeat(32)) },
  { name: "signed by a key outside the trust root", attack: (a) => resign(a, loadSigningKeyPem(generateSigningKeyPair().privateKeyPem)) },
  {
    name: "duplicate JSON keys",
    attack: (a) => JSON.stringify(a).replace('"policyId":', '"policyId":"other.policy","policyId":'),
    check: "parse",
  },
  { name: "lone surrogate", attack: (a) => JSON.stringify(a).replace('"exec-42"', '"exec-\\ud800"'), check: "parse" },
];

function stripSig(a: Attestation): Record<string, unknown> {
  const { signature: _s, ...rest } = a as unknown as Record<string, unknown>;
  return rest;
}

function rename(a: Attestation, keyId: string): unknown {
  const copy = structuredClone(a) as unknown as Record<string, unknown>;
  if ("provenance" in copy) (copy["provenance"] as Record<string, unknown>)["signerKeyId"] = keyId;
  else copy["signerKeyId"] = keyId;
  return copy;
}

function resign(a: Attestation, k: SigningKey): unknown {
  return { ...stripSig(a), signature: signObject(PAYLOAD_TYPES.attestation, stripSig(a), k) };
}

describe.each(shapes)("attack vectors against %s", (_name, make) => {
  it.each(ATTACKS.map((a) => [a.name, a] as const))("%s", (_n, { attack, check }) => {
    const forged = attack(make());
    if (check === "parse") {
      expect(() => parseStrictJson(forged as string)).toThrow();
      return;
    }
    const v = verifyAttestation(forged, options);
    expect(v.valid).toBe(false);
    expect(v.checks.signature_verified).toBe(false);
  });
});

it("signs the runtime manifest in its own domain, apart from attestations", () => {
  const { signature, ...body } = runtime.manifest;
  expect(verifyObject(PAYLOAD_TYPES.runtimeManifest, body, signature, [key.publicKey])).not.toBeNull();
  expect(verifyObject(PAYLOAD_TYPES.attestation, body, signature, [key.publicKey])).toBeNull();
  expect(runtime.manifest).toMatchObject({ runtimeHash: RUNTIME_HASH, trustRootVersion: "tr-1", signerKeyId: key.keyId });
});

describe("keys and rotation", () => {
  it("refuses a small-order public key anywhere a key is pinned", () => {
    const identity = new Uint8Array(32);
    identity[0] = 1;
    expect(() => publicKeyFromRaw(identity)).toThrow(KeyError);
  });

  it("keeps verifying attestations signed before a rotation", () => {
    const oldRoot = createTrustRoot("tr-1", [key.publicKey]);
    const before = createAttestation(decision("approve"), createSigner(key, oldRoot), createRuntimeIdentity(createSigner(key, oldRoot)));
    const newRoot = createTrustRoot("tr-2", [otherKey.publicKey, key.publicKey]);
    const v = verifyAttestation(before, { trustRoot: newRoot });
    expect(v.valid).toBe(true);
    expect(v.warnings).toContain("signed under trust root `tr-1`, verified with `tr-2`");
    // Retiring the key (a trust root without it) is what stops its attestations from verifying.
    const retired = verifyAttestation(before, { trustRoot: createTrustRoot("tr-3", [otherKey.publicKey]) });
    expect(retired.valid).toBe(false);
    expect(toEndpointVerification(retired).checks.signature).toBe("unknown");
  });

  it("refuses a signer whose key is not in its trust root", () => {
    expect(() => createSigner(otherKey, createTrustRoot("tr-x", [key.publicKey]))).toThrow(KeyError);
  });

  it("answers `unknown` for a runtime it does not know and `failed` for a broken record", () => {
    const att = createAttestation(decision("approve"), signer, runtime);
    const foreign = verifyAttestation(att, { trustRoot, acceptedRuntimeHashes: ["f".repeat(64)] });
    expect(toEndpointVerification(foreign).checks.runtime).toBe("unknown");
    const broken = verifyAttestation({ ...att, schemaVersion: 7 }, options);
    expect(broken.valid).toBe(false);
    expect(broken.errors).toContain("attestation is missing `schemaVersion` (a string)");
    expect(toEndpointVerification(broken).checks).toEqual({ signature: "failed", runtime: "failed", schema: "failed" });
  });
});
