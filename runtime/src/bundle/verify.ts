import { sha256Hex } from "../canonical/digest.js";
import { BundleError, StrictJsonError } from "../errors.js";
import { preparePolicy, type PreparedPolicy } from "../ir/evaluate.js";
import type { PolicyIr } from "../ir/types.js";
import { parseStrictJson } from "../json/strict-parse.js";
import { createSignalValidator, type SignalValidator } from "../signals/validate.js";
import type { PublicKey } from "../signing/keys.js";
import { PAYLOAD_TYPES } from "../signing/payload-types.js";
import { verifyObject } from "../signing/sign.js";
import {
  BUNDLE_FILES,
  MANIFEST_FILE,
  MANIFEST_VERSION,
  SIGNATURE_FILE,
  computeBundleHash,
  type BundleManifest,
  type BundleSignature,
} from "./format.js";
import { isJsonObject } from "./json-object.js";
import { shown, shownValue } from "./shown.js";

export interface BundleTrust {
  /** Pinned keys a `bundle.sig` must verify against. */
  readonly trustedKeys?: readonly PublicKey[];
  /** Refuse bundles without a `bundle.sig` that verifies against `trustedKeys`. */
  readonly requireSignature?: boolean;
}

export interface LoadedBundle {
  /** Where the bundle came from: its directory, or the origin of its archive (a file name or URL). */
  readonly dir: string;
  readonly manifest: BundleManifest;
  readonly ir: PolicyIr;
  readonly schema: object;
  readonly policy: PreparedPolicy;
  readonly validateSignals: SignalValidator;
  /** keyId of the trusted key that verified `bundle.sig`; null when unsigned or no keys were given. */
  readonly signedBy: string | null;
}

/** The bundle a caller asked for; a bundle that names another is refused. */
export interface BundleExpectation {
  readonly policyId: string;
  readonly version: string;
  /** When given (e.g. from a signed source index), the manifest's `bundle_hash` must be this one. */
  readonly bundle_hash?: string;
}

/** Where the files came from, for error messages: `origin` is what errors name, `container` how messages call it. */
export interface BundleOrigin {
  readonly origin: string;
  readonly container: "directory" | "archive";
}

/**
 * Proves a bundle whole from its files (name to exact bytes) before anything uses it: the manifest, every file hash,
 * `bundle_hash`, the signature when keys are pinned, the IR naming the expected policy, then preparation. Throws
 * BundleError; never returns a bundle that failed any check, so a caller that keeps its last good bundle on error
 * never serves a tampered one.
 *
 * INVARIANT (one verification for every bundle source): a bundle directory (`loadBundle`) and a bundle archive
 * (`loadBundleArchive`) are both read into a file map and proven by this function alone, so what loads from one
 * loads from the other and no check exists in one path only.
 */
export function verifyBundleFiles(
  files: ReadonlyMap<string, Uint8Array>,
  from: BundleOrigin,
  expect: BundleExpectation,
  trust: BundleTrust,
): LoadedBundle {
  const { origin } = from;
  const manifestBytes = files.get(MANIFEST_FILE);
  if (manifestBytes === undefined)
    throw new BundleError("BUNDLE_NOT_FOUND", `no bundle at \`${origin}\` (missing \`${MANIFEST_FILE}\`)`, origin);
  const manifest = checkManifest(parseBundleJson(origin, MANIFEST_FILE, manifestBytes), from, expect);

  const contents = new Map<string, Uint8Array>();
  for (const [name, expected] of Object.entries(manifest.files)) {
    const bytes = files.get(name);
    if (bytes === undefined) throw new BundleError("BUNDLE_TAMPERED", `file \`${name}\` listed in the manifest is missing`, origin);
    if (sha256Hex(bytes) !== expected) {
      throw new BundleError("BUNDLE_TAMPERED", `file \`${name}\` does not match its hash in the manifest`, origin);
    }
    contents.set(name, bytes);
  }
  if (computeBundleHash(manifest) !== manifest.bundle_hash) {
    throw new BundleError("BUNDLE_TAMPERED", "`bundle_hash` does not match the manifest", origin);
  }
  if (expect.bundle_hash !== undefined && expect.bundle_hash !== manifest.bundle_hash) {
    throw new BundleError("BUNDLE_TAMPERED", `\`bundle_hash\` is \`${manifest.bundle_hash}\`, expected \`${expect.bundle_hash}\``, origin);
  }
  const signedBy = checkSignature(origin, manifest, files.get(SIGNATURE_FILE), trust);

  const ir = parseBundleJson(origin, BUNDLE_FILES.ir, contents.get(BUNDLE_FILES.ir)!) as PolicyIr;
  const schema = parseBundleJson(origin, BUNDLE_FILES.schema, contents.get(BUNDLE_FILES.schema)!) as object;
  if (ir.policyId !== expect.policyId || ir.version !== expect.version) {
    throw new BundleError("BUNDLE_INVALID", `the IR names another policy or version than its ${from.container}`, origin);
  }
  try {
    return { dir: origin, manifest, ir, schema, policy: preparePolicy(ir), validateSignals: createSignalValidator(schema), signedBy };
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new BundleError("BUNDLE_INVALID", `bundle cannot be prepared: ${shown(why)}`, origin);
  }
}

function checkSignature(origin: string, manifest: BundleManifest, raw: Uint8Array | undefined, trust: BundleTrust): string | null {
  const keys = trust.trustedKeys ?? [];
  if (raw === undefined) {
    if (trust.requireSignature) throw new BundleError("BUNDLE_UNSIGNED", "bundle is not signed and signatures are required", origin);
    return null;
  }
  if (keys.length === 0) {
    if (trust.requireSignature)
      throw new BundleError("BUNDLE_SIGNATURE_INVALID", "signatures are required but no trusted bundle key is configured", origin);
    return null;
  }
  const sig = parseBundleJson(origin, SIGNATURE_FILE, raw) as Partial<BundleSignature>;
  if (sig.payloadType !== PAYLOAD_TYPES.bundle || typeof sig.signature !== "string") {
    throw new BundleError("BUNDLE_SIGNATURE_INVALID", `\`${SIGNATURE_FILE}\` is not a writ bundle signature`, origin);
  }
  const key = verifyObject(PAYLOAD_TYPES.bundle, manifest, sig.signature, keys);
  if (!key) throw new BundleError("BUNDLE_SIGNATURE_INVALID", "bundle signature does not verify against any trusted key", origin);
  return key.keyId;
}

function checkManifest(value: unknown, from: BundleOrigin, expect: BundleExpectation): BundleManifest {
  const bad = (why: string): never => {
    throw new BundleError("BUNDLE_INVALID", `\`${MANIFEST_FILE}\` ${why}`, from.origin);
  };
  if (!isJsonObject(value)) return bad("is not a JSON object");
  const m = value as Partial<BundleManifest>;
  if (m.manifestVersion !== MANIFEST_VERSION)
    return bad(`has manifestVersion \`${shownValue(m.manifestVersion)}\`; this runtime reads ${MANIFEST_VERSION}`);
  if (m.policyId !== expect.policyId || m.version !== expect.version)
    return bad(`names another policy or version than its ${from.container}`);
  if (typeof m.bundle_hash !== "string" || typeof m.files !== "object" || m.files === null) return bad("lacks `files` or `bundle_hash`");
  for (const name of Object.values(BUNDLE_FILES)) {
    if (typeof m.files[name] !== "string") return bad(`does not list \`${name}\``);
  }
  for (const name of Object.keys(m.files)) {
    if (!(Object.values(BUNDLE_FILES) as string[]).includes(name)) return bad(`lists unknown file \`${shown(name)}\``);
  }
  return m as BundleManifest;
}

/** A bundle file's JSON, strictly parsed. @throws BundleError (BUNDLE_INVALID) naming the file */
export function parseBundleJson(origin: string, name: string, bytes: Uint8Array): unknown {
  try {
    return parseStrictJson(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (e) {
    if (e instanceof StrictJsonError || e instanceof TypeError) {
      throw new BundleError("BUNDLE_INVALID", `\`${name}\` is not valid JSON: ${e.message}`, origin);
    }
    throw e;
  }
}
