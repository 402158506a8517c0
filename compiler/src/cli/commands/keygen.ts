import { access } from "node:fs/promises";
import { relative, resolve } from "node:path";
import { generateSigningKeyPair, loadPublicKeyPem } from "@writ/runtime";
import { CliError, EXIT, type CliIo } from "../io.js";
import { writeAtomically } from "../sources.js";

/** `writ keygen`: an Ed25519 key pair, the private half readable by its owner only (mode 0600). */
export async function runKeygen(io: CliIo, prefix: string, force: boolean): Promise<number> {
  const keyPath = resolve(io.cwd, `${prefix}.key`);
  const pubPath = resolve(io.cwd, `${prefix}.pub`);
  if (!force) {
    for (const p of [keyPath, pubPath]) {
      if (
        await access(p).then(
          () => true,
          () => false,
        )
      ) {
        throw new CliError(`\`${relative(io.cwd, p)}\` already exists; pass --force to replace it`);
      }
    }
  }
  const pair = generateSigningKeyPair();
  await writeAtomically(keyPath, pair.privateKeyPem, 0o600);
  await writeAtomically(pubPath, pair.publicKeyPem, 0o644);
  io.out(`private key: ${relative(io.cwd, keyPath)} (mode 0600; keep it out of version control)`);
  io.out(`public key:  ${relative(io.cwd, pubPath)}`);
  io.out(`keyId:       ${loadPublicKeyPem(pair.publicKeyPem).keyId}`);
  return EXIT.ok;
}
