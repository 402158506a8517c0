import { join } from "node:path";
import { BundleError } from "../errors.js";
import { BUNDLE_FILES, MANIFEST_FILE, SIGNATURE_FILE, isBundleRef } from "./format.js";
import { readBundleFile } from "./read-file.js";
import { verifyBundleFiles, type BundleTrust, type LoadedBundle } from "./verify.js";

export type { BundleExpectation, BundleTrust, LoadedBundle } from "./verify.js";

export interface LoadOptions {
  /** Once aborted, the load stops before its next read and rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

/** The files of a bundle directory the runtime reads besides the manifest; anything else there is not bundle content. */
const DIRECTORY_FILES = [...Object.values(BUNDLE_FILES), SIGNATURE_FILE];

/**
 * Loads `root/{policyId}/{version}/` and proves it whole before anything uses it (`verifyBundleFiles`: every file
 * hash, then `bundle_hash`, then the signature when keys are pinned). Throws BundleError; never returns a bundle that
 * failed any check, so a caller that keeps its last good bundle on error never serves a tampered one.
 * Every file is read with `readBundleFile`: a FIFO, a device or an oversized file in a bundle is refused, never
 * waited on. A file that cannot be read is a BundleError too (BUNDLE_INVALID, naming the file), never a raw fs error.
 */
export async function loadBundle(
  root: string,
  policyId: string,
  version: string,
  trust: BundleTrust = {},
  options: LoadOptions = {},
): Promise<LoadedBundle> {
  const { signal } = options;
  // Path safety first: the id and version become directory names.
  if (!isBundleRef(policyId, version)) {
    throw new BundleError("BUNDLE_NOT_FOUND", `no bundle for policy \`${policyId}\` version \`${version}\``, root);
  }
  const dir = join(root, policyId, version);
  const files = await readBundleDirectory(dir, signal);
  return verifyBundleFiles(files, { origin: dir, container: "directory" }, { policyId, version }, trust);
}

/**
 * The bundle files in `dir` (each read with `readBundleFile`), by name, unverified: what `loadBundle` proves, and what
 * `writ bundle pack` archives. Empty when there is no manifest (nothing else is read then); a missing file is absent.
 * @throws BundleError (BUNDLE_INVALID) naming a file that is not a regular file, is too large or cannot be read
 */
export async function readBundleDirectory(dir: string, signal?: AbortSignal): Promise<Map<string, Uint8Array>> {
  const files = new Map<string, Uint8Array>();
  const manifest = await readBundleFile(dir, MANIFEST_FILE, signal);
  if (manifest === null) return files;
  files.set(MANIFEST_FILE, manifest);
  for (const name of DIRECTORY_FILES) {
    const bytes = await readBundleFile(dir, name, signal);
    if (bytes !== null) files.set(name, bytes);
  }
  return files;
}
