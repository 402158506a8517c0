import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CanonicalizationError, KeyError, SignatureFormatError } from "../../src/errors.js";
import { generateSigningKeyPair, loadPublicKeyPem, loadSigningKeyPem, type SigningKey } from "../../src/signing/keys.js";
import { pae, signingInput } from "../../src/signing/pae.js";
import { PAYLOAD_TYPES } from "../../src/signing/payload-types.js";
import { decodeSignature, signObject, verifyObject } from "../../src/signing/sign.js";

const text = (b: Uint8Array): string => Buffer.from(b).toString("utf8");
const newKey = (): SigningKey => loadSigningKeyPem(generateSigningKeyPair().privateKeyPem);

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

describe("PAYLOAD_TYPES", () => {
  it("are the strings of docs/signing.md", () => {
    expect(PAYLOAD_TYPES).toEqual({
      attestation: "application/vnd.writ.attestation.v1+json",
      override: "application/vnd.writ.override.v1+json",
      executionProof: "application/vnd.writ.execution-proof.v1+json",
      runtimeManifest: "application/vnd.writ.runtime-manifest.v1+json",
      bundle: "application/vnd.writ.bundle.v1+json",
      bundleIndex: "application/vnd.writ.bundle-index.v1+json",
      trustRecord: "application/vnd.writ.trust-record.v1+json",
      receipt: "application/vnd.writ.receipt.v1+json",
      auditCheckpoint: "application/vnd.writ.audit-checkpoint.v1+json",
    });
  });
});

describe("pae", () => {
  it("matches the DSSE specification example", () => {
    const out = pae("http://example.com/HelloWorld", new TextEncoder().encode("hello world"));
    expect(text(out)).toBe("DSSEv1 29 http://example.com/HelloWorld 11 hello world");
  });

  it("counts bytes, not characters", () => {
    expect(text(pae("t€", new TextEncoder().encode("é")))).toBe("DSSEv1 4 t€ 2 é");
    expect(text(pae("", new Uint8Array(0)))).toBe("DSSEv1 0  0 ");
  });

  it("signingInput leaves out only the top-level signature member and does not mutate", () => {
    const object = deepFreeze({ b: 1, signature: "x", nested: { signature: "kept" } });
    const out = text(signingInput(PAYLOAD_TYPES.receipt, object));
    const body = '{"b":1,"nested":{"signature":"kept"}}';
    expect(out).toBe(`DSSEv1 ${PAYLOAD_TYPES.receipt.length} ${PAYLOAD_TYPES.receipt} ${body.length} ${body}`);
    expect(object.signature).toBe("x");
  });

  it("signingInput still refuses a non-plain object that has a signature member", () => {
    class Attestation {
      signature = "x";
      a = 1;
    }
    const instance = new Attestation() as unknown as Record<string, unknown>;
    expect(() => signingInput(PAYLOAD_TYPES.attestation, instance)).toThrow(CanonicalizationError);
  });
});

describe("signObject / verifyObject", () => {
  const key = newKey();
  const other = newKey();

  it("round-trips in every domain and never across domains", () => {
    const types = Object.values(PAYLOAD_TYPES);
    for (const t of types) {
      const object = { id: "x", n: 1.5, list: [true, null] };
      const sig = signObject(t, object, key);
      expect(sig).toMatch(/^[A-Za-z0-9+/]{86}==$/);
      expect(verifyObject(t, object, sig, [key.publicKey])).toBe(key.publicKey);
      for (const u of types) if (u !== t) expect(verifyObject(u, object, sig, [key.publicKey])).toBeNull();
    }
  });

  it("ignores the object's own signature member and does not mutate the object", () => {
    const bare = deepFreeze({ decision: "approve", amount: 10 });
    const sig = signObject(PAYLOAD_TYPES.attestation, bare, key);
    const carried = deepFreeze({ ...bare, signature: sig });
    expect(signObject(PAYLOAD_TYPES.attestation, carried, key)).toBe(sig); // Ed25519 is deterministic
    expect(verifyObject(PAYLOAD_TYPES.attestation, carried, sig, [key.publicKey])).toBe(key.publicKey);
    expect(verifyObject(PAYLOAD_TYPES.attestation, { ...carried, amount: 11 }, sig, [key.publicKey])).toBeNull();
  });

  it("returns the trusted key that verifies, or null", () => {
    const object = { a: 1 };
    const sig = signObject(PAYLOAD_TYPES.bundle, object, other);
    expect(verifyObject(PAYLOAD_TYPES.bundle, object, sig, [key.publicKey, other.publicKey])).toBe(other.publicKey);
    expect(verifyObject(PAYLOAD_TYPES.bundle, object, sig, [other.publicKey, key.publicKey])).toBe(other.publicKey);
    expect(verifyObject(PAYLOAD_TYPES.bundle, object, sig, [key.publicKey])).toBeNull();
    expect(verifyObject(PAYLOAD_TYPES.bundle, object, sig, [])).toBeNull();
    const samePublic = loadPublicKeyPem(other.publicKey.pem);
    expect(verifyObject(PAYLOAD_TYPES.bundle, object, sig, [samePublic])).toBe(samePublic);
  });

  it("returns null for malformed signatures instead of throwing", () => {
    const object = { a: 1 };
    const sig = signObject(PAYLOAD_TYPES.bundle, object, key);
    for (const bad of ["", sig.slice(0, -2), `${sig} `, sig.replace(/=+$/, ""), 42 as unknown as string]) {
      expect(verifyObject(PAYLOAD_TYPES.bundle, object, bad, [key.publicKey])).toBeNull();
    }
  });

  it("throws CanonicalizationError for objects that are not JSON data", () => {
    expect(() => signObject(PAYLOAD_TYPES.bundle, { a: Number.NaN }, key)).toThrow(CanonicalizationError);
    expect(() => verifyObject(PAYLOAD_TYPES.bundle, { a: new Date(0) }, "", [key.publicKey])).toThrow(CanonicalizationError);
  });

  it("self-verifies: a signing key with a foreign public half is refused", () => {
    const mismatched: SigningKey = { keyId: key.keyId, privateKey: key.privateKey, publicKey: other.publicKey };
    const error = (() => {
      try {
        signObject(PAYLOAD_TYPES.attestation, { a: 1 }, mismatched);
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(KeyError);
    expect((error as KeyError).message).toBe("signature failed self-verification: private and public key do not match");
  });

  it("refuses a non-Ed25519 private key object", () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const bogus: SigningKey = { keyId: key.keyId, privateKey: rsa.privateKey, publicKey: key.publicKey };
    expect(() => signObject(PAYLOAD_TYPES.attestation, { a: 1 }, bogus)).toThrow(KeyError);
    const publicAsPrivate: SigningKey = { keyId: key.keyId, privateKey: key.publicKey.key, publicKey: key.publicKey };
    expect(() => signObject(PAYLOAD_TYPES.attestation, { a: 1 }, publicAsPrivate)).toThrow(KeyError);
  });
});

describe("decodeSignature", () => {
  const good = Buffer.alloc(64, 7).toString("base64");

  it("decodes exactly 64 bytes of canonical standard padded base64", () => {
    expect(decodeSignature(good)).toEqual(new Uint8Array(64).fill(7));
  });

  it("throws SignatureFormatError otherwise", () => {
    const bad = [
      "",
      good.slice(0, 84),
      good.slice(0, 86),
      `${good.slice(0, 86)}=`,
      `${good}AAAA`,
      Buffer.alloc(63).toString("base64"),
      Buffer.alloc(65).toString("base64"),
      good.replace(/^./, "-"),
      good.replace(/^./, "_"),
      ` ${good.slice(1)}`,
      `${good.slice(0, 85)}x==`, // non-zero unused bits
      "=".repeat(88),
    ];
    for (const b of bad) {
      expect(() => decodeSignature(b), JSON.stringify(b)).toThrow(SignatureFormatError);
      try {
        decodeSignature(b);
      } catch (error) {
        expect((error as SignatureFormatError).code).toBe("SIGNATURE_MALFORMED");
      }
    }
    expect(() => decodeSignature(null as unknown as string)).toThrow(SignatureFormatError);
  });
});
