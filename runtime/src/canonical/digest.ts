import { hash } from "node:crypto";

/**
 * Lowercase hex SHA-256 of `data`; a string is hashed as its UTF-8 bytes. One-shot `crypto.hash` (Node
 * 20.12+) avoids a Hash object per call: two digests are taken for every attestation.
 */
export function sha256Hex(data: string | Uint8Array): string {
  return hash("sha256", data, "hex");
}
