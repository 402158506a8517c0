/**
 * Builds workspaces (all, or the named ones and those they need), skipping each whose inputs have not changed since
 * its last successful build: `npm run build` and `npm start` (scripts/build.ts, scripts/start.ts).
 *
 * A workspace's build key is a SHA-256 over its own files (everything but node_modules, dist, test and Markdown), the
 * files of the writ packages it depends on (bundled from their sources), the root's tsconfig files and lock file, and
 * the keys of the workspaces whose output it uses (`"writ": {"buildAfter": […]}` in its package.json: the compiler
 * copies the playground's dist/). Nothing else orders the builds, so they run two at a time. A successful build keeps
 * its key (node_modules/.cache/writ-build), removed before a build starts, so a failed or interrupted build runs again,
 * as does one whose dist/ was deleted. Not a task runner (wireit, turbo): this is the one build graph, a key per
 * workspace is all the caching it needs, and each workspace's `build` script stays the authority on how it builds.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { delimiter, join } from "node:path";

interface Workspace {
  readonly dir: string;
  readonly name: string;
  /** Its package.json's `build` script. */
  readonly script: string;
  /** Its `build:js` script, when it has one: the build without type declarations (`tsup --no-dts`). */
  readonly jsScript: string | undefined;
  /** Workspaces whose build must finish before this one starts: `writ.buildAfter` of its package.json. */
  readonly after: readonly string[];
  /**
   * Workspaces whose source files its build reads, transitively: the writ packages it depends on (any kind of
   * dependency), which tsup bundles from their sources through the root tsconfig.json's paths, never from their dist/.
   */
  readonly reads: readonly string[];
}

const SKIPPED = new Set(["node_modules", "dist", "test"]);
const GLOBAL_INPUTS = ["tsconfig.base.json", "tsconfig.json", "package-lock.json"];
/** Where each workspace's key is kept: outside dist/, which npm packs. */
const KEYS_DIR = "node_modules/.cache/writ-build";

type Manifest = { name: string; workspaces?: string[]; scripts?: Record<string, string>; writ?: { buildAfter?: string[] } } & Record<
  string,
  unknown
>;

function workspaces(root: string): Map<string, Workspace> {
  const read = (dir: string) => JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")) as Manifest;
  const manifests = new Map((read(".").workspaces ?? []).map((dir) => [dir, read(dir)]));
  const byName = new Map([...manifests].map(([dir, m]) => [m.name, dir]));
  const direct = new Map<string, string[]>();
  const after = new Map<string, string[]>();
  for (const [dir, m] of manifests) {
    const declared = ["dependencies", "devDependencies", "peerDependencies"].flatMap((field) =>
      Object.keys((m[field] as Record<string, string> | undefined) ?? {}),
    );
    direct.set(
      dir,
      declared.flatMap((name) => byName.get(name) ?? []),
    );
    after.set(
      dir,
      (m.writ?.buildAfter ?? []).map((name) => {
        const found = byName.get(name);
        if (found === undefined) throw new Error(`${dir}/package.json: writ.buildAfter names ${name}, which is no workspace`);
        return found;
      }),
    );
  }
  const reads = (dir: string, seen = new Set<string>()): Set<string> => {
    for (const d of direct.get(dir) ?? []) if (!seen.has(d)) reads(d, seen.add(d));
    return seen;
  };
  const result = new Map<string, Workspace>();
  for (const [dir, m] of manifests) {
    const script = m.scripts?.["build"];
    if (script !== undefined)
      result.set(dir, {
        dir,
        name: m.name,
        script,
        jsScript: m.scripts?.["build:js"],
        after: after.get(dir)!,
        reads: [...reads(dir)].filter((d) => d !== dir),
      });
  }
  return result;
}

/** A digest of the files of `dir` a build can read, as `path\0content` in a stable order. */
function digestFiles(root: string, dir: string): string {
  const hash = createHash("sha256");
  const walk = (at: string): void => {
    for (const entry of readdirSync(join(root, at), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED.has(entry.name) && !entry.name.startsWith(".")) walk(path);
      } else if (entry.isFile() && !entry.name.endsWith(".md")) {
        hash
          .update(`${path}\0`)
          .update(readFileSync(join(root, path)))
          .update("\0");
      }
    }
  };
  walk(dir);
  return hash.digest("hex");
}

function buildKeys(root: string, all: Map<string, Workspace>): Map<string, string> {
  const keys = new Map<string, string>();
  // Each workspace's files are read once, however many others bundle them.
  const digests = new Map<string, string>();
  const digestOf = (dir: string): string => {
    if (!digests.has(dir)) digests.set(dir, digestFiles(root, dir));
    return digests.get(dir)!;
  };
  const global = createHash("sha256");
  for (const file of GLOBAL_INPUTS)
    if (existsSync(join(root, file)))
      global
        .update(`${file}\0`)
        .update(readFileSync(join(root, file)))
        .update("\0");
  const globalDigest = global.digest("hex");
  const keyOf = (dir: string): string => {
    const known = keys.get(dir);
    if (known !== undefined) return known;
    const ws = all.get(dir)!;
    const hash = createHash("sha256").update(`${globalDigest}\0${dir}\0${digestOf(dir)}\0`);
    for (const source of ws.reads) hash.update(`${source}\0${digestOf(source)}\0`);
    for (const before of ws.after) hash.update(`${before}\0${keyOf(before)}\0`);
    const key = hash.digest("hex");
    keys.set(dir, key);
    return key;
  };
  for (const dir of all.keys()) keyOf(dir);
  return keys;
}

/** `targets` and every workspace they build after, transitively. */
function closure(all: Map<string, Workspace>, targets: readonly string[]): Set<string> {
  const wanted = new Set<string>();
  const add = (dir: string): void => {
    if (wanted.has(dir)) return;
    wanted.add(dir);
    for (const before of all.get(dir)!.after) add(before);
  };
  for (const target of targets) add(target);
  return wanted;
}

/**
 * Runs the workspace's `build` script as `npm run build` would (a shell in the workspace, its and the root's
 * node_modules/.bin first on PATH), without an npm process per workspace.
 */
function runBuild(root: string, script: string, ws: Workspace): Promise<{ ok: boolean; output: string }> {
  const cwd = join(root, ws.dir);
  const path = [join(cwd, "node_modules", ".bin"), join(root, "node_modules", ".bin"), process.env["PATH"] ?? ""].join(delimiter);
  return new Promise((resolve) => {
    const child = spawn(script, { cwd, shell: true, env: { ...process.env, PATH: path }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.on("close", (code) => resolve({ ok: code === 0, output }));
  });
}

export interface BuildOptions {
  /** The repository: its package.json lists the workspaces. */
  readonly root: string;
  readonly targets?: readonly string[];
  readonly force?: boolean;
  /**
   * false: each workspace's `build:js` where it has one, which skips the type declarations (most of a build's time):
   * what `npm start` and `npm test` run, which need no declarations. A build with declarations serves both.
   */
  readonly declarations?: boolean;
  readonly say: (line: string) => void;
}

/** Builds what is stale among `targets` (all workspaces by default); true when every build succeeded. */
export async function build(options: BuildOptions): Promise<boolean> {
  const { root } = options;
  const all = workspaces(root);
  const unknown = (options.targets ?? []).filter((t) => !all.has(t));
  if (unknown.length > 0) throw new Error(`no workspace with a build script: ${unknown.join(", ")} (known: ${[...all.keys()].join(", ")})`);
  const wanted = closure(all, options.targets !== undefined && options.targets.length > 0 ? options.targets : [...all.keys()]);
  const keys = buildKeys(root, all);
  mkdirSync(join(root, KEYS_DIR), { recursive: true });
  const keyPath = (dir: string) => join(root, KEYS_DIR, `${dir.replaceAll("/", "+")}.key`);
  const declarations = options.declarations ?? true;
  const scriptOf = (ws: Workspace) => (declarations ? ws.script : (ws.jsScript ?? ws.script));
  // The key file: the key, then " js" when that build skipped the declarations.
  const builtKey = (ws: Workspace) => `${keys.get(ws.dir)!}${scriptOf(ws) === ws.script ? "" : " js"}`;
  const upToDate = (dir: string) => {
    if (!existsSync(join(root, dir, "dist")) || !existsSync(keyPath(dir))) return false;
    const kept = readFileSync(keyPath(dir), "utf8");
    return kept === keys.get(dir) || (!declarations && kept === `${keys.get(dir)!} js`);
  };
  const stale = new Set([...wanted].filter((dir) => options.force || !upToDate(dir)));
  for (const dir of wanted) if (!stale.has(dir)) options.say(`${all.get(dir)!.name}: up to date`);
  const done = new Set([...wanted].filter((dir) => !stale.has(dir)));
  const running = new Map<string, Promise<void>>();
  let failed = false;
  const slots = Math.max(1, Math.min(2, availableParallelism()));
  while (!failed && done.size < wanted.size) {
    for (const dir of stale) {
      if (running.size >= slots) break;
      if (running.has(dir) || done.has(dir) || !all.get(dir)!.after.every((b) => !wanted.has(b) || done.has(b))) continue;
      const ws = all.get(dir)!;
      const started = performance.now();
      rmSync(keyPath(dir), { force: true });
      running.set(
        dir,
        runBuild(root, scriptOf(ws), ws).then(({ ok, output }) => {
          running.delete(dir);
          if (!ok) {
            failed = true;
            options.say(`${ws.name}: build failed (\`${scriptOf(ws)}\` in ${dir}):\n${output.trimEnd()}`);
            return;
          }
          writeFileSync(keyPath(dir), builtKey(ws));
          const what = scriptOf(ws) === ws.script ? "" : " (JavaScript only)";
          options.say(`${ws.name}: built in ${((performance.now() - started) / 1000).toFixed(1)} s${what}`);
          done.add(dir);
        }),
      );
    }
    if (running.size === 0) break;
    await Promise.race(running.values());
  }
  await Promise.all(running.values());
  return !failed && done.size === wanted.size;
}
