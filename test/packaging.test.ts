/**
 * The packages as a user installs them: every writ package packed (`npm pack`) and the tarballs installed into an
 * empty project, where `npx writ` (`writ typegen` and `writ playground`, which serves the playground shipped in the compiler's tarball, among its commands), `npx writ-sidecar`, `npx writ-language-server`, `writ conformance` and
 * `require("@writ/sdk")` work; every tarball carries its README and LICENSE. And the binaries of the repository itself: committed, executable files
 * that npm links at install, before anything is built (a fresh clone's `npm install && npm start`).
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url).pathname;
const PACKAGES = ["runtime", "wire", "compiler", "language-server", "sidecar", "sdk", "conformance"] as const;
const manifest = (ws: string) => JSON.parse(readFileSync(join(root, ws, "package.json"), "utf8")) as { name: string; version: string; bin?: Record<string, string> };
const BUILT = ["runtime/dist/index.js", "wire/dist/index.js", "compiler/dist/cli.js", "compiler/dist/playground/index.html", "language-server/dist/cli.js", "sidecar/dist/main.js", "sdk/dist/index.cjs", "conformance/dist/cli.js"];

/**
 * npm started by npm (`npm test`) passes its settings down as npm_* variables (the workspace root's prefix among them):
 * the nested npm sees none but where its cache, registry and user configuration are.
 */
const KEPT = /^npm_config_(cache|registry|userconfig)$/i;
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name) || KEPT.test(name)));
const run = (command: string, args: string[], cwd: string) => spawnSync(command, args, { cwd, env, encoding: "utf8", timeout: 60_000 });

describe("the binaries in the repository", () => {
  const bins = PACKAGES.flatMap((ws) => Object.entries(manifest(ws).bin ?? {}).map(([name, path]) => ({ ws, name, path: join(root, ws, path) })));

  it("are the committed bin/ files, run directly (executable, with a shebang), printing their package's version", () => {
    expect(bins.map((b) => b.name).sort()).toEqual(["writ", "writ-conformance", "writ-language-server", "writ-sidecar"]);
    for (const bin of bins) {
      expect(bin.path).toBe(join(root, bin.ws, "bin", `${bin.name}.js`));
      const r = run(bin.path, ["--version"], root);
      expect({ bin: bin.name, status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ bin: bin.name, status: 0, stdout: `${manifest(bin.ws).version}\n`, stderr: "" });
    }
  });

  it("say in one line that the package is not built when dist/ is missing", () => {
    const dir = mkdtempSync(join(tmpdir(), "writ-unbuilt-"));
    try {
      mkdirSync(join(dir, "bin"));
      writeFileSync(join(dir, "bin", "writ.js"), readFileSync(join(root, "compiler/bin/writ.js")));
      const r = run(process.execPath, [join(dir, "bin", "writ.js"), "help"], dir);
      expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ status: 1, stdout: "", stderr: "writ is not built: run `npm run build`\n" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the packed packages, installed into an empty project", () => {
  let work: string;
  let app: string;
  let packed: { name: string; filename: string; files: { path: string }[] }[];

  beforeAll(() => {
    const missing = BUILT.filter((f) => !existsSync(join(root, f)));
    if (missing.length > 0) throw new Error(`${missing.join(", ")} missing: run \`npm run build\` first (npm test does)`);
    work = mkdtempSync(join(tmpdir(), "writ-packaging-"));
    const tarballs = join(work, "tarballs");
    app = join(work, "app");
    mkdirSync(tarballs);
    mkdirSync(app);
    const workspaces = PACKAGES.flatMap((ws) => ["--workspace", ws]);
    packed = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", tarballs, ...workspaces], { cwd: root, env, encoding: "utf8" })) as typeof packed;
    const dependencies = Object.fromEntries(packed.map((p) => [p.name, `file:${join(tarballs, p.filename)}`]));
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "writ-packaging-check", private: true, dependencies }));
    // The writ packages come from the tarballs (the project depends on each); the others from npm's cache when there.
    const install = run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], app);
    if (install.status !== 0) throw new Error(`npm install of the tarballs failed:\n${install.stderr}`);
  }, 120_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("every tarball has its README.md and LICENSE", () => {
    expect(packed.map((p) => p.name).sort()).toEqual(PACKAGES.map((ws) => manifest(ws).name).sort());
    for (const p of packed) expect({ name: p.name, files: p.files.map((f) => f.path).filter((f) => /^(README\.md|LICENSE)$/.test(f)).sort() }).toEqual({ name: p.name, files: ["LICENSE", "README.md"] });
  });

  it("npx writ: --version, help, and the conformance suite it depends on", () => {
    const version = manifest("compiler").version;
    expect(run("npx", ["writ", "--version"], app)).toMatchObject({ status: 0, stdout: `${version}\n` });
    const help = run("npx", ["writ", "help"], app);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(new RegExp(`^writ ${version.replace(/\./g, "\\.")}: the writ policy compiler\n`));
    const conformance = run("npx", ["writ", "conformance", "--help"], app);
    expect(conformance).toMatchObject({ status: 0, stderr: "" });
    expect(conformance.stdout).toMatch(/^usage: writ conformance --surface a\|b/);
  });

  it("npx writ typegen: the types of a policy's signals, with json-schema-to-typescript from the compiler's own dependencies", () => {
    writeFileSync(join(app, "policy.writ"), readFileSync(join(root, "policies/payments.transfer/1.2.0/policy.writ")));
    const r = run("npx", ["writ", "typegen", "policy.writ", "--out", "-"], app);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
    expect(r.stdout).toContain('export interface WritPolicies {\n  "payments.transfer": {\n    "1.2.0": PaymentsTransfer_1_2_0Signals;');
  });

  it("npx writ playground: serves the playground's static build from the compiler package until SIGTERM", async () => {
    const compiler = packed.find((p) => p.name === "@writ/compiler")!;
    expect(compiler.files.map((f) => f.path).filter((f) => f.startsWith("dist/playground/")).sort()).toEqual([
      "dist/playground/index.html",
      "dist/playground/playground.js",
      "dist/playground/style.css",
    ]);
    const child = spawn(join(app, "node_modules", ".bin", "writ"), ["playground", "--port", "0"], { cwd: app, env, stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).on("line", (line) => {
          const m = /^writ playground: (http:\/\/\S+)/.exec(line);
          if (m) resolve(m[1]!);
        });
        void exited.then((code) => reject(new Error(`writ playground exited with ${code} before serving`)));
      });
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toMatch(/^text\/html/);
      expect(await page.text()).toContain('<script type="module" src="./playground.js">');
      const script = await fetch(new URL("playground.js", url));
      expect(script.status).toBe(200);
      expect((await script.text()).length).toBeGreaterThan(100_000);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  });

  it("npx writ-language-server --version", () => {
    expect(run("npx", ["writ-language-server", "--version"], app)).toMatchObject({ status: 0, stdout: `${manifest("language-server").version}\n`, stderr: "" });
  });

  it("npx writ-sidecar --version", () => {
    expect(run("npx", ["writ-sidecar", "--version"], app)).toMatchObject({ status: 0, stdout: `${manifest("sidecar").version}\n`, stderr: "" });
  });

  it("require(\"@writ/sdk\") from CommonJS, and import from ESM", () => {
    writeFileSync(join(app, "sdk.cjs"), 'const sdk = require("@writ/sdk");\nprocess.stdout.write(typeof sdk.GovernanceClient + " " + typeof sdk.verifyAttestation);\n');
    writeFileSync(join(app, "sdk.mjs"), 'import { GovernanceClient, verifyAttestation } from "@writ/sdk";\nprocess.stdout.write(typeof GovernanceClient + " " + typeof verifyAttestation);\n');
    expect(run(process.execPath, ["sdk.cjs"], app)).toMatchObject({ status: 0, stdout: "function function", stderr: "" });
    expect(run(process.execPath, ["sdk.mjs"], app)).toMatchObject({ status: 0, stdout: "function function", stderr: "" });
  });
});
