import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { loadPublicKeyPem, loadSigningKeyPem, type PublicKey, type SigningKey } from "@writ/runtime";
import { CliError } from "./io.js";

/** `--sign-key FILE`: an Ed25519 PKCS8 PEM signing key. @throws CliError naming the file */
export async function readSigningKey(cwd: string, path: string): Promise<SigningKey> {
  let pem: string;
  try {
    pem = await readFile(resolve(cwd, path), "utf8");
  } catch {
    throw new CliError(`cannot read signing key \`${path}\``);
  }
  try {
    return loadSigningKeyPem(pem);
  } catch (e) {
    throw new CliError(`signing key \`${path}\` is unusable: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** `--key FILE`, repeatable: pinned Ed25519 public keys (SPKI PEM). @throws CliError naming the file */
export async function readPublicKeys(cwd: string, paths: readonly string[]): Promise<PublicKey[]> {
  return Promise.all(
    paths.map(async (path) => {
      let pem: string;
      try {
        pem = await readFile(resolve(cwd, path), "utf8");
      } catch {
        throw new CliError(`cannot read public key \`${path}\``);
      }
      try {
        return loadPublicKeyPem(pem);
      } catch (e) {
        throw new CliError(`public key \`${path}\` is unusable: ${e instanceof Error ? e.message : String(e)}`);
      }
    }),
  );
}
