import { readdir } from "node:fs/promises";
import { join } from "node:path";
import semver from "semver";
import { BundleError } from "../errors.js";
import { ARCHIVE_SUFFIX } from "../bundle/archive.js";
import { POLICY_ID_PATTERN } from "../bundle/format.js";

/** Where a bundle of the policies root is: its directory `{policyId}/{version}/`, or its archive `{policyId}@{version}.bundle.json`. */
export interface BundleLocation {
  readonly policyId: string;
  readonly version: string;
  readonly kind: "directory" | "archive";
}

/**
 * Every bundle the policies root holds, by name alone (nothing is read or verified here). Entries that cannot be a
 * bundle (another file, a directory whose name is no policy id or no version) are not bundles and are skipped.
 * @throws BundleError (BUNDLE_NOT_FOUND) when the root itself cannot be listed
 */
export async function listBundleVersions(root: string): Promise<BundleLocation[]> {
  const locations: BundleLocation[] = [];
  for (const entry of await list(root)) {
    if (entry.isFile() && entry.name.endsWith(ARCHIVE_SUFFIX)) {
      const name = entry.name.slice(0, -ARCHIVE_SUFFIX.length);
      const at = name.lastIndexOf("@");
      const policyId = name.slice(0, at);
      const version = name.slice(at + 1);
      if (at > 0 && POLICY_ID_PATTERN.test(policyId) && semver.valid(version) === version)
        locations.push({ policyId, version, kind: "archive" });
    } else if (entry.isDirectory() && POLICY_ID_PATTERN.test(entry.name)) {
      for (const version of await list(join(root, entry.name))) {
        if (version.isDirectory() && semver.valid(version.name) === version.name)
          locations.push({ policyId: entry.name, version: version.name, kind: "directory" });
      }
    }
  }
  return locations;
}

async function list(dir: string) {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (e) {
    const code = typeof e === "object" && e !== null ? String((e as { code?: unknown }).code) : "unknown error";
    throw new BundleError("BUNDLE_NOT_FOUND", `the policies root cannot be listed (${code})`, dir);
  }
}
