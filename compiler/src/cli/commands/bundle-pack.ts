import { mkdir, readFile, stat } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";
import {
  BundleError,
  SIGNATURE_FILE,
  archiveFileName,
  loadBundle,
  loadBundleArchive,
  packBundleArchive,
  readBundleArchive,
  readBundleDirectory,
  type BundleTrust,
} from "@writ/runtime";
import { mayReplace, type Occupant } from "../immutable.js";
import { CliError, EXIT, type CliIo } from "../io.js";
import { readPublicKeys } from "../keys.js";
import { writeAtomically } from "../sources.js";

export interface BundlePackRun {
  readonly io: CliIo;
  /** Bundle directories, `{policyId}/{version}/` as `writ compile` writes them. */
  readonly dirs: readonly string[];
  readonly outDir: string;
  /** `--key`: when given, each bundle must be signed by one of these keys. */
  readonly keyPaths: readonly string[];
  readonly force: boolean;
}

/**
 * `writ bundle pack`: each bundle directory, verified (`loadBundle`), as its one-file archive
 * `{policyId}@{version}.bundle.json` in `outDir`. The archive written is verified too (`loadBundleArchive`), and must
 * be the bundle just verified, so what is written is what was checked. Exit 5 when a bundle does not verify, 3 when
 * an archive of the same version with another `bundle_hash` is in the way (without --force).
 */
export async function runBundlePack(run: BundlePackRun): Promise<number> {
  const { io } = run;
  if (run.dirs.length === 0) throw new CliError("bundle pack: name at least one bundle directory (`policies/{policyId}/{version}`)");
  const keys = await readPublicKeys(io.cwd, run.keyPaths);
  const trust: BundleTrust = keys.length > 0 ? { trustedKeys: keys, requireSignature: true } : {};
  const outDir = resolve(io.cwd, run.outDir);
  let notVerified = 0;
  let refused = 0;
  for (const arg of run.dirs) {
    const dir = resolve(io.cwd, arg);
    if (!(await stat(dir).catch(() => null))?.isDirectory()) throw new CliError(`bundle pack: \`${arg}\` is not a directory`);
    const policyId = basename(dirname(dir));
    const version = basename(dir);
    const name = archiveFileName(policyId, version);
    let bytes: Uint8Array;
    let bundleHash: string;
    let signedBy: string | null;
    let hasSignature: boolean;
    try {
      const checked = await loadBundle(dirname(dirname(dir)), policyId, version, trust);
      const files = await readBundleDirectory(dir);
      hasSignature = files.has(SIGNATURE_FILE);
      bytes = packBundleArchive(files);
      ({ signedBy } = await loadBundleArchive(bytes, name, trust, { policyId, version, bundle_hash: checked.manifest.bundle_hash }));
      bundleHash = checked.manifest.bundle_hash;
    } catch (e) {
      if (!(e instanceof BundleError)) throw e;
      io.out(`${arg}: NOT verified: ${e.message}`);
      notVerified++;
      continue;
    }
    const target = join(outDir, name);
    const occupant = await archiveAt(target, name);
    const conflict = occupant !== null && !("bundleHash" in occupant && occupant.bundleHash === bundleHash);
    if (conflict && !mayReplace(io, `${policyId}@${version}`, relative(io.cwd, outDir) || ".", occupant, bundleHash, run.force)) {
      refused++;
      continue;
    }
    await mkdir(outDir, { recursive: true });
    await writeAtomically(target, bytes);
    const signature = signedBy ? `signed by ${signedBy}` : hasSignature ? "signature not checked (no --key)" : "unsigned";
    io.out(`${relative(io.cwd, target)}: bundle_hash ${bundleHash}, ${bytes.length} bytes, ${signature}`);
  }
  if (notVerified > 0) return EXIT.notVerified;
  return refused > 0 ? EXIT.compileFailed : EXIT.ok;
}

/** The archive already at `path`: null when there is none, its `bundle_hash`, or why it cannot be read. */
async function archiveAt(path: string, name: string): Promise<Occupant | null> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (e) {
    if ((e as { code?: unknown }).code === "ENOENT") return null;
    return { unreadable: `it cannot be read (${String((e as { code?: unknown }).code ?? e)})` };
  }
  try {
    return { bundleHash: readBundleArchive(bytes, name).bundleHash };
  } catch (e) {
    if (!(e instanceof BundleError)) throw e;
    return { unreadable: `it is no archive: ${e.message}` };
  }
}
