import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { ED25519_TORSION_SUBGROUP } from "@noble/curves/ed25519.js";
import * as ed from "@noble/ed25519";
import { describe, expect, it } from "vitest";
import { KeyError } from "../../src/errors.js";
import {
  generateSigningKeyPair,
  keyIdOf,
  loadPublicKeyPem,
  loadSigningKeyPem,
  publicKeyFromRaw,
  type PublicKey,
} from "../../src/signing/keys.js";
import { PAYLOAD_TYPES } from "../../src/signing/payload-types.js";
import { verifyObject } from "../../src/signing/sign.js";

const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const RFC8032_TEST1 = {
  seed: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
  pub: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
};

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const unhex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, "hex"));
const spkiPem = (raw: Uint8Array): string =>
  `-----BEGIN PUBLIC KEY-----\n${Buffer.concat([SPKI_PREFIX, raw]).toString("base64")}\n-----END PUBLIC KEY-----\n`;
const pkcs8Pem = (seedHex: string): string =>
  `-----BEGIN PRIVATE KEY-----\n${Buffer.concat([PKCS8_PREFIX, Buffer.from(seedHex, "hex")]).toString("base64")}\n-----END PRIVATE KEY-----\n`;

function keyError(fn: () => unknown): KeyError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(KeyError);
    return error as KeyError;
  }
  throw new Error("expected a KeyError");
}

/**
 * The 8 small-order points, derived here without any table: clear the prime-order component of some curve point
 * (multiply by L) until what is left has order 8, then take its 8 multiples.
 */
function deriveSmallOrderPoints(): string[] {
  const L = 2n ** 252n + 27742317777372353535851937790883648493n;
  const timesL = (p: ed.Point): ed.Point =>
    p
      .multiply(L / 2n, false)
      .double()
      .add(p);
  for (let y = 2; ; y++) {
    const enc = new Uint8Array(32);
    enc[0] = y;
    let p: ed.Point;
    try {
      p = ed.Point.fromBytes(enc);
    } catch {
      continue; // no x for this y
    }
    const t = timesL(p);
    if (t.double().double().is0()) continue; // order < 8
    const points: string[] = [];
    let acc = ed.Point.ZERO;
    for (let k = 0; k < 8; k++) {
      points.push(acc.toHex());
      acc = acc.add(t);
    }
    expect(acc.is0()).toBe(true);
    return points;
  }
}

describe("keyIdOf", () => {
  it("is the first 32 hex characters of SHA-256 over the raw key", () => {
    const raw = unhex(RFC8032_TEST1.pub);
    const expected = createHash("sha256").update(raw).digest("hex").slice(0, 32);
    expect(keyIdOf(raw)).toBe(expected);
    expect(keyIdOf(raw)).toBe("21fe31dfa154a261626bf854046fd227");
  });

  it("refuses anything but 32 bytes", () => {
    expect(keyError(() => keyIdOf(new Uint8Array(31))).code).toBe("KEY_INVALID");
  });
});

describe("loading keys", () => {
  it("loads an RFC 8032 key from PKCS8 and SPKI PEM and from raw bytes", () => {
    const signing = loadSigningKeyPem(pkcs8Pem(RFC8032_TEST1.seed));
    expect(hex(signing.publicKey.raw)).toBe(RFC8032_TEST1.pub);
    expect(signing.keyId).toBe(keyIdOf(unhex(RFC8032_TEST1.pub)));
    const fromPem = loadPublicKeyPem(spkiPem(unhex(RFC8032_TEST1.pub)));
    const fromRaw = publicKeyFromRaw(unhex(RFC8032_TEST1.pub));
    expect(fromPem.keyId).toBe(signing.keyId);
    expect(fromRaw.pem).toBe(fromPem.pem);
    expect(fromRaw.pem).toBe(signing.publicKey.pem);
    expect(fromRaw.raw).toHaveLength(32);
  });

  it("generates key pairs that load", () => {
    const pair = generateSigningKeyPair();
    expect(pair.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(pair.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    const signing = loadSigningKeyPem(pair.privateKeyPem);
    expect(loadPublicKeyPem(pair.publicKeyPem).keyId).toBe(signing.keyId);
    expect(signing.publicKey.pem).toBe(pair.publicKeyPem);
    expect(generateSigningKeyPair().publicKeyPem).not.toBe(pair.publicKeyPem);
  });

  it("copies the raw bytes it is given", () => {
    const raw = unhex(RFC8032_TEST1.pub);
    const key = publicKeyFromRaw(raw);
    raw[0] = 0;
    expect(hex(key.raw)).toBe(RFC8032_TEST1.pub);
  });
});

describe("small-order public keys", () => {
  const derived = deriveSmallOrderPoints();

  it("derives the 8 well-known encodings", () => {
    expect(new Set(derived).size).toBe(8);
    expect(derived).toContain("01" + "00".repeat(31)); // identity
    expect(derived).toContain("ec" + "ff".repeat(30) + "7f"); // order 2: y = -1
    expect([...derived].sort()).toEqual([...ED25519_TORSION_SUBGROUP].sort());
  });

  it("node:crypto alone accepts them (which is why they are checked)", () => {
    for (const p of derived) expect(() => createPublicKey({ key: spkiPem(unhex(p)), format: "pem" })).not.toThrow();
  });

  for (const p of derived) {
    it(`refuses ${p} from raw bytes and from SPKI PEM with KEY_SMALL_ORDER`, () => {
      expect(keyError(() => publicKeyFromRaw(unhex(p))).code).toBe("KEY_SMALL_ORDER");
      const error = keyError(() => loadPublicKeyPem(spkiPem(unhex(p))));
      expect(error.code).toBe("KEY_SMALL_ORDER");
      expect(error.message).toBe("public key is a small-order Ed25519 point");
    });
  }

  it("refuses non-canonical encodings of small-order points with KEY_INVALID", () => {
    const nonCanonical = [
      "ee" + "ff".repeat(30) + "7f", // y = p + 1 (identity)
      "01" + "00".repeat(30) + "80", // identity with the x sign bit set (x = 0)
      "ed" + "ff".repeat(30) + "7f", // y = p (order 4 point y = 0)
      "ec" + "ff".repeat(30) + "ff", // order-2 point with the x sign bit set (x = 0)
    ];
    for (const p of nonCanonical) {
      const error = keyError(() => publicKeyFromRaw(unhex(p)));
      expect(error.code, p).toBe("KEY_INVALID");
    }
  });

  it("refuses keys outside the prime-order subgroup (a valid key plus a small-order point)", () => {
    const mixed = ed.Point.fromHex(RFC8032_TEST1.pub)
      .add(ed.Point.fromHex(ED25519_TORSION_SUBGROUP[1] ?? ""))
      .toBytes();
    const error = keyError(() => publicKeyFromRaw(mixed));
    expect(error.code).toBe("KEY_INVALID");
    expect(error.message).toBe("public key is not in the Ed25519 prime-order subgroup");
  });

  it("refuses encodings that are not curve points", () => {
    let offCurve: Uint8Array | null = null;
    for (let y = 2; offCurve === null; y++) {
      const enc = new Uint8Array(32);
      enc[0] = y;
      try {
        ed.Point.fromBytes(enc);
      } catch {
        offCurve = enc;
      }
    }
    expect(keyError(() => publicKeyFromRaw(offCurve)).code).toBe("KEY_INVALID");
    expect(keyError(() => publicKeyFromRaw(new Uint8Array(33))).code).toBe("KEY_INVALID");
  });

  it("verifyObject refuses a hand-built trusted key for the identity point", () => {
    const raw = unhex("01" + "00".repeat(31));
    const handBuilt: PublicKey = {
      keyId: keyIdOf(raw),
      key: createPublicKey({ key: spkiPem(raw), format: "pem" }),
      raw,
      pem: spkiPem(raw),
    };
    const zeroS = Buffer.alloc(64);
    zeroS[0] = 1;
    const error = keyError(() => verifyObject(PAYLOAD_TYPES.attestation, { a: 1 }, zeroS.toString("base64"), [handBuilt]));
    expect(error.code).toBe("KEY_SMALL_ORDER");
  });

  it("verifyObject refuses a hand-built key whose fields disagree", () => {
    const good = publicKeyFromRaw(unhex(RFC8032_TEST1.pub));
    const other = loadPublicKeyPem(generateSigningKeyPair().publicKeyPem);
    const mixed: PublicKey = { ...good, key: other.key };
    expect(keyError(() => verifyObject(PAYLOAD_TYPES.attestation, { a: 1 }, "", [mixed])).code).toBe("KEY_INVALID");
  });
});

describe("non-Ed25519 keys", () => {
  const pem = (k: KeyObject, type: "pkcs8" | "spki"): string => k.export({ format: "pem", type }).toString();
  const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const x25519 = generateKeyPairSync("x25519");
  const ed448 = generateKeyPairSync("ed448");
  const p256 = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const ed25519 = generateSigningKeyPair();

  const privateCases: Array<[string, string]> = [
    ["RSA PKCS8", pem(rsa.privateKey, "pkcs8")],
    ["RSA PKCS1", rsa.privateKey.export({ format: "pem", type: "pkcs1" }).toString()],
    ["X25519 PKCS8", pem(x25519.privateKey, "pkcs8")],
    ["Ed448 PKCS8", pem(ed448.privateKey, "pkcs8")],
    ["P-256 PKCS8", pem(p256.privateKey, "pkcs8")],
    ["P-256 SEC1", p256.privateKey.export({ format: "pem", type: "sec1" }).toString()],
    [
      "encrypted Ed25519 PKCS8",
      createPrivateKey(ed25519.privateKeyPem).export({ format: "pem", type: "pkcs8", cipher: "aes-256-cbc", passphrase: "pw" }).toString(),
    ],
    ["Ed25519 public key", ed25519.publicKeyPem],
    ["two PEM blocks", ed25519.privateKeyPem + ed25519.privateKeyPem],
    ["corrupted body", ed25519.privateKeyPem.replace(/\n[A-Za-z0-9+/]{8}/, "\nAAAAAAAA")],
    ["empty", ""],
    ["not PEM", "hello"],
  ];
  for (const [name, text] of privateCases) {
    it(`loadSigningKeyPem refuses ${name} without echoing key material`, () => {
      const error = keyError(() => loadSigningKeyPem(text));
      expect(error.code).toBe("KEY_INVALID");
      expect(error.message).toBe("signing key is not an Ed25519 PKCS8 PEM key");
    });
  }

  const publicCases: Array<[string, string]> = [
    ["RSA SPKI", pem(rsa.publicKey, "spki")],
    ["X25519 SPKI", pem(x25519.publicKey, "spki")],
    ["Ed448 SPKI", pem(ed448.publicKey, "spki")],
    ["P-256 SPKI", pem(p256.publicKey, "spki")],
    ["Ed25519 private key", ed25519.privateKeyPem],
    ["garbage", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"],
  ];
  for (const [name, text] of publicCases) {
    it(`loadPublicKeyPem refuses ${name}`, () => {
      const error = keyError(() => loadPublicKeyPem(text));
      expect(error.code).toBe("KEY_INVALID");
      expect(error.message).toBe("public key is not an Ed25519 SPKI PEM key");
    });
  }

  it("refuses non-string input", () => {
    expect(keyError(() => loadSigningKeyPem(undefined as unknown as string)).code).toBe("KEY_INVALID");
    expect(keyError(() => loadPublicKeyPem(42 as unknown as string)).code).toBe("KEY_INVALID");
    expect(keyError(() => publicKeyFromRaw("00".repeat(32) as unknown as Uint8Array)).code).toBe("KEY_INVALID");
  });
});
