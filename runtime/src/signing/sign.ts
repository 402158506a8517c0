/**
 * Sign and verify writ objects: Ed25519 over PAE(payloadType, JCS(object without "signature")), docs/signing.md.
 */
import { sign as edSign, verify as edVerify } from "node:crypto";
import { SignatureFormatError } from "../errors.js";
import { NODE_ED25519, assertSigningKey, selfVerificationFailed, type Ed25519Engine, type SelfVerifyingSignature } from "./engine.js";
import { assertUsablePublicKey, type PublicKey, type SigningKey } from "./keys.js";
import { canonicalSigningInput, signingInput } from "./pae.js";
import type { PayloadType } from "./payload-types.js";

const SIGNATURE_B64 = /^[A-Za-z0-9+/]{86}==$/;

/**
 * Strictly decodes a writ signature: exactly 88 characters of standard-alphabet base64 ending in `==`, decoding to
 * 64 bytes, in its one canonical spelling (the unused low bits of the last character are zero). Anything else,
 * including URL-safe base64, missing padding, whitespace, or a different length, is refused.
 * @throws SignatureFormatError
 */
export function decodeSignature(b64: string): Uint8Array {
  if (typeof b64 !== "string" || b64.length !== 88 || !SIGNATURE_B64.test(b64)) {
    throw new SignatureFormatError();
  }
  const bytes = Buffer.from(b64, "base64");
  if (bytes.length !== 64 || bytes.toString("base64") !== b64) {
    throw new SignatureFormatError("signature is not canonical base64 of 64 bytes");
  }
  return new Uint8Array(bytes);
}

/**
 * Signs `object` (its own `signature` member, if any, is left out) in the domain `payloadType` and returns the
 * standard padded base64 signature. The signature is verified with `key.publicKey` before it is returned.
 * @throws CanonicalizationError when the object is not plain JSON data
 * @throws KeyError when the key is unusable or its halves do not match (self-verification failed)
 */
export function signObject(payloadType: PayloadType, object: object, key: SigningKey): string {
  return signInput(signingInput(payloadType, object), key);
}

/**
 * Signs an object given as its canonical JSON text (see `attest/attestation-text.ts`), as {@link signObject} signs
 * the object itself: the caller guarantees `canonicalText` is the JCS form of the object without its `signature`.
 */
export function signCanonical(payloadType: PayloadType, canonicalText: string, key: SigningKey): string {
  return signInput(canonicalSigningInput(payloadType, canonicalText), key);
}

/**
 * {@link signCanonical} through an {@link Ed25519Engine} (by default node:crypto on libuv's thread pool, so a
 * server's event loop keeps serving while the curve operations run). Resolves as soon as the signature exists; its
 * self-verification (spec 2.2) may still be running then, so a caller can overlap it with other work (the authorizer
 * overlaps it with the replay store's fsync).
 * INVARIANT (no unverified signature leaves): a caller releases `signature` only after `verified` resolved.
 */
export function signCanonicalAsync(
  payloadType: PayloadType,
  canonicalText: string,
  key: SigningKey,
  engine: Ed25519Engine = NODE_ED25519,
): Promise<SelfVerifyingSignature> {
  return engine.sign(canonicalSigningInput(payloadType, canonicalText), key);
}

/**
 * {@link signObject} through an {@link Ed25519Engine} (the signer's: libsodium in the sidecar, about half node:crypto's
 * instructions a signature): the signature once it self-verified, as `signObject` returns it.
 * @throws KeyError when the key is unusable or self-verification failed
 */
export async function signObjectVerified(
  payloadType: PayloadType,
  object: object,
  key: SigningKey,
  engine: Ed25519Engine = NODE_ED25519,
): Promise<string> {
  const signed = await engine.sign(signingInput(payloadType, object), key);
  await signed.verified;
  return signed.signature;
}

function signInput(input: Uint8Array, key: SigningKey): string {
  const privateKey = assertSigningKey(key);
  const signature = edSign(null, input, privateKey);
  return checkedSignature(signature, signature.length === 64 && edVerify(null, input, key.publicKey.key, signature));
}

/** Self-verification (spec 2.2): a signature leaves only once it verified against the signer's public key. */
function checkedSignature(signature: Buffer, verified: boolean): string {
  if (signature.length !== 64 || !verified) throw selfVerificationFailed();
  return signature.toString("base64");
}

/**
 * Verifies `signatureB64` over `object` in the domain `payloadType` against pinned `trusted` keys.
 * Returns the trusted key that verifies, or null: also null for a malformed signature (use
 * {@link decodeSignature} to learn why). Every trusted key is tried (no early exit), so timing does not reveal
 * which key matched beyond the returned value.
 * `engine`: whose curve arithmetic checks it (node:crypto by default; the sidecar's is libsodium).
 * @throws KeyError when a trusted key is not a usable Ed25519 public key (e.g. small order); a configuration error
 * @throws CanonicalizationError when the object is not plain JSON data
 */
export function verifyObject(
  payloadType: PayloadType,
  object: object,
  signatureB64: string,
  trusted: readonly PublicKey[],
  engine: Ed25519Engine = NODE_ED25519,
): PublicKey | null {
  for (const key of trusted) assertUsablePublicKey(key);
  const input = signingInput(payloadType, object);
  let signature: Uint8Array;
  let wellFormed = true;
  try {
    signature = decodeSignature(signatureB64);
  } catch (error) {
    if (!(error instanceof SignatureFormatError)) throw error;
    signature = new Uint8Array(64);
    wellFormed = false;
  }
  let match: PublicKey | null = null;
  for (const key of trusted) {
    const ok = engine.verify(input, signature, key);
    if (ok && match === null) match = key;
  }
  return wellFormed ? match : null;
}
