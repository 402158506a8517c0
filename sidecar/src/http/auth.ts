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

/** A check of `Authorization` headers against `apiKey` (whose digest is taken once). */
export function bearerCheck(apiKey: string): (header: string | undefined) => boolean {
  const expected = digest(apiKey);
  return (header) => {
    const token = header === undefined ? undefined : BEARER.exec(header)?.[1];
    // A missing or malformed header still costs one comparison, so its timing matches a wrong key's.
    return timingSafeEqual(digest(token ?? ""), expected) && token !== undefined;
  };
}
