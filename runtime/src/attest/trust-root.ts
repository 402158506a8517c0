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
  /**
   * Runtimes, by `runtimeHash`, whose decisions verifiers pinned to this trust root accept besides their own
   * (docs/attestations.md, "Runtime upgrades"): a runtime whose decision semantics differ, accepted on purpose.
   */
  readonly acceptedRuntimeHashes?: readonly string[];
}

/**
 * The trust root file: `{"trustRootVersion": "...", "keys": ["-----BEGIN PUBLIC KEY-----...", ...]}`, optionally
 * with `"acceptedRuntimeHashes": ["<64 lowercase hex>", ...]`.
 */
export interface TrustRootDocument {
  readonly trustRootVersion: string;
  readonly keys: readonly string[];
  readonly acceptedRuntimeHashes?: readonly string[];
}

const VERSION = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
const RUNTIME_HASH_FORM = /^[0-9a-f]{64}$/;

/**
 * @throws KeyError for an invalid version, an unusable key (small order included), a key listed twice, or an accepted
 * runtime hash that is not 64 lowercase hex digits or is listed twice
 */
export function createTrustRoot(version: string, keys: readonly PublicKey[], acceptedRuntimeHashes: readonly string[] = []): TrustRoot {
  if (!VERSION.test(version))
    throw new KeyError(`trust root version \`${version}\` must be 1-64 letters, digits, \`.\`, \`_\`, \`:\` or \`-\``);
  if (keys.length === 0) throw new KeyError("a trust root needs at least one key");
  const ids = new Set<string>();
  for (const k of keys) {
    if (ids.has(k.keyId)) throw new KeyError(`key \`${k.keyId}\` is listed twice in the trust root`);
    ids.add(k.keyId);
  }
  const hashes = new Set<string>();
  for (const h of acceptedRuntimeHashes) {
    if (!RUNTIME_HASH_FORM.test(h)) throw new KeyError(`accepted runtime hash \`${h}\` is not a runtimeHash (64 lowercase hex digits)`);
    if (hashes.has(h)) throw new KeyError(`accepted runtime hash \`${h}\` is listed twice in the trust root`);
    hashes.add(h);
  }
  return Object.freeze({ version, keys: Object.freeze([...keys]), acceptedRuntimeHashes: Object.freeze([...acceptedRuntimeHashes]) });
}

/** Reads a trust root document (strictly parsed JSON) and loads every key in it. @throws KeyError */
export function trustRootFromDocument(value: unknown): TrustRoot {
  const doc = value as Partial<Record<keyof TrustRootDocument, unknown>> | null;
  if (
    typeof doc !== "object" ||
    doc === null ||
    Array.isArray(doc) ||
    !Array.isArray(doc.keys) ||
    typeof doc.trustRootVersion !== "string"
  ) {
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
    acceptedRuntimeHashesOf(doc.acceptedRuntimeHashes),
  );
}

/** The document's `acceptedRuntimeHashes`: absent, or a list of strings (their form is checked by createTrustRoot). */
function acceptedRuntimeHashesOf(value: unknown): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value))
    throw new KeyError("trust root `acceptedRuntimeHashes` must be a list of runtime hashes (64 lowercase hex digits)");
  return value.map((h: unknown, i) => {
    if (typeof h !== "string") throw new KeyError(`trust root accepted runtime hash ${i} is not a string`);
    return h;
  });
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
