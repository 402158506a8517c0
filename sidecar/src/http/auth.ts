/**
 * Bearer authentication (spec 5): `Authorization: Bearer <key>`, where each configured key opens its scopes
 * (http/scopes.ts).
 *
 * Both sides are hashed before the constant-time comparison: `timingSafeEqual` needs equal lengths, and comparing
 * fixed-length digests keeps the key's length from showing in the timing too. The key sent is compared with every
 * configured key, whichever matches, so the timing does not say which one did.
 */
import { hash, timingSafeEqual } from "node:crypto";
import type { KeyGrant, Scope } from "./scopes.js";

const BEARER = /^Bearer +(\S+) *$/i;

/** One-shot (no Hash object): this runs on every request. */
function digest(value: string): Buffer {
  return hash("sha256", value, "buffer");
}

/** A check of `Authorization` headers: the scopes the key sent opens, none for a missing, malformed or unknown one. */
export function bearerCheck(grants: readonly KeyGrant[]): (header: string | undefined) => ReadonlySet<Scope> {
  const expected = grants.map(({ key, scopes }) => ({ digest: digest(key), scopes }));
  return (header) => {
    const token = header === undefined ? undefined : BEARER.exec(header)?.[1];
    // A missing or malformed header still costs every comparison, so its timing matches a wrong key's.
    const sent = digest(token ?? "");
    const opened = new Set<Scope>();
    for (const grant of expected) {
      if (timingSafeEqual(sent, grant.digest) && token !== undefined) for (const scope of grant.scopes) opened.add(scope);
    }
    return opened;
  };
}
