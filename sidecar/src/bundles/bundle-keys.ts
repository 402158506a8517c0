/** The pinned keys bundles (and a remote source's index) must be signed with: `SERVICE_BUNDLE_KEYS`, read at start and at each reload. */
import { readFile } from "node:fs/promises";
import { loadPublicKeyPem, type PublicKey } from "@writ/runtime";
import { ConfigError } from "../env.js";

/** @throws ConfigError naming the file that is not a usable key */
export async function readBundleKeys(files: readonly string[]): Promise<PublicKey[]> {
  return Promise.all(
    files.map(async (file) => {
      try {
        return loadPublicKeyPem(await readFile(file, "utf8"));
      } catch (e) {
        throw new ConfigError(`SERVICE_BUNDLE_KEYS: \`${file}\` is not a usable Ed25519 SPKI PEM key: ${(e as Error).message}`);
      }
    }),
  );
}
