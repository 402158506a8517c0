/**
 * libsodium's Ed25519 for the sidecar's signing path (runtime `Ed25519Engine`): it signs and verifies in about half
 * node:crypto's time (cost: docs/benchmarks.md, "Sidecar"). With
 * SERVICE_SIGNING_THREADS=0 it signs on the event loop: both curve operations together cost less CPU than node's
 * thread-pool hand-offs save. Otherwise signing/pool.ts signs with it on its threads, and `verify` alone runs here.
 * libsodium's verify also refuses small-order points and non-canonical encodings (docs/signing.md): never weaker than
 * node's. It verifies others' signatures too (`verify`: attestations sent to `/verify` and `/confirm-execution`, Surface
 * B's stored records), against the trust root's keys.
 */
import { createRequire } from "node:module";
import {
  KeyError,
  assertSigningKey,
  selfVerificationFailed,
  type Ed25519Engine,
  type PublicKey,
  type SelfVerifyingSignature,
  type SigningKey,
} from "@writ/runtime";
import type { Sodium } from "sodium-native";

/** libsodium's secret key: the RFC 8032 seed followed by the public key. Derived once per key object. */
const secretKeys = new WeakMap<SigningKey, Buffer>();

/**
 * libsodium's secret key of `key`, once its halves are checked to match (also what the signing pool gives its threads).
 * @throws KeyError when `key` is not a usable Ed25519 signing key, or its private half's public key is not `key.publicKey`
 */
export function secretKeyOf(key: SigningKey): Buffer {
  let secret = secretKeys.get(key);
  if (secret === undefined) {
    // The runtime's own check: an Ed25519 private key whose public half is usable (not small order).
    const jwk = assertSigningKey(key).export({ format: "jwk" });
    const publicHalf = Buffer.from(jwk.x!, "base64url");
    // The signature is checked against key.publicKey: a private key whose own public half differs can never pass.
    if (!publicHalf.equals(key.publicKey.raw)) throw new KeyError("signing key and its public key do not match");
    secret = Buffer.concat([Buffer.from(jwk.d!, "base64url"), publicHalf]);
    secretKeys.set(key, secret);
  }
  return secret;
}

function engineOver(sodium: Sodium): Ed25519Engine {
  return Object.freeze({
    name: "libsodium",
    sign(input: Uint8Array, key: SigningKey): Promise<SelfVerifyingSignature> {
      try {
        const signature = Buffer.allocUnsafe(sodium.crypto_sign_BYTES);
        sodium.crypto_sign_detached(signature, input, secretKeyOf(key));
        const verified = sodium.crypto_sign_verify_detached(signature, input, key.publicKey.raw);
        return Promise.resolve({
          signature: signature.toString("base64"),
          verified: verified ? Promise.resolve() : Promise.reject(selfVerificationFailed()),
        });
      } catch (e) {
        return Promise.reject(e);
      }
    },
    verify(input: Uint8Array, signature: Uint8Array, key: PublicKey): boolean {
      // sodium-native throws on a buffer of the wrong length: a signature of any other length is simply not valid.
      return signature.length === sodium.crypto_sign_BYTES && sodium.crypto_sign_verify_detached(signature, input, key.raw);
    },
  });
}

/** The libsodium engine, or null with the reason when sodium-native does not load on this platform. */
export function loadSodiumEngine(): { engine: Ed25519Engine } | { engine: null; reason: string } {
  try {
    const sodium = createRequire(import.meta.url)("sodium-native") as Sodium;
    return { engine: engineOver(sodium) };
  } catch (e) {
    return { engine: null, reason: e instanceof Error ? e.message : String(e) };
  }
}
