/**
 * Bearer authentication (spec 5): `Authorization: Bearer <SERVICE_API_KEY>`.
 *
 * Both sides are hashed before the constant-time comparison: `timingSafeEqual` needs equal lengths, and comparing
 * fixed-length digests keeps the key's length from showing in the timing too.
 */
import { createHash, timingSafeEqual } from "node:crypto";

const BEARER = /^Bearer +(\S+) *$/i;

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

export function bearerMatches(header: string | undefined, apiKey: string): boolean {
  const token = header === undefined ? undefined : BEARER.exec(header)?.[1];
  // A missing or malformed header still costs one comparison, so its timing matches a wrong key's.
  return timingSafeEqual(digest(token ?? ""), digest(apiKey)) && token !== undefined;
}
