/**
 * A bundle source's signed index, `index.json` (docs/bundles.md, its format there): which bundles the source serves,
 * each as the archive `archiveFileName(policyId, version)` beside the index, and which version each alias names. It is
 * signed with a bundle key over the `index` object in its own domain (PAYLOAD_TYPES.bundleIndex), so neither a bundle
 * signature nor any other writ signature verifies as an index signature.
 *
 * INVARIANT (an index is trusted only whole): `readSourceIndex` returns an index only when its signature verifies
 * against a pinned key, every member is valid, and it has not expired. Rollback protection is the reader's: it keeps
 * the highest `serial` it accepted and refuses a lower one (a replayed older index); `expiresAt` bounds how long a
 * source can be frozen on one index (a mirror that stops updating).
 */
import { canonicalBytes } from "../canonical/jcs.js";
import { BundleError, StrictJsonError, type BundleErrorCode } from "../errors.js";
import { parseStrictJson } from "../json/strict-parse.js";
import { isTimestamp } from "../signals/timestamp.js";
import type { PublicKey, SigningKey } from "../signing/keys.js";
import { PAYLOAD_TYPES } from "../signing/payload-types.js";
import { signObject, verifyObject } from "../signing/sign.js";
import { POLICY_ID_PATTERN, SHA256_HEX_PATTERN, isBundleRef } from "./format.js";
import { isJsonObject } from "./json-object.js";
import { shown, shownValue } from "./shown.js";

export const INDEX_FILE = "index.json";
export const INDEX_VERSION = 1;

/**
 * The largest index read or written. An entry is about 150 bytes, so this holds tens of thousands of bundles, while
 * bounding what a remote source can make a reader hold on every poll.
 */
export const MAX_INDEX_BYTES = 4 * 1024 * 1024;

/** An alias starts with a letter, so it is never a semver version (which starts with a digit). */
export const ALIAS_PATTERN = /^[a-z][a-z0-9-]{0,62}$/;

export interface SourceIndexEntry {
  readonly policyId: string;
  readonly version: string;
  readonly bundle_hash: string;
}

export interface SourceAlias {
  readonly policyId: string;
  readonly alias: string;
  readonly version: string;
}

/**
 * The highest serial an index may have: 2^53 − 2^32. A reader refuses any serial not above the one it serves, so an
 * index at the top of the safe integers (2^53 − 1) would be the source's last: nothing could ever follow it. Below this
 * bound every accepted serial leaves at least 2^32 − 1 higher ones (one a second for 136 years), and serials that are a
 * Unix time in seconds, milliseconds or microseconds all fit.
 */
export const MAX_SERIAL = 2 ** 53 - 2 ** 32;

export interface SourceIndex {
  readonly indexVersion: typeof INDEX_VERSION;
  /** Safe integer from 1 to MAX_SERIAL, higher in every index the source publishes. */
  readonly serial: number;
  /** RFC 3339. */
  readonly issuedAt: string;
  /** RFC 3339, after `issuedAt`; a reader refuses the index from then on. */
  readonly expiresAt?: string;
  readonly bundles: readonly SourceIndexEntry[];
  readonly aliases: readonly SourceAlias[];
}

const INDEX_MEMBERS = ["aliases", "bundles", "expiresAt", "indexVersion", "issuedAt", "serial"] as const;
const ENTRY_MEMBERS = ["bundle_hash", "policyId", "version"] as const;
const ALIAS_MEMBERS = ["alias", "policyId", "version"] as const;
const SIGNATURE_MEMBERS = ["keyId", "payloadType", "signature"] as const;
const ENVELOPE_MEMBERS = ["index", "signature"] as const;

/**
 * The bytes of `index.json` for `index`, signed with `key`. The index is checked as a reader checks it (all but
 * expiry), so no invalid index is ever signed.
 * @throws BundleError (INDEX_INVALID) saying what is wrong
 * @throws KeyError when the key is unusable
 */
export function signSourceIndex(index: SourceIndex, key: SigningKey): Uint8Array {
  const body = checkSourceIndex(index, INDEX_FILE);
  const signature = {
    payloadType: PAYLOAD_TYPES.bundleIndex,
    keyId: key.keyId,
    signature: signObject(PAYLOAD_TYPES.bundleIndex, body, key),
  };
  const bytes = canonicalBytes({ index: body, signature });
  if (bytes.length > MAX_INDEX_BYTES)
    refuse("INDEX_INVALID", `index would have ${bytes.length} bytes; an index may have at most ${MAX_INDEX_BYTES}`, INDEX_FILE);
  return bytes;
}

/**
 * A source's `index.json`, trusted: strictly parsed, its signature verified against the pinned `trustedKeys` in the
 * bundle index domain, every member valid, not expired at `now`. `signedBy` is the keyId of the key that verified it.
 * @throws BundleError: INDEX_INVALID (not an index), INDEX_SIGNATURE_INVALID (no pinned key verifies it, or it is
 *   signed in another domain), INDEX_EXPIRED (`expiresAt` is not after `now`); its `bundleDir` is `origin`
 * @throws KeyError when a pinned key is unusable (a configuration error)
 */
export function readSourceIndex(
  bytes: Uint8Array,
  trustedKeys: readonly PublicKey[],
  options: { readonly now: Date; readonly origin: string },
): { readonly index: SourceIndex; readonly signedBy: string } {
  const { origin } = options;
  const invalid = (why: string): never => refuse("INDEX_INVALID", `index ${why}`, origin);
  if (bytes.length > MAX_INDEX_BYTES) invalid(`has ${bytes.length} bytes; an index may have at most ${MAX_INDEX_BYTES}`);
  let text = "";
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    invalid("is not UTF-8 text");
  }
  let value: unknown;
  try {
    // Depth 4: the envelope, the index, its lists, their entries.
    value = parseStrictJson(text, { maxDepth: 4 });
  } catch (e) {
    if (!(e instanceof StrictJsonError)) throw e;
    invalid(`is not valid JSON: ${e.message}`);
  }
  const envelope = members(value, ENVELOPE_MEMBERS, [], "index file", origin);
  const signature = members(envelope["signature"], SIGNATURE_MEMBERS, [], "`signature`", origin);
  if (SIGNATURE_MEMBERS.some((m) => typeof signature[m] !== "string")) invalid("has a `signature` whose members are not all strings");
  if (signature["payloadType"] !== PAYLOAD_TYPES.bundleIndex) {
    refuse(
      "INDEX_SIGNATURE_INVALID",
      `index is signed as \`${shownValue(signature["payloadType"])}\`, not as a bundle index (\`${PAYLOAD_TYPES.bundleIndex}\`)`,
      origin,
    );
  }
  if (!isJsonObject(envelope["index"])) return invalid("has `index` that is not an object");
  if (trustedKeys.length === 0) refuse("INDEX_SIGNATURE_INVALID", "index cannot be verified: no trusted bundle key is configured", origin);
  const key = verifyObject(PAYLOAD_TYPES.bundleIndex, envelope["index"], signature["signature"] as string, trustedKeys);
  if (!key) return refuse("INDEX_SIGNATURE_INVALID", "index signature does not verify against any trusted key", origin);
  const index = checkSourceIndex(envelope["index"], origin);
  if (index.expiresAt !== undefined && Date.parse(index.expiresAt) <= options.now.getTime()) {
    refuse("INDEX_EXPIRED", `index expired at \`${shownValue(index.expiresAt)}\` (serial ${index.serial})`, origin);
  }
  return { index, signedBy: key.keyId };
}

/**
 * `value` as a valid index, rebuilt from its known members only.
 * @throws BundleError (INDEX_INVALID) saying what is wrong
 */
function checkSourceIndex(value: unknown, origin: string): SourceIndex {
  const invalid = (why: string): never => refuse("INDEX_INVALID", `index ${why}`, origin);
  const index = members(value, INDEX_MEMBERS, ["expiresAt"], "`index`", origin);
  const { indexVersion, serial, issuedAt, expiresAt } = index;
  if (indexVersion !== INDEX_VERSION) invalid(`has indexVersion \`${shownValue(indexVersion)}\`; this runtime reads ${INDEX_VERSION}`);
  if (typeof serial !== "number" || !Number.isSafeInteger(serial) || serial < 1)
    invalid(`has serial \`${shownValue(serial)}\`; a serial is a positive safe integer`);
  if ((serial as number) > MAX_SERIAL) {
    invalid(
      `has serial ${String(serial)}; a serial is at most ${MAX_SERIAL} (2^53 − 2^32), so that a later index can still have a higher one`,
    );
  }
  if (typeof issuedAt !== "string" || !isTimestamp(issuedAt))
    invalid(`has issuedAt \`${shownValue(issuedAt)}\`, not an RFC 3339 date-time`);
  if (expiresAt !== undefined) {
    if (typeof expiresAt !== "string" || !isTimestamp(expiresAt))
      invalid(`has expiresAt \`${shownValue(expiresAt)}\`, not an RFC 3339 date-time`);
    if (Date.parse(expiresAt as string) <= Date.parse(issuedAt as string))
      invalid(`expires (\`${shownValue(expiresAt)}\`) before it is issued (\`${shownValue(issuedAt)}\`)`);
  }
  if (!Array.isArray(index["bundles"]) || !Array.isArray(index["aliases"]))
    return invalid("has `bundles` or `aliases` that is not an array");

  const bundles: SourceIndexEntry[] = [];
  const listed = new Set<string>();
  for (const raw of index["bundles"] as unknown[]) {
    const entry = members(raw, ENTRY_MEMBERS, [], "bundle entry", origin);
    const { policyId, version, bundle_hash } = entry;
    if (!isBundleRef(policyId, version))
      invalid(`lists policy \`${shownValue(policyId)}\` version \`${shownValue(version)}\`, not a valid policy id and version`);
    const ref = `${policyId as string}@${version as string}`;
    if (typeof bundle_hash !== "string" || !SHA256_HEX_PATTERN.test(bundle_hash))
      invalid(`lists \`${shown(ref)}\` with a \`bundle_hash\` that is not 64 lowercase hex digits`);
    if (listed.has(ref)) invalid(`lists \`${shown(ref)}\` twice`);
    listed.add(ref);
    bundles.push({ policyId: policyId as string, version: version as string, bundle_hash: bundle_hash as string });
  }

  const aliases: SourceAlias[] = [];
  const named = new Set<string>();
  for (const raw of index["aliases"] as unknown[]) {
    const entry = members(raw, ALIAS_MEMBERS, [], "alias entry", origin);
    const { policyId, alias, version } = entry;
    if (typeof policyId !== "string" || !POLICY_ID_PATTERN.test(policyId))
      invalid(`has an alias for \`${shownValue(policyId)}\`, not a valid policy id`);
    if (typeof alias !== "string" || !ALIAS_PATTERN.test(alias))
      invalid(`has alias \`${shownValue(alias)}\`; an alias is a lowercase letter, then up to 62 lowercase letters, digits or \`-\``);
    const name = `${policyId as string}@${alias as string}`;
    if (named.has(name)) invalid(`has alias \`${shown(name)}\` twice`);
    named.add(name);
    if (typeof version !== "string" || !listed.has(`${policyId as string}@${version}`))
      invalid(`has alias \`${shown(name)}\` for version \`${shownValue(version)}\`, which it does not list`);
    aliases.push({ policyId: policyId as string, alias: alias as string, version: version as string });
  }
  return {
    indexVersion: INDEX_VERSION,
    serial: serial as number,
    issuedAt: issuedAt as string,
    ...(expiresAt === undefined ? {} : { expiresAt: expiresAt as string }),
    bundles,
    aliases,
  };
}

/**
 * `value` as an object with exactly the members `known` (those in `optional` may be absent).
 * @throws BundleError (INDEX_INVALID) naming `what`
 */
function members(
  value: unknown,
  known: readonly string[],
  optional: readonly string[],
  what: string,
  origin: string,
): Record<string, unknown> {
  if (!isJsonObject(value)) return refuse("INDEX_INVALID", `index: ${what} is not a JSON object`, origin);
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) refuse("INDEX_INVALID", `index: ${what} has unknown member \`${shown(key)}\``, origin);
  }
  for (const key of known) {
    if (!optional.includes(key) && !Object.hasOwn(value, key)) refuse("INDEX_INVALID", `index: ${what} lacks \`${key}\``, origin);
  }
  return value;
}

function refuse(code: BundleErrorCode, message: string, origin: string): never {
  throw new BundleError(code, message, origin);
}
