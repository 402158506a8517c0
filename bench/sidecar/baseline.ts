/**
 * The sidecar as it was at an earlier commit, built to compare with the sidecar as it is (the overhead mode of the
 * sidecar benchmark): the commit's tree is extracted with `git archive` into a scratch directory (nothing in the
 * repository changes), this checkout's installed packages are linked in (the writ workspaces are the commit's own),
 * and `wire`, `runtime` and `sidecar` are built with tsup.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
/** The workspaces the built sidecar runs on, in build order. */
const BUILT = ["wire", "runtime", "sidecar"] as const;
const WORKSPACES = ["runtime", "wire", "compiler", "sidecar", "sdk", "conformance"] as const;

export interface Baseline {
  /** The commit built (full hash). */
  readonly commit: string;
  /** Its `sidecar/dist/main.js`. */
  readonly main: string;
  remove(): Promise<void>;
}

function git(...args: string[]): string {
  return execFileSync("git", args, { cwd: REPO, encoding: "utf8" }).trim();
}

/** The commit before `file` was added: the sidecar before the change that brought it. */
export function commitBefore(file: string): string {
  const added = git("log", "--diff-filter=A", "--format=%H", "--", file)
    .split("\n")
    .filter((line) => line !== "")
    .at(-1);
  if (added === undefined) throw new Error(`\`${file}\` was never added in this history: set BENCH_BASELINE to the commit to compare with`);
  return git("rev-parse", `${added}^`);
}

/** Links the repository's installed packages into `dir`, with the writ workspaces pointing at `dir`'s own. */
async function linkPackages(dir: string): Promise<void> {
  const modules = join(dir, "node_modules");
  await mkdir(join(modules, "@writ"), { recursive: true });
  for (const entry of await readdir(join(REPO, "node_modules"))) {
    if (entry === "@writ" || entry === ".bin" || entry.startsWith(".package-lock")) continue;
    await symlink(join(REPO, "node_modules", entry), join(modules, entry));
  }
  for (const workspace of WORKSPACES) {
    if (existsSync(join(dir, workspace))) await symlink(join(dir, workspace), join(modules, "@writ", workspace));
    // A workspace's own packages (a version other than the root's), as installed here.
    if (existsSync(join(REPO, workspace, "node_modules")) && existsSync(join(dir, workspace)))
      await symlink(join(REPO, workspace, "node_modules"), join(dir, workspace, "node_modules"));
  }
}

/** Builds the sidecar of `ref` (a commit, a branch, a tag) in a scratch directory. */
export async function buildBaseline(ref: string): Promise<Baseline> {
  const commit = git("rev-parse", "--verify", `${ref}^{commit}`);
  const dir = await mkdtemp(join(tmpdir(), "writ-bench-baseline-"));
  try {
    execFileSync("sh", ["-c", `git archive --format=tar "${commit}" | tar -x -C "${dir}"`], {
      cwd: REPO,
      stdio: ["ignore", "ignore", "inherit"],
    });
    await linkPackages(dir);
    const tsup = join(REPO, "node_modules", "tsup", "dist", "cli-default.js");
    for (const workspace of BUILT)
      execFileSync(process.execPath, [tsup], { cwd: join(dir, workspace), stdio: ["ignore", "ignore", "inherit"] });
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  return { commit, main: join(dir, "sidecar", "dist", "main.js"), remove: () => rm(dir, { recursive: true, force: true }) };
}
