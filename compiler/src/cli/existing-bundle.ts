import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { MANIFEST_FILE, SHA256_HEX_PATTERN, SIGNATURE_FILE, isJsonObject, parseStrictJson } from "@writ/runtime";

/** A bundle directory's manifest as far as `writ compile` compares it: the file hashes, `bundle_hash`, and signer. */
export interface ExistingBundle {
  readonly files: Readonly<Record<string, string>>;
  readonly bundleHash: string;
  /** The keyId `bundle.sig` names (not verified), or null when there is none. */
  readonly signedBy: string | null;
}

/**
 * What `dir` already holds: null when it has no manifest; otherwise its manifest's `files` and `bundle_hash`, or why it
 * cannot be read (a clause for a message).
 */
export async function existingBundle(dir: string): Promise<ExistingBundle | { readonly unreadable: string } | null> {
  const manifest = await readJson(join(dir, MANIFEST_FILE));
  if (manifest === null) return null;
  const bad = { unreadable: `its \`${MANIFEST_FILE}\` cannot be read as a bundle manifest` };
  if (!isJsonObject(manifest)) return bad;
  const { files, bundle_hash: bundleHash } = manifest;
  if (
    typeof bundleHash !== "string" ||
    !SHA256_HEX_PATTERN.test(bundleHash) ||
    !isJsonObject(files) ||
    !Object.values(files).every((h) => typeof h === "string")
  )
    return bad;
  const sig = await readJson(join(dir, SIGNATURE_FILE));
  const signedBy = isJsonObject(sig) && typeof sig["keyId"] === "string" ? sig["keyId"] : null;
  return { files: files as Record<string, string>, bundleHash, signedBy };
}

/** Whether two manifests list the same files with the same hashes. */
export function sameFiles(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const names = Object.keys(a);
  return names.length === Object.keys(b).length && names.every((name) => Object.hasOwn(b, name) && a[name] === b[name]);
}

/** The JSON in `path`; null when there is no such file, undefined when it cannot be read or is not strict JSON. */
async function readJson(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    return (e as { code?: unknown }).code === "ENOENT" ? null : undefined;
  }
  try {
    return parseStrictJson(text);
  } catch {
    return undefined;
  }
}
