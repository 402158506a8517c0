import { hash } from "node:crypto";

/**
 * Lowercase hex SHA-256 of `data`; a string is hashed as its UTF-8 bytes. One-shot `crypto.hash` avoids a Hash
 * object per call: two digests are taken for every attestation.
 */
export function sha256Hex(data: string | Uint8Array): string {
  return hash("sha256", data, "hex");
}

/** SHA-256 of `data` as bytes, one-shot like `sha256Hex`: the Merkle tree's leaves and nodes (audit-log/merkle.ts). */
export function sha256(data: Uint8Array): Uint8Array {
  const out = hash("sha256", data, "buffer");
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}
