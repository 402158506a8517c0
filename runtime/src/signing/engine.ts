/**
 * The curve operations of the signing hot path (attestations, Surface B trust records and receipts): an Ed25519
 * signature over a signing input, then its self-verification (spec 2.2). By default node:crypto on libuv's thread
 * pool; a server can plug in a faster implementation (the sidecar uses libsodium, on the event loop or on signing
 * threads: docs/sidecar.md, "Signing" and "Signing threads").
 * Ed25519 is deterministic, so every engine must give node:crypto's signature byte for byte; the runtime's engine
 * contract test checks an engine against it.
 */
import { sign as edSign, verify as edVerify, type KeyObject } from "node:crypto";
import { KeyError } from "../errors.js";
import { assertUsablePublicKey, type PublicKey, type SigningKey } from "./keys.js";

/** A signature whose self-verification runs on: `verified` resolves once it passed, and rejects (KeyError) if not. */
export interface SelfVerifyingSignature {
  /** Standard padded base64 of the 64 signature bytes. */
  readonly signature: string;
  readonly verified: Promise<void>;
}

export interface Ed25519Engine {
  /** For logs and notices, e.g. `node:crypto` or `libsodium`. */
  readonly name: string;
  /**
   * Signs `input` with `key`. Resolves once the signature exists; `verified` may still be running then, so a caller
   * can overlap it with other work.
   * INVARIANT (no unverified signature leaves): a caller releases `signature` only after `verified` resolved.
   * @throws KeyError when `key` is not a usable Ed25519 signing key; SignerUnavailableError when an engine that signs
   *   on other threads lost the one holding the request, or is closed (nothing was signed: 503, the caller may retry)
   */
  sign(input: Uint8Array, key: SigningKey): Promise<SelfVerifyingSignature>;
  /**
   * Whether `signature` (64 bytes) is `key`'s signature of `input`, on the calling thread: what a verifier of others'
   * signatures uses (runtime `VerifierOptions.engine`). False for anything else, never a throw. An engine may refuse
   * more than node:crypto (libsodium refuses small-order and non-canonical points), never less.
   */
  verify(input: Uint8Array, signature: Uint8Array, key: PublicKey): boolean;
}

export function selfVerificationFailed(): KeyError {
  return new KeyError("signature failed self-verification: private and public key do not match");
}

/** @throws KeyError when `key` is not an Ed25519 private key with a usable public half */
export function assertSigningKey(key: SigningKey): KeyObject {
  const privateKey = key.privateKey as KeyObject | undefined;
  if (privateKey?.type !== "private" || privateKey.asymmetricKeyType !== "ed25519") {
    throw new KeyError("signing key is not an Ed25519 private key");
  }
  assertUsablePublicKey(key.publicKey);
  return privateKey;
}

/** node:crypto with both curve operations on libuv's thread pool, so the event loop keeps serving meanwhile. */
export const NODE_ED25519: Ed25519Engine = Object.freeze({
  name: "node:crypto",
  async sign(input: Uint8Array, key: SigningKey): Promise<SelfVerifyingSignature> {
    const privateKey = assertSigningKey(key);
    const signature = await new Promise<Buffer>((resolve, reject) =>
      edSign(null, input, privateKey, (e, s) => (e ? reject(e) : resolve(s))),
    );
    const verified = new Promise<void>((resolve, reject) => {
      if (signature.length !== 64) return reject(selfVerificationFailed());
      edVerify(null, input, key.publicKey.key, signature, (e, ok) => (e ? reject(e) : ok ? resolve() : reject(selfVerificationFailed())));
    });
    return { signature: signature.toString("base64"), verified };
  },
  verify(input: Uint8Array, signature: Uint8Array, key: PublicKey): boolean {
    return signature.length === 64 && edVerify(null, input, key.key, signature);
  },
});
