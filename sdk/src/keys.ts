/**
 * Keys, as an application holds them: PEM text (spec 5: SPKI public keys, a PKCS8 signing key). Verification
 * accepts only keys pinned here, never a key an attestation or an answer names (docs/signing.md).
 */
import {
  KeyError,
  createSigner,
  createTrustRoot,
  loadPublicKeyPem,
  loadSigningKeyPem,
  trustRootFromDocument,
  type Signer,
  type TrustRoot,
  type TrustRootDocument,
} from "@writ/runtime";
import { WritKeyError, type KeyErrorCode } from "./errors.js";

/** One SPKI PEM public key, several, or a trust root document (`{trustRootVersion, keys: [PEM, ...]}`). */
export type PinnedKeys = string | readonly string[] | TrustRootDocument;

/** The version given to keys pinned without a trust root document; verification warns that it differs from the signer's. */
const PINNED_VERSION = "pinned";
/** The sidecar's trust root version when none is configured (sidecar/src/context.ts): embedded attestations read alike. */
const LOCAL_VERSION = "writ-local-1";

/** Runs `load`, turning the runtime's key refusals into the SDK's. */
function keyed<T>(load: () => T): T {
  try {
    return load();
  } catch (e) {
    if (e instanceof KeyError) throw new WritKeyError(e.message, e.code as KeyErrorCode, { cause: e });
    throw e;
  }
}

/** @throws WritKeyError when a key is not a usable Ed25519 SPKI PEM key (small-order keys included) */
export function pinnedTrustRoot(keys: PinnedKeys): TrustRoot {
  return keyed(() => {
    if (typeof keys === "string") return createTrustRoot(PINNED_VERSION, [loadPublicKeyPem(keys)]);
    if (Array.isArray(keys)) return createTrustRoot(PINNED_VERSION, (keys as readonly string[]).map(loadPublicKeyPem));
    return trustRootFromDocument(keys);
  });
}

/**
 * The signer of an embedded authorizer: its key, vouched for by `trustRoot` (default: a trust root holding only
 * this key, as the sidecar makes one when none is configured).
 * @throws WritKeyError when the key is unusable or the trust root does not hold it
 */
export function signerOf(signingKeyPem: string, trustRoot?: TrustRootDocument): Signer {
  return keyed(() => {
    const key = loadSigningKeyPem(signingKeyPem);
    return createSigner(key, trustRoot ? trustRootFromDocument(trustRoot) : createTrustRoot(LOCAL_VERSION, [key.publicKey]));
  });
}
