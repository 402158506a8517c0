import { basename, dirname, resolve } from "node:path";
import {
  BundleError,
  SIGNATURE_FILE,
  WritRuntimeError,
  isJsonObject,
  loadBundleArchive,
  parseStrictJson,
  readBundleArchive,
  readBundleFile,
  sha256Hex,
  type BundleArchive,
} from "@writ/runtime";
import { CliError, EXIT, type CliIo } from "../io.js";
import { readPublicKeys } from "../keys.js";

export interface BundleInspectRun {
  readonly io: CliIo;
  readonly path: string;
  /** `--key`: when given, the archive must be signed by one of these keys. */
  readonly keyPaths: readonly string[];
  readonly json: boolean;
}

/**
 * `writ bundle inspect`: verifies an archive as a runtime loads it (every hash, `bundle_hash`, and with --key the
 * signature, then required) and prints what it holds. Exit 5 when it does not verify, as `writ verify`.
 */
export async function runBundleInspect(run: BundleInspectRun): Promise<number> {
  const { io } = run;
  const keys = await readPublicKeys(io.cwd, run.keyPaths);
  const target = resolve(io.cwd, run.path);
  const origin = basename(target);
  let bytes: Uint8Array | null;
  try {
    bytes = await readBundleFile(dirname(target), origin);
  } catch (e) {
    if (!(e instanceof BundleError)) throw e;
    throw new CliError(`bundle inspect: ${e.message}`);
  }
  if (bytes === null) throw new CliError(`bundle inspect: \`${run.path}\` does not exist`);
  let archive: BundleArchive;
  let signedBy: string | null;
  try {
    archive = readBundleArchive(bytes, origin);
    ({ signedBy } = await loadBundleArchive(bytes, origin, keys.length > 0 ? { trustedKeys: keys, requireSignature: true } : {}));
  } catch (e) {
    if (!(e instanceof BundleError)) throw e;
    if (run.json) io.out(JSON.stringify({ archive: run.path, verified: false, error: { code: e.code, message: e.message } }));
    else io.out(`archive ${run.path}: NOT verified: ${e.message}`);
    return EXIT.notVerified;
  }
  const claimed = signerNamed(archive);
  const signature = claimed === null ? null : { keyId: signedBy ?? claimed.keyId, verified: signedBy !== null };
  const files = [...archive.files]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, content]) => ({ name, bytes: content.length, sha256: sha256Hex(content) }));
  if (run.json) {
    io.out(
      JSON.stringify({
        archive: run.path,
        bytes: bytes.length,
        verified: true,
        policyId: archive.policyId,
        version: archive.version,
        bundle_hash: archive.bundleHash,
        signature,
        files,
      }),
    );
    return EXIT.ok;
  }
  const signer = signature?.keyId ? `signed by ${signature.keyId}` : `a \`${SIGNATURE_FILE}\` that names no key`;
  const signatureLine = signature === null ? "unsigned" : `${signer} (${signature.verified ? "verified" : "not verified: no --key given"})`;
  io.out(`archive:     ${run.path} (${bytes.length} bytes)`);
  io.out(`policy:      ${archive.policyId}@${archive.version}`);
  io.out(`bundle_hash: ${archive.bundleHash}`);
  io.out(`signature:   ${signatureLine}`);
  io.out("files:");
  const width = Math.max(...files.map((f) => f.name.length));
  for (const f of files) io.out(`  ${f.name.padEnd(width)}  ${String(f.bytes).padStart(8)} bytes  sha256 ${f.sha256}`);
  return EXIT.ok;
}

/** The keyId `bundle.sig` names (unverified; null when it names none); null when the archive holds no signature. */
function signerNamed(archive: BundleArchive): { readonly keyId: string | null } | null {
  const raw = archive.files.get(SIGNATURE_FILE);
  if (raw === undefined) return null;
  try {
    const sig = parseStrictJson(new TextDecoder().decode(raw));
    if (isJsonObject(sig) && typeof sig["keyId"] === "string") return { keyId: sig["keyId"] };
  } catch (e) {
    if (!(e instanceof WritRuntimeError)) throw e;
  }
  return { keyId: null };
}
