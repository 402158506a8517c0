/**
 * Signature vectors (fixtures/signing/vectors.json, made by generate.mjs) checked twice:
 *  1. with our implementation (canonicalJson, signingInput, key loading, verifyObject);
 *  2. independently, with @noble/ed25519 in strict RFC 8032 mode over a signing input this file derives by itself
 *     from docs/signing.md and the vector's JCS snapshot (no import from runtime/src for that path).
 */
import { readFileSync } from "node:fs";
import { createPublicKey, verify as nodeVerify } from "node:crypto";
import * as ed from "@noble/ed25519";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/canonical/jcs.js";
import { KeyError, SignatureFormatError } from "../../src/errors.js";
import { loadPublicKeyPem, publicKeyFromRaw, type PublicKey } from "../../src/signing/keys.js";
import { signingInput } from "../../src/signing/pae.js";
import { PAYLOAD_TYPES, type PayloadType } from "../../src/signing/payload-types.js";
import { decodeSignature, verifyObject } from "../../src/signing/sign.js";

interface KeyInfo {
  rawHex: string;
  pem: string;
}
interface Vector {
  name: string;
  description: string;
  payloadType: string;
  object: Record<string, unknown>;
  jcs: string;
  paeHex: string;
  publicKey: KeyInfo;
  trustedKeys: KeyInfo[];
  signature: string;
  valid: boolean;
  reason?: "SIGNATURE_INVALID" | "SIGNATURE_MALFORMED" | "KEY_SMALL_ORDER" | "KEY_NOT_TRUSTED";
}

const file = JSON.parse(readFileSync(new URL("../fixtures/signing/vectors.json", import.meta.url), "utf8")) as {
  vectors: Vector[];
};
const vectors = file.vectors;

// ---- independent derivation, from the text of docs/signing.md ------------------------------------------------
// PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body   (LEN = decimal byte length)
function specPae(type: string, body: Uint8Array): Uint8Array {
  const enc = new TextEncoder();
  const t = enc.encode(type);
  const parts = [
    enc.encode("DSSEv1 "),
    enc.encode(String(t.length)),
    enc.encode(" "),
    t,
    enc.encode(" "),
    enc.encode(String(body.length)),
    enc.encode(" "),
    body,
  ];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// base64, standard alphabet, padded; 64 bytes; one canonical spelling
function specDecodeSignature(b64: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/]{86}==$/.test(b64)) return null;
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  if (bytes.length !== 64 || btoa(String.fromCharCode(...bytes)) !== b64) return null;
  return bytes;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const unhex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, "hex"));
const STRICT = { zip215: false } as const;

async function nobleVerdict(v: Vector): Promise<boolean> {
  const message = specPae(v.payloadType, new TextEncoder().encode(v.jcs)); // the snapshot, not a live object
  const signature = specDecodeSignature(v.signature);
  if (signature === null) return false;
  let verified = false;
  for (const key of v.trustedKeys) {
    if (await ed.verifyAsync(signature, message, unhex(key.rawHex), STRICT)) verified = true;
  }
  return verified;
}

function isPayloadType(t: string): t is PayloadType {
  return (Object.values(PAYLOAD_TYPES) as string[]).includes(t);
}

function withoutSignature(o: Record<string, unknown>): Record<string, unknown> {
  const { signature: _s, ...rest } = o;
  return rest;
}

/** Our verdict: keys go through the loaders (a refused key means "not verified"), then verifyObject. */
function ourVerdict(v: Vector): { verified: boolean; keyError?: KeyError } {
  if (!isPayloadType(v.payloadType)) throw new Error(`unknown payloadType ${v.payloadType}`);
  let trusted: PublicKey[];
  try {
    trusted = v.trustedKeys.map((k) => {
      const fromPem = loadPublicKeyPem(k.pem);
      const fromRaw = publicKeyFromRaw(unhex(k.rawHex));
      expect(fromPem.keyId).toBe(fromRaw.keyId);
      expect(hex(fromPem.raw)).toBe(k.rawHex);
      return fromPem;
    });
  } catch (error) {
    if (error instanceof KeyError) return { verified: false, keyError: error };
    throw error;
  }
  const match = verifyObject(v.payloadType, v.object, v.signature, trusted);
  if (match !== null) expect(trusted).toContain(match);
  return { verified: match !== null };
}

describe("signature vectors", () => {
  it("has vectors for every payloadType and every refusal", () => {
    const validTypes = new Set(vectors.filter((v) => v.valid).map((v) => v.payloadType));
    expect([...validTypes].sort()).toEqual(Object.values(PAYLOAD_TYPES).sort());
    const reasons = new Set(vectors.filter((v) => !v.valid).map((v) => v.reason));
    expect([...reasons].sort()).toEqual(["KEY_NOT_TRUSTED", "KEY_SMALL_ORDER", "SIGNATURE_INVALID", "SIGNATURE_MALFORMED"]);
    for (const v of vectors) expect(v.valid === (v.reason === undefined), v.name).toBe(true);
  });

  for (const v of vectors) {
    describe(`${v.name}: ${v.description}`, () => {
      it("our JCS and PAE match the vector, and the spec's PAE matches too", () => {
        expect(canonicalJson(withoutSignature(v.object))).toBe(v.jcs);
        expect(hex(specPae(v.payloadType, new TextEncoder().encode(v.jcs)))).toBe(v.paeHex);
        if (!isPayloadType(v.payloadType)) throw new Error("unknown payloadType");
        const before = structuredClone(v.object);
        expect(hex(signingInput(v.payloadType, v.object))).toBe(v.paeHex);
        expect(v.object).toEqual(before);
      });

      it(`verifyObject says ${v.valid ? "verified" : "not verified"}`, () => {
        const ours = ourVerdict(v);
        expect(ours.verified).toBe(v.valid);
        if (v.reason === "KEY_SMALL_ORDER") expect(ours.keyError?.code).toBe("KEY_SMALL_ORDER");
        else expect(ours.keyError).toBeUndefined();
        if (v.reason === "SIGNATURE_MALFORMED") expect(() => decodeSignature(v.signature)).toThrow(SignatureFormatError);
        else expect(decodeSignature(v.signature)).toHaveLength(64);
      });

      it(`@noble/ed25519 (strict) over the spec-derived input says ${v.valid ? "verified" : "not verified"}`, async () => {
        expect(await nobleVerdict(v)).toBe(v.valid);
      });
    });
  }

  it("untrusted-key: the signature itself is good, only trust is missing", async () => {
    const v = vectors.find((x) => x.reason === "KEY_NOT_TRUSTED");
    if (v === undefined) throw new Error("missing vector");
    const message = specPae(v.payloadType, new TextEncoder().encode(v.jcs));
    const signature = specDecodeSignature(v.signature);
    if (signature === null) throw new Error("malformed");
    expect(await ed.verifyAsync(signature, message, unhex(v.publicKey.rawHex), STRICT)).toBe(true);
  });

  it("malformed-but-decodable signatures would verify under a lenient base64 decoder", async () => {
    for (const name of ["signature-unpadded", "signature-url-alphabet", "signature-noncanonical-bits", "signature-whitespace"]) {
      const v = vectors.find((x) => x.name === name);
      if (v === undefined) throw new Error(`missing vector ${name}`);
      const lenient = new Uint8Array(Buffer.from(v.signature, "base64"));
      const message = specPae(v.payloadType, new TextEncoder().encode(v.jcs));
      expect(await ed.verifyAsync(lenient, message, unhex(v.publicKey.rawHex), STRICT), name).toBe(true);
    }
  });

  it("small-order-key-zero-s is the attack: plain node:crypto accepts it, for any message", () => {
    const v = vectors.find((x) => x.name === "small-order-key-zero-s");
    if (v === undefined) throw new Error("missing vector");
    const key = createPublicKey({ key: v.publicKey.pem, format: "pem" });
    const sig = Buffer.from(v.signature, "base64");
    expect(nodeVerify(null, unhex(v.paeHex), key, sig)).toBe(true);
    expect(nodeVerify(null, Buffer.from("any other message"), key, sig)).toBe(true);
  });
});
