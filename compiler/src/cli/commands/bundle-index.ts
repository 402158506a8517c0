import { readdir, stat } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import {
  ARCHIVE_SUFFIX,
  BundleError,
  INDEX_FILE,
  INDEX_VERSION,
  archiveFileName,
  loadBundleArchive,
  readBundleFile,
  readSourceIndex,
  signSourceIndex,
  type BundleTrust,
  type PublicKey,
  type SourceAlias,
  type SourceIndex,
  type SourceIndexEntry,
} from "@writ/runtime";
import { mayReplace } from "../immutable.js";
import { parseAliasArg, parseDuration, parseSerial } from "../index-args.js";
import { CliError, EXIT, type CliIo } from "../io.js";
import { readPublicKeys, readSigningKey } from "../keys.js";
import { plural } from "../report.js";
import { writeAtomically } from "../sources.js";

export interface BundleIndexRun {
  readonly io: CliIo;
  readonly dir: string;
  readonly signKeyPath: string;
  /** `policyId@alias=version`, repeatable; `policyId@alias=` removes an alias. */
  readonly aliases: readonly string[];
  readonly expiresIn: string | null;
  /** The serial to publish, when the current index cannot be read (or to jump ahead). */
  readonly serial: string | null;
  /** `--key`: when given, each archive must be signed by one of these keys. */
  readonly keyPaths: readonly string[];
  readonly force: boolean;
}

/**
 * `writ bundle index`: publishes a bundle source. Every `*.bundle.json` in `dir` is verified and must be named after
 * what it holds; `dir/index.json` is then written (atomically) listing them, signed with `--sign-key`, with the next
 * serial, the aliases of the current index unless overridden, and `--expires-in` as its expiry. Writes nothing when an
 * archive does not verify (exit 5) or a listed version changed its `bundle_hash` (exit 3, unless --force).
 */
export async function runBundleIndex(run: BundleIndexRun): Promise<number> {
  const { io } = run;
  const dir = resolve(io.cwd, run.dir);
  if (!(await stat(dir).catch(() => null))?.isDirectory()) throw new CliError(`bundle index: \`${run.dir}\` is not a directory`);
  const key = await readSigningKey(io.cwd, run.signKeyPath);
  const pinned = await readPublicKeys(io.cwd, run.keyPaths);
  const aliasArgs = run.aliases.map(parseAliasArg);
  const lifetime = run.expiresIn === null ? null : parseDuration(run.expiresIn);
  const serialArg = run.serial === null ? null : parseSerial(run.serial);
  const indexPath = relative(io.cwd, join(dir, INDEX_FILE)) || INDEX_FILE;

  const bundles = await verifiedArchives(io, dir, pinned.length > 0 ? { trustedKeys: pinned, requireSignature: true } : {});
  if (bundles === null) return EXIT.notVerified;
  const current = await currentIndex(dir, [key.publicKey, ...pinned]);
  if ("unreadable" in current && serialArg === null) {
    throw new CliError(
      `bundle index: \`${indexPath}\` ${current.unreadable}: pass --serial N, N above the serial its readers last accepted`,
    );
  }
  const previous = "index" in current ? current.index : null;
  if (previous && serialArg !== null && serialArg <= previous.serial) {
    throw new CliError(
      `bundle index: --serial ${serialArg} is not above the serial of \`${indexPath}\` (${previous.serial}): readers would refuse it as a rollback`,
    );
  }
  let refused = 0;
  for (const entry of bundles) {
    const before = previous?.bundles.find((b) => b.policyId === entry.policyId && b.version === entry.version);
    if (before && before.bundle_hash !== entry.bundle_hash) {
      if (
        !mayReplace(io, `${entry.policyId}@${entry.version}`, indexPath, { bundleHash: before.bundle_hash }, entry.bundle_hash, run.force)
      )
        refused++;
    }
  }
  if (refused > 0) return EXIT.compileFailed;

  const aliases = new Map<string, SourceAlias>((previous?.aliases ?? []).map((a) => [`${a.policyId}@${a.alias}`, a]));
  for (const a of aliasArgs) {
    if (a.version === null) aliases.delete(`${a.policyId}@${a.alias}`);
    else aliases.set(`${a.policyId}@${a.alias}`, { policyId: a.policyId, alias: a.alias, version: a.version });
  }
  for (const [name, a] of aliases) {
    if (!bundles.some((b) => b.policyId === a.policyId && b.version === a.version)) {
      throw new CliError(
        `bundle index: alias \`${name}\` names \`${a.policyId}@${a.version}\`, which \`${run.dir}\` does not hold: add its archive, or remove the alias with --alias ${name}=`,
      );
    }
  }
  const issued = new Date();
  const index: SourceIndex = {
    indexVersion: INDEX_VERSION,
    serial: serialArg ?? (previous ? previous.serial + 1 : 1),
    issuedAt: issued.toISOString(),
    ...(lifetime === null ? {} : { expiresAt: new Date(issued.getTime() + lifetime).toISOString() }),
    bundles,
    aliases: [...aliases.values()].sort((a, b) => compare(`${a.policyId}@${a.alias}`, `${b.policyId}@${b.alias}`)),
  };
  let bytes: Uint8Array;
  try {
    bytes = signSourceIndex(index, key);
  } catch (e) {
    if (!(e instanceof BundleError)) throw e;
    throw new CliError(`bundle index: ${e.message}`);
  }
  await writeAtomically(join(dir, INDEX_FILE), bytes);
  const expiry = index.expiresAt ? `, expires at ${index.expiresAt}` : "";
  io.out(
    `${indexPath}: serial ${index.serial}, ${plural(bundles.length, "bundle")}, ${plural(index.aliases.length, "alias", "aliases")}, signed by ${key.keyId}${expiry}`,
  );
  return EXIT.ok;
}

/**
 * The entries of every archive in `dir`, sorted, each verified and named after what it holds; null after printing
 * why when one is not.
 */
async function verifiedArchives(io: CliIo, dir: string, trust: BundleTrust): Promise<SourceIndexEntry[] | null> {
  const names = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isFile() && e.name.endsWith(ARCHIVE_SUFFIX))
    .map((e) => e.name);
  const entries: SourceIndexEntry[] = [];
  let failed = 0;
  for (const name of names.sort(compare)) {
    try {
      const bytes = await readBundleFile(dir, name);
      if (bytes === null) continue; // removed meanwhile
      const { manifest } = await loadBundleArchive(bytes, name, trust);
      const expected = archiveFileName(manifest.policyId, manifest.version);
      if (name !== expected)
        throw new BundleError(
          "BUNDLE_INVALID",
          `it holds \`${manifest.policyId}@${manifest.version}\`, so its name must be \`${expected}\``,
          name,
        );
      entries.push({ policyId: manifest.policyId, version: manifest.version, bundle_hash: manifest.bundle_hash });
    } catch (e) {
      if (!(e instanceof BundleError)) throw e;
      io.out(`${name}: NOT verified: ${e.message}`);
      failed++;
    }
  }
  return failed > 0 ? null : entries;
}

/**
 * The index `dir` holds now, verified with the signing key (or a pinned one): none, it, or why it cannot be read. Its
 * expiry does not matter here: publishing anew is how an expired index is renewed.
 */
async function currentIndex(
  dir: string,
  keys: readonly PublicKey[],
): Promise<{ readonly none: true } | { readonly index: SourceIndex } | { readonly unreadable: string }> {
  try {
    const bytes = await readBundleFile(dir, INDEX_FILE);
    if (bytes === null) return { none: true };
    return { index: readSourceIndex(bytes, keys, { now: new Date(0), origin: INDEX_FILE }).index };
  } catch (e) {
    if (!(e instanceof BundleError)) throw e;
    return { unreadable: `cannot be read (${e.message})` };
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
