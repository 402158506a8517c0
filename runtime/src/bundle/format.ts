import { POLICY_ID_PATTERN as WIRE_POLICY_ID_PATTERN } from "@writ/wire/constants";
import semver from "semver";
import { canonicalJson } from "../canonical/jcs.js";
import { sha256Hex } from "../canonical/digest.js";
import type { PolicyIr } from "../ir/types.js";
import type { PAYLOAD_TYPES } from "../signing/payload-types.js";

/**
 * The bundle under `policies/{policyId}/{version}/`. Only the files the manifest names are bundle content;
 * anything else in the directory (a policy's test file, for instance) is ignored by the runtime.
 *
 * INVARIANT (bundle digest covers every file): `bundle_hash` is SHA-256 over the JCS form of the manifest
 * without `bundle_hash`, and the manifest carries the SHA-256 of every bundle file's exact bytes, so
 * changing any byte of any bundle file changes `bundle_hash`. Upheld by the compiler's emit phase
 * (`buildManifest`) and checked by `loadBundle`.
 */
export const MANIFEST_VERSION = 1;

/** The signals-schema and IR contract a runtime must support to load the bundle (`supportedSchemaVersions`). */
export const SCHEMA_VERSION = "1.0.0";

export const BUNDLE_FILES = {
  source: "policy.writ",
  schema: "signals.schema.json",
  ir: "policy.ir.json",
} as const;
export const MANIFEST_FILE = "bundle.manifest.json";
export const SIGNATURE_FILE = "bundle.sig";

export interface BundleManifest {
  readonly manifestVersion: typeof MANIFEST_VERSION;
  readonly policyId: string;
  readonly version: string;
  readonly schemaVersion: string;
  readonly governs: string;
  readonly compiler: { readonly name: string; readonly version: string };
  /** File name to lowercase hex SHA-256 of its bytes, for every file in BUNDLE_FILES. */
  readonly files: Readonly<Record<string, string>>;
  readonly bundle_hash: string;
}

/** `bundle.sig`: one Ed25519 signature over the manifest in the bundle signing domain (docs/signing.md). */
export interface BundleSignature {
  readonly payloadType: typeof PAYLOAD_TYPES.bundle;
  readonly keyId: string;
  readonly signature: string;
}

/**
 * The policy id names a directory: lowercase segments joined by single `.`, `_` or `-`; never `..`. The rule is the
 * wire format's (`POLICY_ID_PATTERN` of @writ/wire's constants, a JSON Schema pattern there).
 */
export const POLICY_ID_PATTERN = new RegExp(WIRE_POLICY_ID_PATTERN);

/** A lowercase hex SHA-256, as in `files` and `bundle_hash`. */
export const SHA256_HEX_PATTERN = /^[0-9a-f]{64}$/;

/**
 * The most characters of `{policyId}@{version}`. Every name built from it (the archive `{policyId}@{version}.bundle.json`,
 * a bundle directory) then fits the 255 bytes a file name may have, and a source cannot list a policy id of megabytes
 * (which would be in every URL and message about it).
 */
export const MAX_BUNDLE_REF_LENGTH = 200;

/**
 * Whether `policyId` and `version` can name a bundle: a policy id of POLICY_ID_PATTERN and a strict semver version
 * without build metadata, at most MAX_BUNDLE_REF_LENGTH characters with the `@` between them. Both become path
 * segments (a directory, an archive's file name), and neither can then contain `/` or be `..`.
 */
export function isBundleRef(policyId: unknown, version: unknown): boolean {
  return (
    typeof policyId === "string" &&
    typeof version === "string" &&
    policyId.length + 1 + version.length <= MAX_BUNDLE_REF_LENGTH &&
    POLICY_ID_PATTERN.test(policyId) &&
    semver.valid(version) === version
  );
}

export function computeBundleHash(manifest: Omit<BundleManifest, "bundle_hash">): string {
  const { bundle_hash: _ignored, ...rest } = manifest as BundleManifest;
  return sha256Hex(canonicalJson(rest));
}

export function buildManifest(
  fields: Omit<BundleManifest, "bundle_hash" | "manifestVersion" | "files" | "schemaVersion">,
  files: ReadonlyMap<string, Uint8Array>,
): BundleManifest {
  const hashes: Record<string, string> = {};
  for (const [name, bytes] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) hashes[name] = sha256Hex(bytes);
  const body = { manifestVersion: MANIFEST_VERSION, ...fields, schemaVersion: SCHEMA_VERSION, files: hashes } as const;
  return { ...body, bundle_hash: computeBundleHash(body) };
}

/** Bundle JSON files are pretty-printed with a final newline; they are hashed as written. */
export function serializeJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * policy.ir.json as written: serializeJson's form, except that in the zone tables (`zones`, the IR's last member) each
 * `[instant, offset]` pair takes one line, so a table of 258 pairs is 258 lines and a tz release's change is a diff of
 * the pairs it moved. An IR without zones is exactly serializeJson's.
 */
export function serializeIr(ir: PolicyIr): string {
  const text = serializeJson(ir);
  const zones = text.indexOf('\n  "zones": {');
  if (zones < 0) return text;
  return text.slice(0, zones) + text.slice(zones).replace(/\[\n\s+(-?\d+),\n\s+(-?\d+)\n\s+\]/g, "[$1, $2]");
}
