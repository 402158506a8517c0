/**
 * What `writ typegen` reads: policy sources, bundle directories and bundle archives, named directly or found in the
 * directories named. Every one is read into a bundle and loaded as the runtime loads it (`loadBundleArchive`: every
 * hash and `bundle_hash` checked, the schema compiled), so the schema typed is exactly the one the runtime validates
 * signals with, whichever form it came in.
 */
import { readdir, stat } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";
import {
  ARCHIVE_SUFFIX,
  BundleError,
  MANIFEST_FILE,
  canonicalJson,
  loadBundleArchive,
  packBundleArchive,
  readBundleDirectory,
  readBundleFile,
} from "@writ/runtime";
import { compile, type CompileResult } from "../compile.js";
import { CliError } from "../cli/io.js";
import { collectSources, type SourceFile } from "../cli/sources.js";
import type { PolicySignalsSchema } from "./declarations.js";

/** A policy version's signals schema and where it was read. */
export interface SignalsInput extends PolicySignalsSchema {
  /** The source, bundle directory or archive, relative to the working directory. */
  readonly origin: string;
}

/** Why an input gave no schema: a source that does not compile, a bundle that does not verify, or a clash. */
export type InputFailure =
  | { readonly kind: "compile"; readonly file: SourceFile; readonly result: CompileResult }
  | { readonly kind: "bundle"; readonly origin: string; readonly message: string }
  | { readonly kind: "conflict"; readonly message: string };

export interface Inputs {
  /** One per policy id and version; the same version found twice with the same schema is read once. */
  readonly found: readonly SignalsInput[];
  readonly failures: readonly InputFailure[];
}

interface Located {
  readonly sources: string[];
  readonly bundleDirs: string[];
  readonly archives: string[];
}

const SKIP_DIRS = new Set(["node_modules", "dist"]);

/**
 * The signals schema of every policy version `args` name: a `.writ` source, a `.bundle.json` archive, a bundle
 * directory (one holding `bundle.manifest.json`: its `policy.writ` is the bundle's copy), or a directory searched for
 * all three (dot-directories, `node_modules` and `dist` skipped).
 * @throws CliError for a path that does not exist, is none of these, or holds none of them
 */
export async function readInputs(cwd: string, args: readonly string[]): Promise<Inputs> {
  if (args.length === 0) throw new CliError("typegen: name a policies root, a policy or bundle directory, or a `.bundle.json` archive");
  const located: Located = { sources: [], bundleDirs: [], archives: [] };
  for (const arg of args) {
    const abs = resolve(cwd, arg);
    const info = await stat(abs).catch(() => null);
    if (info === null) throw new CliError(`typegen: \`${arg}\` does not exist`);
    if (info.isDirectory()) {
      const before = count(located);
      await locate(abs, located);
      if (count(located) === before)
        throw new CliError(`typegen: \`${arg}\` holds no policy (\`.writ\`), bundle directory or bundle archive (\`${ARCHIVE_SUFFIX}\`)`);
    } else if (info.isFile() && abs.endsWith(".writ")) located.sources.push(abs);
    else if (info.isFile() && abs.endsWith(ARCHIVE_SUFFIX)) located.archives.push(abs);
    else throw new CliError(`typegen: \`${arg}\` is not a policy (\`.writ\`), a bundle archive (\`${ARCHIVE_SUFFIX}\`) or a directory`);
  }
  const found = new Map<string, SignalsInput>();
  const failures: InputFailure[] = [];
  const add = async (origin: string, archive: () => Promise<Uint8Array>): Promise<void> => {
    let input: SignalsInput;
    try {
      const { manifest, schema } = await loadBundleArchive(await archive(), origin, {});
      input = { policyId: manifest.policyId, version: manifest.version, schema, origin };
    } catch (e) {
      if (!(e instanceof BundleError)) throw e;
      failures.push({ kind: "bundle", origin, message: e.message });
      return;
    }
    const ref = `${input.policyId}@${input.version}`;
    const earlier = found.get(ref);
    if (earlier === undefined) found.set(ref, input);
    else if (canonicalJson(earlier.schema) !== canonicalJson(input.schema)) {
      failures.push({
        kind: "conflict",
        message: `\`${earlier.origin}\` and \`${origin}\` hold \`${ref}\` with different signals schemas`,
      });
    }
  };
  for (const file of located.sources.length > 0 ? await collectSources(cwd, unique(located.sources)) : []) {
    const result = compile(file.display, file.text);
    if (result.valid) await add(file.display, async () => packBundleArchive(result.bundle!.files));
    else failures.push({ kind: "compile", file, result });
  }
  const shown = (abs: string): string => relative(cwd, abs) || basename(abs);
  for (const dir of unique(located.bundleDirs)) await add(shown(dir), async () => packBundleArchive(await readBundleDirectory(dir)));
  for (const path of unique(located.archives)) {
    await add(shown(path), async () => (await readBundleFile(dirname(path), basename(path))) ?? notFound(shown(path)));
  }
  return { found: [...found.values()], failures };
}

function notFound(origin: string): never {
  throw new BundleError("BUNDLE_NOT_FOUND", `\`${origin}\` does not exist`, origin);
}

/** Finds sources, bundle directories and archives under `dir`, in a fixed order; a bundle directory is not entered. */
async function locate(dir: string, into: Located): Promise<void> {
  if (await stat(join(dir, MANIFEST_FILE)).catch(() => null)) {
    into.bundleDirs.push(dir);
    return;
  }
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    if (entry.name.startsWith(".") || SKIP_DIRS.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await locate(path, into);
    else if (entry.isFile() && entry.name.endsWith(".writ")) into.sources.push(path);
    else if (entry.isFile() && entry.name.endsWith(ARCHIVE_SUFFIX)) into.archives.push(path);
  }
}

function count(located: Located): number {
  return located.sources.length + located.bundleDirs.length + located.archives.length;
}

function unique(paths: readonly string[]): string[] {
  return [...new Set(paths)];
}
