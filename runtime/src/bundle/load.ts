import { join } from "node:path";
import semver from "semver";
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
  POLICY_ID_PATTERN,
  SIGNATURE_FILE,
  computeBundleHash,
  type BundleManifest,
  type BundleSignature,
} from "./format.js";
import { readBundleFile } from "./read-file.js";

export interface BundleTrust {
  /** Pinned keys a `bundle.sig` must verify against. */
  readonly trustedKeys?: readonly PublicKey[];
  /** Refuse bundles without a `bundle.sig` that verifies against `trustedKeys`. */
  readonly requireSignature?: boolean;
}

export interface LoadOptions {
  /** Once aborted, the load stops before its next read and rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

export interface LoadedBundle {
  readonly dir: string;
  readonly manifest: BundleManifest;
  readonly ir: PolicyIr;
  readonly schema: object;
  readonly policy: PreparedPolicy;
  readonly validateSignals: SignalValidator;
  /** keyId of the trusted key that verified `bundle.sig`; null when unsigned or no keys were given. */
  readonly signedBy: string | null;
}

/**
 * Loads `root/{policyId}/{version}/` and proves it whole before anything uses it: every file hash, then
 * `bundle_hash`, then the signature when keys are pinned. Throws BundleError; never returns a bundle that
 * failed any check, so a caller that keeps its last good bundle on error never serves a tampered one.
 * Every file is read with `readBundleFile`: a FIFO, a device or an oversized file in a bundle is refused, never
 * waited on. A file that cannot be read is a BundleError too (BUNDLE_INVALID, naming the file), never a raw fs error.
 */
export async function loadBundle(root: string, policyId: string, version: string, trust: BundleTrust = {}, options: LoadOptions = {}): Promise<LoadedBundle> {
  const { signal } = options;
  // Path safety first: the id and version become directory names.
  if (!POLICY_ID_PATTERN.test(policyId) || semver.valid(version) !== version) {
    throw new BundleError("BUNDLE_NOT_FOUND", `no bundle for policy \`${policyId}\` version \`${version}\``, root);
  }
  const dir = join(root, policyId, version);
  const manifestBytes = await readBundleFile(dir, MANIFEST_FILE, signal);
  if (manifestBytes === null) throw new BundleError("BUNDLE_NOT_FOUND", `no bundle at \`${dir}\` (missing \`${MANIFEST_FILE}\`)`, dir);
  const manifest = checkManifest(parseJson(dir, MANIFEST_FILE, manifestBytes), dir, policyId, version);

  const contents = new Map<string, Uint8Array>();
  for (const [name, expected] of Object.entries(manifest.files)) {
    const bytes = await readBundleFile(dir, name, signal);
    if (bytes === null) throw new BundleError("BUNDLE_TAMPERED", `file \`${name}\` listed in the manifest is missing`, dir);
    if (sha256Hex(bytes) !== expected) {
      throw new BundleError("BUNDLE_TAMPERED", `file \`${name}\` does not match its hash in the manifest`, dir);
    }
    contents.set(name, bytes);
  }
  if (computeBundleHash(manifest) !== manifest.bundle_hash) {
    throw new BundleError("BUNDLE_TAMPERED", "`bundle_hash` does not match the manifest", dir);
  }
  const signedBy = await checkSignature(dir, manifest, trust, signal);

  const ir = parseJson(dir, BUNDLE_FILES.ir, contents.get(BUNDLE_FILES.ir)!) as PolicyIr;
  const schema = parseJson(dir, BUNDLE_FILES.schema, contents.get(BUNDLE_FILES.schema)!) as object;
  if (ir.policyId !== policyId || ir.version !== version) {
    throw new BundleError("BUNDLE_INVALID", "the IR names another policy or version than its directory", dir);
  }
  try {
    return { dir, manifest, ir, schema, policy: preparePolicy(ir), validateSignals: createSignalValidator(schema), signedBy };
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new BundleError("BUNDLE_INVALID", `bundle cannot be prepared: ${why}`, dir);
  }
}

async function checkSignature(dir: string, manifest: BundleManifest, trust: BundleTrust, signal: AbortSignal | undefined): Promise<string | null> {
  const keys = trust.trustedKeys ?? [];
  const raw = await readBundleFile(dir, SIGNATURE_FILE, signal);
  if (raw === null) {
    if (trust.requireSignature) throw new BundleError("BUNDLE_UNSIGNED", "bundle is not signed and signatures are required", dir);
    return null;
  }
  if (keys.length === 0) {
    if (trust.requireSignature) throw new BundleError("BUNDLE_SIGNATURE_INVALID", "signatures are required but no trusted bundle key is configured", dir);
    return null;
  }
  const sig = parseJson(dir, SIGNATURE_FILE, raw) as Partial<BundleSignature>;
  if (sig.payloadType !== PAYLOAD_TYPES.bundle || typeof sig.signature !== "string") {
    throw new BundleError("BUNDLE_SIGNATURE_INVALID", `\`${SIGNATURE_FILE}\` is not a writ bundle signature`, dir);
  }
  const key = verifyObject(PAYLOAD_TYPES.bundle, manifest, sig.signature, keys);
  if (!key) throw new BundleError("BUNDLE_SIGNATURE_INVALID", "bundle signature does not verify against any trusted key", dir);
  return key.keyId;
}

function checkManifest(value: unknown, dir: string, policyId: string, version: string): BundleManifest {
  const m = value as Partial<BundleManifest> | null;
  const bad = (why: string): never => {
    throw new BundleError("BUNDLE_INVALID", `\`${MANIFEST_FILE}\` ${why}`, dir);
  };
  if (typeof m !== "object" || m === null || Array.isArray(m)) return bad("is not a JSON object");
  if (m.manifestVersion !== MANIFEST_VERSION) return bad(`has manifestVersion \`${String(m.manifestVersion)}\`; this runtime reads ${MANIFEST_VERSION}`);
  if (m.policyId !== policyId || m.version !== version) return bad("names another policy or version than its directory");
  if (typeof m.bundle_hash !== "string" || typeof m.files !== "object" || m.files === null) return bad("lacks `files` or `bundle_hash`");
  for (const name of Object.values(BUNDLE_FILES)) {
    if (typeof m.files[name] !== "string") return bad(`does not list \`${name}\``);
  }
  for (const name of Object.keys(m.files)) {
    if (!(Object.values(BUNDLE_FILES) as string[]).includes(name)) return bad(`lists unknown file \`${name}\``);
  }
  return m as BundleManifest;
}

function parseJson(dir: string, name: string, bytes: Uint8Array): unknown {
  try {
    return parseStrictJson(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (e) {
    if (e instanceof StrictJsonError || e instanceof TypeError) {
      throw new BundleError("BUNDLE_INVALID", `\`${name}\` is not valid JSON: ${e.message}`, dir);
    }
    throw e;
  }
}
