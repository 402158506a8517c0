import { randomBytes } from "node:crypto";
import { readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";
import { CliError, EXIT } from "./io.js";

export interface SourceFile {
  /** As the user should see it: relative to the working directory. */
  readonly display: string;
  readonly absolute: string;
  readonly text: string;
}

const SKIP_DIRS = new Set(["node_modules", ".git", "dist"]);

/** Every `.writ` file named by the arguments: files as given, directories searched recursively, sorted. */
export async function collectSources(cwd: string, args: readonly string[]): Promise<SourceFile[]> {
  if (args.length === 0) throw new CliError("no policy given: name a `.writ` file or a directory of policies");
  const found = new Set<string>();
  for (const arg of args) {
    const abs = resolve(cwd, arg);
    const info = await stat(abs).catch(() => null);
    if (!info) throw new CliError(`\`${arg}\` does not exist`);
    if (info.isDirectory()) {
      const before = found.size;
      await walk(abs, found);
      if (found.size === before) throw new CliError(`\`${arg}\` contains no \`.writ\` files`);
    } else if (abs.endsWith(".writ")) {
      found.add(abs);
    } else {
      throw new CliError(`\`${arg}\` is not a \`.writ\` file or a directory`);
    }
  }
  const files: SourceFile[] = [];
  for (const abs of [...found].sort()) {
    const display = relative(cwd, abs) || basename(abs);
    let text: string;
    try {
      // Fatal decoding: a replacement character would make the bundle's copy of the source differ from the file.
      text = new TextDecoder("utf-8", { fatal: true }).decode(await readFile(abs));
    } catch (e) {
      if (e instanceof TypeError) throw new CliError(`\`${display}\` is not UTF-8 text`, EXIT.compileFailed);
      throw e;
    }
    files.push({ display, absolute: abs, text });
  }
  return files;
}

async function walk(dir: string, found: Set<string>): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".") || SKIP_DIRS.has(entry.name)) continue;
    const p = join(dir, entry.name);
    if (entry.isDirectory()) await walk(p, found);
    else if (entry.isFile() && entry.name.endsWith(".writ")) found.add(p);
  }
}

/** Writes through a temporary file and a rename, so a reader never sees half a file. */
export async function writeAtomically(path: string, bytes: Uint8Array | string, mode?: number): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeFile(tmp, bytes, mode === undefined ? {} : { mode });
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}
