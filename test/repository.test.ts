/**
 * Repository rules that no single package can check: the dependency direction in package manifests, one
 * public entry per package, pinned toolchain, and no private key anywhere in the tracked tree.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url).pathname;
const readJson = (p: string): Record<string, unknown> => JSON.parse(readFileSync(join(root, p), "utf8")) as Record<string, unknown>;
const rootPkg = readJson("package.json") as { workspaces: string[]; engines: { node: string }; devDependencies: Record<string, string> };

/**
 * README.md, "Development": runtime is the core; the others may depend on runtime only. wire (the shared HTTP wire types)
 * is a leaf, which the sidecar, the SDK and the conformance suite may depend on.
 */
const ALLOWED: Record<string, string[]> = {
  runtime: [],
  wire: [],
  // `writ conformance` runs the suite: an installed compiler must have it.
  compiler: ["@writ/runtime", "@writ/conformance"],
  "language-server": ["@writ/compiler"],
  sidecar: ["@writ/runtime", "@writ/wire"],
  sdk: ["@writ/runtime", "@writ/wire"],
  conformance: ["@writ/wire"],
};

/** The VS Code extension is a workspace too, but no npm package: it is published as a .vsix (docs/editor.md). */
const EXTENSION = "editors/vscode";
/** So is the playground: static files, shipped inside @writ/compiler (docs/playground.md). */
const PLAYGROUND = "playground";

describe.each(rootPkg.workspaces.filter((ws) => ws !== EXTENSION && ws !== PLAYGROUND))("package %s", (ws) => {
  const pkg = readJson(`${ws}/package.json`) as {
    dependencies?: Record<string, string>;
    exports: Record<string, unknown>;
    engines: { node: string };
    type: string;
  };

  it("depends only on the writ packages its place in the layering allows", () => {
    const writDeps = Object.keys(pkg.dependencies ?? {}).filter((d) => d.startsWith("@writ/"));
    expect(writDeps.filter((d) => !ALLOWED[ws]!.includes(d))).toEqual([]);
  });

  it("is ESM with one public entry (the runtime adds its LMDB store and a replay store author's kit; wire its constants alone and its types alone) and the same engines as the root", () => {
    expect(pkg.type).toBe("module");
    const entries: Readonly<Record<string, readonly string[]>> = {
      runtime: [".", "./lmdb", "./replay-store", "./testing"],
      wire: [".", "./constants", "./types"],
    };
    expect(Object.keys(pkg.exports)).toEqual(entries[ws] ?? ["."]);
    expect(pkg.engines.node).toBe(rootPkg.engines.node);
  });
});

it("the VS Code extension is private and bundles everything it runs: it has no runtime dependencies", () => {
  const pkg = readJson(`${EXTENSION}/package.json`) as { private: boolean; dependencies?: unknown; engines: Record<string, string> };
  expect(rootPkg.workspaces).toContain(EXTENSION);
  expect(pkg.private).toBe(true);
  expect(pkg.dependencies).toBeUndefined();
  expect(Object.keys(pkg.engines)).toEqual(["vscode"]);
});

it("the playground is private, bundles what it runs, and is built before the compiler, which ships its build", () => {
  const pkg = readJson(`${PLAYGROUND}/package.json`) as { private: boolean; exports?: unknown; engines: { node: string } };
  expect(pkg.private).toBe(true);
  expect(pkg.exports).toBeUndefined();
  expect(pkg.engines.node).toBe(rootPkg.engines.node);
  // `npm run build` (scripts/lib/incremental-build.ts) orders builds by `writ.buildAfter`: the compiler's build copies
  // playground/dist (packaging.stress.test.ts checks `writ playground` from the compiler's tarball).
  const compiler = readJson("compiler/package.json") as { writ?: { buildAfter?: string[] } };
  expect(compiler.writ?.buildAfter).toEqual(["@writ/playground"]);
});

it("installs no package that needs a newer Node than the README promises (the root's engines)", () => {
  // The lock file records each installed package's `engines`; `npm install` only warns (EBADENGINE) about a mismatch.
  const lowest = semver.minVersion(rootPkg.engines.node)!.version;
  const lock = readJson("package-lock.json") as { packages: Record<string, { engines?: unknown }> };
  const refusing = Object.entries(lock.packages).flatMap(([path, entry]) => {
    const node = (entry.engines as { node?: unknown } | undefined)?.node;
    return typeof node === "string" && !semver.satisfies(lowest, node) ? [`${path} (node ${node})`] : [];
  });
  expect(refusing).toEqual([]);
});

it("pins TypeScript to an exact version", () => {
  expect(rootPkg.devDependencies["typescript"]).toMatch(/^\d+\.\d+\.\d+$/);
});

it("tracks no private key", () => {
  // A tracked file deleted in the working tree (its deletion not committed yet) holds nothing to check.
  const files = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" })
    .split("\0")
    .filter((f) => f !== "" && existsSync(join(root, f)));
  const offenders = files.filter((f) => {
    const text = readFileSync(join(root, f), "latin1");
    // A PEM block with a body: mentions of the header in docs and tiny malformed test inputs are not keys.
    return /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----\r?\n[A-Za-z0-9+/=\r\n]{40,}-----END/.test(text);
  });
  expect(offenders).toEqual([]);
});

describe("references stay inside the repository (docs/specification.md)", () => {
  const files = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" })
    .split("\0")
    .filter((f) => /\.(ts|md|cjs|mjs|json)$/.test(f) && !f.startsWith("conformance/vectors/") && existsSync(join(root, f)));
  const map = readFileSync(join(root, "docs/specification.md"), "utf8");
  const listed = new Set(Array.from(map.matchAll(/^\| (\d+(?:\.\d+)?) \|/gm), (m) => m[1]!));

  it("names no document that is not in it (the design notes, the specification's own file)", () => {
    const outside = files.filter(
      (f) => /DESIGN\.md|shared\/spec/.test(readFileSync(join(root, f), "utf8")) && f !== "test/repository.test.ts",
    );
    expect(outside).toEqual([]);
  });

  it("cites as `spec N.N` only sections that docs/specification.md lists, with what they fix and where the docs specify it", () => {
    const unlisted = files.flatMap((f) =>
      Array.from(readFileSync(join(root, f), "utf8").matchAll(/\bspec (\d+(?:\.\d+)?)\b/g), (m) => m[1]!)
        .filter((section) => !listed.has(section))
        .map((section) => `${f}: spec ${section}`),
    );
    expect(listed.size).toBeGreaterThan(30);
    expect(unlisted).toEqual([]);
  });
});
