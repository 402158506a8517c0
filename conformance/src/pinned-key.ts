/**
 * The one public key the suite verifies signatures against (`--public-key`, SPKI PEM), checked once when it is
 * pinned (docs/signing.md, "Which keys are accepted"). node's crypto (OpenSSL) accepts small-order Ed25519 points as
 * public keys, and for the identity point it accepts the signature R = identity, S = 0 on every message; a suite
 * pinning such a key would pass any server. So the 8 small-order encodings and non-canonical encodings are refused.
 */
import { createHash, createPublicKey, type KeyObject } from "node:crypto";

export class PinnedKeyError extends Error {
  override readonly name = "PinnedKeyError";
}

export interface PinnedKey {
  readonly key: KeyObject;
  /** The RFC 8032 encoding (32 bytes). */
  readonly raw: Buffer;
  /** First 32 hex characters of SHA-256 over the raw key (docs/signing.md). */
  readonly keyId: string;
}

/** The 8 points of small order (docs/signing.md), as their canonical little-endian encodings. */
export const SMALL_ORDER_KEYS: readonly string[] = [
  "0100000000000000000000000000000000000000000000000000000000000000",
  "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
  "0000000000000000000000000000000000000000000000000000000000000000",
  "0000000000000000000000000000000000000000000000000000000000000080",
  "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
  "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
  "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
  "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
];

const P = 2n ** 255n - 19n;

/**
 * Why `raw` is not acceptable as a pinned Ed25519 public key, or null: not 32 bytes, a non-canonical encoding
 * (y >= p, or x = 0 with the sign bit set: y = 1 or y = p - 1), or one of the small-order points.
 */
export function keyProblem(raw: Uint8Array): string | null {
  if (raw.length !== 32) return `an Ed25519 public key is 32 bytes, this one is ${raw.length}`;
  const hex = Buffer.from(raw).toString("hex");
  let y = 0n;
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(raw[i]!);
  const sign = y >> 255n;
  y &= (1n << 255n) - 1n;
  if (y >= P) return "non-canonical point encoding (y >= p)";
  if (sign === 1n && (y === 1n || y === P - 1n)) return "non-canonical point encoding (x = 0 with the sign bit set)";
  if (SMALL_ORDER_KEYS.includes(hex)) return "small-order point (KEY_SMALL_ORDER): it would accept forged signatures";
  return null;
}

/** @throws PinnedKeyError saying why the PEM is not a usable key */
export function pinPublicKey(pem: string): PinnedKey {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: "pem" });
  } catch (e) {
    throw new PinnedKeyError(`not a PEM public key: ${(e as Error).message.toLowerCase()}`);
  }
  if (key.asymmetricKeyType !== "ed25519") throw new PinnedKeyError(`not an Ed25519 key (it is ${key.asymmetricKeyType ?? "unknown"})`);
  const jwk = key.export({ format: "jwk" });
  const raw = Buffer.from(jwk.x ?? "", "base64url");
  const problem = keyProblem(raw);
  if (problem !== null) throw new PinnedKeyError(`refused: ${problem}`);
  return { key, raw, keyId: createHash("sha256").update(raw).digest("hex").slice(0, 32) };
}
