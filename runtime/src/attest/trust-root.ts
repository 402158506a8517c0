import { KeyError } from "../errors.js";
import { loadPublicKeyPem, type PublicKey, type SigningKey } from "../signing/keys.js";
import { NODE_ED25519, type Ed25519Engine } from "../signing/engine.js";

/**
 * A versioned set of pinned public keys. Signing keys rotate by publishing a new trust root version that
 * still holds the retired keys, so attestations signed before the rotation keep verifying.
 */
export interface TrustRoot {
  readonly version: string;
  readonly keys: readonly PublicKey[];
}

/** The trust root file: `{"trustRootVersion": "...", "keys": ["-----BEGIN PUBLIC KEY-----...", ...]}`. */
export interface TrustRootDocument {
  readonly trustRootVersion: string;
  readonly keys: readonly string[];
}

const VERSION = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

/** @throws KeyError for an invalid version, an unusable key (small order included) or a key listed twice */
export function createTrustRoot(version: string, keys: readonly PublicKey[]): TrustRoot {
  if (!VERSION.test(version)) throw new KeyError(`trust root version \`${version}\` must be 1-64 letters, digits, \`.\`, \`_\`, \`:\` or \`-\``);
  if (keys.length === 0) throw new KeyError("a trust root needs at least one key");
  const ids = new Set<string>();
  for (const k of keys) {
    if (ids.has(k.keyId)) throw new KeyError(`key \`${k.keyId}\` is listed twice in the trust root`);
    ids.add(k.keyId);
  }
  return Object.freeze({ version, keys: Object.freeze([...keys]) });
}

/** Reads a trust root document (strictly parsed JSON) and loads every key in it. @throws KeyError */
export function trustRootFromDocument(value: unknown): TrustRoot {
  const doc = value as Partial<TrustRootDocument> | null;
  if (typeof doc !== "object" || doc === null || !Array.isArray(doc.keys) || typeof doc.trustRootVersion !== "string") {
    throw new KeyError("trust root must be an object with `trustRootVersion` (string) and `keys` (list of SPKI PEM strings)");
  }
  return createTrustRoot(
    doc.trustRootVersion,
    doc.keys.map((pem: unknown, i) => {
      if (typeof pem !== "string") throw new KeyError(`trust root key ${i} is not a PEM string`);
      try {
        return loadPublicKeyPem(pem);
      } catch (e) {
        throw new KeyError(`trust root key ${i}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }),
  );
}

/** The key of `keyId` in the trust root, or undefined. */
export function trustedKey(root: TrustRoot, keyId: string): PublicKey | undefined {
  return root.keys.find((k) => k.keyId === keyId);
}

/** A signing key and the trust root that vouches for it: what every writ signature is made with. */
export interface Signer {
  readonly key: SigningKey;
  readonly trustRoot: TrustRoot;
  /** The curve operations of the asynchronous signing path (attestations, trust records, receipts). */
  readonly engine: Ed25519Engine;
}

/** @throws KeyError when the trust root does not hold the signing key's public half */
export function createSigner(key: SigningKey, trustRoot: TrustRoot, engine: Ed25519Engine = NODE_ED25519): Signer {
  if (!trustedKey(trustRoot, key.keyId)) {
    throw new KeyError(`signing key \`${key.keyId}\` is not in trust root \`${trustRoot.version}\``);
  }
  return Object.freeze({ key, trustRoot, engine });
}
