/**
 * Ed25519 keys for writ signatures.
 *
 * Every public key is validated when it is loaded: it must be a canonical encoding (RFC 8032 5.1.3: y < p, and no
 * "negative zero" x) of a point that is not of small order and lies in the prime-order subgroup. node:crypto
 * (OpenSSL) does none of this: it accepts the identity point (0x01 followed by 31 zero bytes) as a public key and
 * then accepts an all-zero signature for it on any message. So point decoding and the small-order / subgroup checks
 * use `@noble/curves` (an audited pure-JS implementation that exposes the decoded point), while signing and
 * verification themselves stay on node:crypto for speed.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { ed25519 } from "@noble/curves/ed25519.js";
import { KeyError } from "../errors.js";

export interface PublicKey {
  /** {@link keyIdOf} of `raw`. */
  readonly keyId: string;
  /** node:crypto Ed25519 public key. */
  readonly key: KeyObject;
  /** The 32-byte RFC 8032 encoding of the public key. */
  readonly raw: Uint8Array;
  /** SPKI PEM ("-----BEGIN PUBLIC KEY-----"). */
  readonly pem: string;
}

export interface SigningKey {
  /** keyId of the public half. */
  readonly keyId: string;
  /** node:crypto Ed25519 private key. */
  readonly privateKey: KeyObject;
  readonly publicKey: PublicKey;
}

const RAW_KEY_LENGTH = 32;

/**
 * The key identifier of an Ed25519 public key: the first 32 lowercase hex characters (16 bytes) of SHA-256 over the
 * 32 raw public key bytes (the RFC 8032 encoding, not the SPKI DER), i.e. `hex(sha256(raw))[0:32]`. Stable across
 * PEM formatting and independent of any library's key serialization.
 */
export function keyIdOf(rawPublicKey: Uint8Array): string {
  if (!(rawPublicKey instanceof Uint8Array) || rawPublicKey.length !== RAW_KEY_LENGTH) {
    throw new KeyError("public key is not 32 bytes");
  }
  return createHash("sha256").update(rawPublicKey).digest("hex").slice(0, 32);
}

/** PEM with exactly one block of the given label and base64 body (node would otherwise read only the first block). */
function isPemBlock(pem: unknown, label: "PRIVATE KEY" | "PUBLIC KEY"): pem is string {
  if (typeof pem !== "string") return false;
  const re = new RegExp(`^\\s*-----BEGIN ${label}-----\\r?\\n[A-Za-z0-9+/=\\r\\n]+-----END ${label}-----\\s*$`);
  return re.test(pem);
}

const fromBase64Url = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "base64url"));

function exportRaw(key: KeyObject): Uint8Array {
  const jwk = key.export({ format: "jwk" });
  if (typeof jwk.x !== "string") throw new KeyError("public key is not a valid Ed25519 key");
  return fromBase64Url(jwk.x);
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/**
 * Refuses (KeyError) any 32 bytes that are not a usable Ed25519 public key: non-canonical encodings and points not
 * on the curve (KEY_INVALID), small-order points (KEY_SMALL_ORDER), and points with a small-order component, i.e.
 * outside the prime-order subgroup (KEY_INVALID; an honestly generated key is always inside it).
 */
function assertValidPoint(raw: Uint8Array): void {
  let point: ReturnType<typeof ed25519.Point.fromBytes>;
  try {
    point = ed25519.Point.fromBytes(raw, false); // strict RFC 8032 decoding, not ZIP-215
  } catch {
    throw new KeyError("public key is not a valid Ed25519 point encoding");
  }
  if (!bytesEqual(point.toBytes(), raw)) throw new KeyError("public key is not a canonical Ed25519 point encoding");
  if (point.isSmallOrder()) throw new KeyError("public key is a small-order Ed25519 point", "KEY_SMALL_ORDER");
  if (!point.isTorsionFree()) throw new KeyError("public key is not in the Ed25519 prime-order subgroup");
}

/** PublicKey objects built (and validated) by this module; see {@link assertUsablePublicKey}. */
const validated = new WeakSet<PublicKey>();

function buildPublicKey(raw: Uint8Array): PublicKey {
  assertValidPoint(raw);
  const copy = new Uint8Array(raw);
  let key: KeyObject;
  try {
    key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(copy).toString("base64url") }, format: "jwk" });
  } catch {
    throw new KeyError("public key is not a valid Ed25519 key");
  }
  const pem = key.export({ format: "pem", type: "spki" }).toString();
  const publicKey: PublicKey = Object.freeze({ keyId: keyIdOf(copy), key, raw: copy, pem });
  validated.add(publicKey);
  return publicKey;
}

/** An Ed25519 public key from its 32-byte RFC 8032 encoding. @throws KeyError */
export function publicKeyFromRaw(raw: Uint8Array): PublicKey {
  if (!(raw instanceof Uint8Array) || raw.length !== RAW_KEY_LENGTH) throw new KeyError("public key is not 32 bytes");
  return buildPublicKey(raw);
}

/** An Ed25519 public key from SPKI PEM ("-----BEGIN PUBLIC KEY-----"). @throws KeyError */
export function loadPublicKeyPem(pem: string): PublicKey {
  const message = "public key is not an Ed25519 SPKI PEM key";
  if (!isPemBlock(pem, "PUBLIC KEY")) throw new KeyError(message);
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: "pem" });
  } catch {
    throw new KeyError(message);
  }
  if (key.type !== "public" || key.asymmetricKeyType !== "ed25519") throw new KeyError(message);
  return buildPublicKey(exportRaw(key));
}

/**
 * A signing key from PKCS8 PEM ("-----BEGIN PRIVATE KEY-----"), Ed25519 only. The public half is derived from the
 * private key and validated like any public key. Error messages never contain key material.
 * @throws KeyError
 */
export function loadSigningKeyPem(pem: string): SigningKey {
  const message = "signing key is not an Ed25519 PKCS8 PEM key";
  if (!isPemBlock(pem, "PRIVATE KEY")) throw new KeyError(message);
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: pem, format: "pem" });
  } catch {
    throw new KeyError(message);
  }
  if (privateKey.type !== "private" || privateKey.asymmetricKeyType !== "ed25519") throw new KeyError(message);
  const derived = exportRaw(createPublicKey(privateKey));
  // Cross-check node's derivation with an independent one (the seed is the JWK `d`).
  const jwk = privateKey.export({ format: "jwk" });
  if (typeof jwk.d !== "string" || !bytesEqual(ed25519.getPublicKey(fromBase64Url(jwk.d)), derived)) {
    throw new KeyError(message);
  }
  let publicKey: PublicKey;
  try {
    publicKey = buildPublicKey(derived);
  } catch (error) {
    if (error instanceof KeyError && error.code === "KEY_SMALL_ORDER") {
      throw new KeyError("signing key's public key is a small-order Ed25519 point", "KEY_SMALL_ORDER");
    }
    throw new KeyError(message);
  }
  return Object.freeze({ keyId: publicKey.keyId, privateKey, publicKey });
}

/**
 * For verification: refuses a PublicKey that was not produced by this module unless it passes the same checks
 * (so a hand-built `{ key: <identity point KeyObject>, ... }` cannot bypass the small-order refusal). `key` and `raw`
 * must agree. Successful checks are remembered per object.
 * @throws KeyError
 */
export function assertUsablePublicKey(publicKey: PublicKey): void {
  if (validated.has(publicKey)) return;
  const { key, raw, keyId } = publicKey;
  if (
    !(key instanceof Object) ||
    (key as KeyObject).type !== "public" ||
    (key as KeyObject).asymmetricKeyType !== "ed25519" ||
    !(raw instanceof Uint8Array) ||
    raw.length !== RAW_KEY_LENGTH
  ) {
    throw new KeyError("trusted key is not an Ed25519 public key");
  }
  assertValidPoint(raw);
  if (!bytesEqual(exportRaw(key), raw) || keyId !== keyIdOf(raw)) {
    throw new KeyError("trusted key's fields do not describe one Ed25519 public key");
  }
  // Only a frozen object is remembered: `key` (the field verification uses) cannot be swapped afterwards.
  if (Object.isFrozen(publicKey)) validated.add(publicKey);
}

/** A fresh Ed25519 key pair: PKCS8 PEM private key and SPKI PEM public key. */
export function generateSigningKeyPair(): { privateKeyPem: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519", {
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  return { privateKeyPem: privateKey, publicKeyPem: publicKey };
}
