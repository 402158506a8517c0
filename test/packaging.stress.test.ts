/**
 * The packages as a user installs them: every writ package packed (`npm pack`, as `npm run pack` does) and each
 * tarball installed ALONE into an empty project of its own, with no workspace and no other writ tarball beside it.
 * There, each works: `require`/`import` of the libraries (the SDK's types checked by tsc in a consumer), `writ`
 * (typegen, playground, and the conformance suite inside the compiler, run against a sidecar), `writ-sidecar` serving,
 * `writ-language-server`, `writ-conformance`; every tarball carries its README and LICENSE, and no file of it imports
 * another writ package (each bundles those it uses). Across three of those projects, an application's round trip: the
 * compiler's compiles the policies and makes a signing key, the sidecar's serves them, the SDK's calls POST /evaluate
 * and verifies the attestation offline against the sidecar's public key. And the binaries of the repository itself:
 * committed, executable files that npm links at install, before anything is built (a fresh clone's `npm install && npm start`).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PACKAGES, packAll, type Packed } from "../scripts/pack/packages.js";

const root = new URL("../", import.meta.url).pathname;
type Workspace = (typeof PACKAGES)[number];
const manifest = (ws: string) =>
  JSON.parse(readFileSync(join(root, ws, "package.json"), "utf8")) as { name: string; version: string; bin?: Record<string, string> };
const BUILT = [
  "runtime/dist/index.js",
  "wire/dist/index.js",
  "compiler/dist/cli.js",
  "compiler/dist/playground/index.html",
  "compiler/dist/conformance/dist/index.js",
  "language-server/dist/cli.js",
  "sidecar/dist/main.js",
  "sdk/dist/index.cjs",
  "conformance/dist/cli.js",
];

/**
 * npm started by npm (`npm test`) passes its settings down as npm_* variables (the workspace root's prefix among them):
 * the nested npm sees none but where its cache, registry and user configuration are.
 */
const KEPT = /^npm_config_(cache|registry|userconfig)$/i;
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name) || KEPT.test(name)));
const run = (command: string, args: string[], cwd: string) => spawnSync(command, args, { cwd, env, encoding: "utf8", timeout: 60_000 });

interface Result {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `run` without blocking, so that several installs proceed at once. */
function runAsync(command: string, args: string[], cwd: string): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.once("error", reject);
    child.once("close", (status) => resolve({ status, stdout, stderr }));
  });
}

describe("the binaries in the repository", () => {
  const bins = PACKAGES.flatMap((ws) =>
    Object.entries(manifest(ws).bin ?? {}).map(([name, path]) => ({ ws, name, path: join(root, ws, path) })),
  );

  it("are the committed bin/ files, run directly (executable, with a shebang), printing their package's version", () => {
    expect(bins.map((b) => b.name).sort()).toEqual(["writ", "writ-conformance", "writ-language-server", "writ-sidecar"]);
    for (const bin of bins) {
      expect(bin.path).toBe(join(root, bin.ws, "bin", `${bin.name}.js`));
      const r = run(bin.path, ["--version"], root);
      expect({ bin: bin.name, status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({
        bin: bin.name,
        status: 0,
        stdout: `${manifest(bin.ws).version}\n`,
        stderr: "",
      });
    }
  });

  it("say in one line that the package is not built when dist/ is missing", () => {
    const dir = mkdtempSync(join(tmpdir(), "writ-unbuilt-"));
    try {
      mkdirSync(join(dir, "bin"));
      writeFileSync(join(dir, "bin", "writ.js"), readFileSync(join(root, "compiler/bin/writ.js")));
      const r = run(process.execPath, [join(dir, "bin", "writ.js"), "help"], dir);
      expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({
        status: 1,
        stdout: "",
        stderr: "writ is not built: run `npm run build`\n",
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("each packed package, installed alone into an empty project", () => {
  let work: string;
  let packed: Packed[];
  const installs = new Map<Workspace, Result>();
  const projects = new Map<Workspace, string>();

  /** The project where `ws` alone is installed; throws with npm's output when that install failed. */
  const project = (ws: Workspace): string => {
    const install = installs.get(ws);
    if (install?.status !== 0) throw new Error(`${manifest(ws).name} did not install alone:\n${install?.stderr ?? "not attempted"}`);
    return projects.get(ws)!;
  };
  const bin = (ws: Workspace, name: string) => join(project(ws), "node_modules", ".bin", name);

  /**
   * tsc over `files` (name to text) in `dir`, as a consumer's strict project. Types that did not resolve would be
   * `any`, which skipLibCheck does not report: each file holds a `@ts-expect-error` that needs the real type.
   */
  const typecheck = (dir: string, files: Readonly<Record<string, string>>) => {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const compilerOptions = {
      strict: true,
      module: "nodenext",
      target: "es2022",
      noEmit: true,
      skipLibCheck: true,
      typeRoots: [join(root, "node_modules/@types")],
      types: ["node"],
    };
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: Object.keys(files) }));
    const tsc = run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "."], dir);
    return { status: tsc.status, stdout: tsc.stdout };
  };

  beforeAll(async () => {
    const missing = BUILT.filter((f) => !existsSync(join(root, f)));
    if (missing.length > 0) throw new Error(`${missing.join(", ")} missing: run \`npm run build\` first (npm test does)`);
    work = mkdtempSync(join(tmpdir(), "writ-packaging-"));
    const tarballs = join(work, "tarballs");
    mkdirSync(tarballs);
    packed = packAll(root, tarballs, env);
    // All at once: each is mostly waiting for npm's cache. The other packages come from that cache when there.
    await Promise.all(
      PACKAGES.map(async (ws) => {
        const dir = join(work, ws);
        mkdirSync(dir);
        writeFileSync(join(dir, "package.json"), JSON.stringify({ name: `writ-alone-${ws}`, private: true }));
        const tarball = join(tarballs, packed.find((p) => p.name === manifest(ws).name)!.filename);
        projects.set(ws, dir);
        installs.set(ws, await runAsync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball], dir));
      }),
    );
  }, 300_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it.each(PACKAGES)("%s: installs with no other writ package, and no engine warning on this Node.js", (ws) => {
    const dir = project(ws);
    // npm reports a dependency that needs a newer Node.js than the engines field promises as EBADENGINE (a warning
    // only). The root's overrides do not reach a user's install: the sidecar depends on light-my-request 6.6 for this
    // alone, as the root overrides it, since fastify's ^6 would take 6.8, whose cookie 2 needs Node.js 22.
    expect(installs.get(ws)!.stderr).not.toContain("EBADENGINE");
    expect(readdirSync(join(dir, "node_modules", "@writ"))).toEqual([manifest(ws).name.slice("@writ/".length)]);
  });

  it("every tarball has its README.md and LICENSE, and no file of it imports another writ package", () => {
    expect(packed.map((p) => p.name).sort()).toEqual(PACKAGES.map((ws) => manifest(ws).name).sort());
    for (const p of packed)
      expect({
        name: p.name,
        files: p.files
          .map((f) => f.path)
          .filter((f) => /^(README\.md|LICENSE)$/.test(f))
          .sort(),
      }).toEqual({ name: p.name, files: ["LICENSE", "README.md"] });
    // Source maps quote the sources, imports included: only the code and the declarations count.
    const imports = /(?:from|import\(|require\()\s*["']@writ\/[^"']*["']/g;
    const found = PACKAGES.flatMap((ws) => {
      const dir = join(project(ws), "node_modules", manifest(ws).name);
      const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => /\.(c?js|d\.c?ts)$/.test(f));
      return files.flatMap((f) => (readFileSync(join(dir, f), "utf8").match(imports) ?? []).map((m) => `${manifest(ws).name}/${f}: ${m}`));
    });
    expect(found).toEqual([]);
  });

  it("@writ/runtime and @writ/wire: import, and require of the runtime", () => {
    const dir = project("runtime");
    writeFileSync(
      join(dir, "runtime.mjs"),
      'import { canonicalJson, RUNTIME_VERSION } from "@writ/runtime";\nprocess.stdout.write(RUNTIME_VERSION + " " + canonicalJson({ b: 1, a: [true] }));\n',
    );
    writeFileSync(
      join(dir, "runtime.cjs"),
      'const { canonicalJson } = require("@writ/runtime");\nprocess.stdout.write(canonicalJson({ b: 1, a: [true] }));\n',
    );
    expect(run(process.execPath, ["runtime.mjs"], dir)).toMatchObject({
      status: 0,
      stdout: `${manifest("runtime").version} {"a":[true],"b":1}`,
      stderr: "",
    });
    expect(run(process.execPath, ["runtime.cjs"], dir)).toMatchObject({ status: 0, stdout: '{"a":[true],"b":1}', stderr: "" });
    writeFileSync(
      join(project("wire"), "wire.mjs"),
      'import { PROVENANCE_VERSION, EvaluateRequest } from "@writ/wire";\nprocess.stdout.write(PROVENANCE_VERSION + " " + EvaluateRequest.type);\n',
    );
    expect(run(process.execPath, ["wire.mjs"], project("wire"))).toMatchObject({
      status: 0,
      stdout: "SERVICE_PROVENANCE_V1 object",
      stderr: "",
    });
  });

  it("@writ/runtime's types (the wire's, carried in its declarations) and @writ/wire/types, checked by tsc in a consumer", () => {
    expect(
      typecheck(project("runtime"), {
        "consumer.mts": [
          'import type { AttestationV1 } from "@writ/runtime";',
          "// @ts-expect-error not an execution state of the wire types",
          'export const state: AttestationV1["execution_state"] = "maybe";',
          "",
        ].join("\n"),
      }),
    ).toEqual({ status: 0, stdout: "" });
    expect(
      typecheck(project("wire"), {
        "consumer.mts": [
          'import type { EvaluateResponse } from "@writ/wire/types";',
          'import * as types from "@writ/wire/types";',
          "// @ts-expect-error not a status of the wire types",
          'export const status: EvaluateResponse["status"] = "maybe";',
          "// @ts-expect-error the entry has types alone: its module is empty",
          "export const schema = types.EvaluateResponse;",
          "",
        ].join("\n"),
      }),
    ).toEqual({ status: 0, stdout: "" });
  });

  it("writ: --version, help, and the conformance suite inside it", () => {
    const version = manifest("compiler").version;
    expect(run(bin("compiler", "writ"), ["--version"], project("compiler"))).toMatchObject({ status: 0, stdout: `${version}\n` });
    const help = run(bin("compiler", "writ"), ["help"], project("compiler"));
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(new RegExp(`^writ ${version.replace(/\./g, "\\.")}: the writ policy compiler\n`));
    const conformance = run(bin("compiler", "writ"), ["conformance", "--help"], project("compiler"));
    expect(conformance).toMatchObject({ status: 0, stderr: "" });
    expect(conformance.stdout).toMatch(/^usage: writ conformance --surface a\|b/);
  });

  it("writ typegen: the types of a policy's signals, with json-schema-to-typescript from the compiler's own dependencies", () => {
    const dir = project("compiler");
    writeFileSync(join(dir, "policy.writ"), readFileSync(join(root, "policies/payments.transfer/1.2.0/policy.writ")));
    const r = run(bin("compiler", "writ"), ["typegen", "policy.writ", "--out", "-"], dir);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
    expect(r.stdout).toContain('export interface WritPolicies {\n  "payments.transfer": {\n    "1.2.0": PaymentsTransfer_1_2_0Signals;');
  });

  it("writ playground: serves the playground's static build from the compiler package until SIGTERM", async () => {
    const compiler = packed.find((p) => p.name === "@writ/compiler")!;
    expect(
      compiler.files
        .map((f) => f.path)
        .filter((f) => f.startsWith("dist/playground/"))
        .sort(),
    ).toEqual(["dist/playground/index.html", "dist/playground/playground.js", "dist/playground/style.css"]);
    const child = spawn(bin("compiler", "writ"), ["playground", "--port", "0"], {
      cwd: project("compiler"),
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
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

  it("writ-language-server --version, writ-conformance --version", () => {
    expect(run(bin("language-server", "writ-language-server"), ["--version"], project("language-server"))).toMatchObject({
      status: 0,
      stdout: `${manifest("language-server").version}\n`,
      stderr: "",
    });
    expect(run(bin("conformance", "writ-conformance"), ["--version"], project("conformance"))).toMatchObject({
      status: 0,
      stdout: `${manifest("conformance").version}\n`,
      stderr: "",
    });
  });

  it('@writ/sdk: require("@writ/sdk") from CommonJS, import from ESM, and its types checked by tsc in the consumer', () => {
    const dir = project("sdk");
    writeFileSync(
      join(dir, "sdk.cjs"),
      'const sdk = require("@writ/sdk");\nprocess.stdout.write(typeof sdk.GovernanceClient + " " + typeof sdk.verifyAttestation);\n',
    );
    writeFileSync(
      join(dir, "sdk.mjs"),
      'import { GovernanceClient, verifyAttestation } from "@writ/sdk";\nprocess.stdout.write(typeof GovernanceClient + " " + typeof verifyAttestation);\n',
    );
    expect(run(process.execPath, ["sdk.cjs"], dir)).toMatchObject({ status: 0, stdout: "function function", stderr: "" });
    expect(run(process.execPath, ["sdk.mjs"], dir)).toMatchObject({ status: 0, stdout: "function function", stderr: "" });
    // Each @ts-expect-error needs the real type (the wire's status union, the runtime's verification).
    const mts = [
      'import { GovernanceClient, MemoryReplayStore, verifyAttestation, type EvaluateResponse } from "@writ/sdk";',
      'const writ = new GovernanceClient({ baseUrl: "http://127.0.0.1:8080", apiKey: "0123456789abcdef" });',
      "export async function decide(pinnedKey: string): Promise<boolean> {",
      '  const answer: EvaluateResponse = await writ.evaluate({ executionId: "e-1", policyId: "p", policyVersion: "1.0.0", verifiedSignals: { amount: 1 } });',
      "  // @ts-expect-error not a status of the wire types",
      '  const status: EvaluateResponse["status"] = "maybe";',
      "  // @ts-expect-error `valid` is a boolean",
      "  const valid: string = verifyAttestation(answer.attestation, pinnedKey).valid;",
      "  return status !== valid && new MemoryReplayStore() !== null;",
      "}",
      "",
    ];
    const cts = [
      'import sdk = require("@writ/sdk");',
      "// @ts-expect-error not a status of the wire types",
      'export const status: sdk.EvaluateResponse["status"] = "maybe";',
      "",
    ];
    expect(typecheck(dir, { "consumer.mts": mts.join("\n"), "consumer.cts": cts.join("\n") })).toEqual({ status: 0, stdout: "" });
  });

  describe("an application's round trip: writ compiles, writ-sidecar serves, the SDK evaluates and verifies", () => {
    let runDir: string;
    let sidecar: ChildProcess | undefined;
    let url: string;
    const API_KEY = "packaging-test-key-0123456789";

    beforeAll(async () => {
      runDir = join(work, "run");
      mkdirSync(join(runDir, "data"), { recursive: true, mode: 0o700 });
      const writ = (args: string[]) => {
        const r = run(bin("compiler", "writ"), args, project("compiler"));
        if (r.status !== 0) throw new Error(`writ ${args.join(" ")} failed:\n${r.stderr}`);
      };
      writ(["keygen", "--out", join(runDir, "signing")]);
      writ(["compile", join(root, "conformance/fixtures/policies"), "--out", join(runDir, "policies")]);
      const sidecarEnv = {
        PATH: process.env["PATH"] ?? "",
        SERVICE_API_KEY: API_KEY,
        SERVICE_SIGNING_KEY_FILE: join(runDir, "signing.key"),
        SERVICE_POLICIES_ROOT: join(runDir, "policies"),
        SERVICE_DATA_DIR: join(runDir, "data"),
        SERVICE_PORT: "0",
        SERVICE_B_PORT: "off",
      };
      const child = spawn(bin("sidecar", "writ-sidecar"), [], {
        cwd: project("sidecar"),
        env: sidecarEnv,
        stdio: ["ignore", "pipe", "pipe"],
      });
      sidecar = child;
      let output = "";
      child.stderr.on("data", (d: Buffer) => (output += d.toString()));
      url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).on("line", (line) => {
          output += `${line}\n`;
          const m = /"msg":"Surface A listening on (http:\/\/[^"]+)"/.exec(line);
          if (m) resolve(m[1]!);
        });
        child.once("exit", (code) => reject(new Error(`writ-sidecar exited with ${code} before listening:\n${output}`)));
      });
    }, 180_000);

    afterAll(async () => {
      const child = sidecar;
      if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    });

    it("POST /evaluate through GovernanceClient: approved, and the attestation verifies offline against the sidecar's key (a changed one does not)", () => {
      const dir = project("sdk");
      writeFileSync(
        join(dir, "evaluate.mjs"),
        [
          'import { readFileSync } from "node:fs";',
          'import { GovernanceClient, verifyAttestation } from "@writ/sdk";',
          "const writ = new GovernanceClient({ baseUrl: process.env.WRIT_URL, apiKey: process.env.WRIT_API_KEY });",
          'const pinnedKey = readFileSync(process.env.WRIT_PUBLIC_KEY_FILE, "utf8");',
          "const { status, attestation } = await writ.evaluate({",
          '  executionId: "packaging-1", policyId: "conformance.transfer", policyVersion: "1.0.0",',
          '  verifiedSignals: { amount: 250, currency: "USD", kyc_verified: true, risk_score: 10 },',
          "});",
          "const verified = verifyAttestation(attestation, pinnedKey);",
          'const changed = { ...attestation, decision: { ...attestation.decision, outcome: { ...attestation.decision.outcome, verdict: "reject" } } };',
          "process.stdout.write(JSON.stringify({ status, valid: verified.valid, errors: verified.errors, changed: verifyAttestation(changed, pinnedKey).valid }));",
          "",
        ].join("\n"),
      );
      const r = spawnSync(process.execPath, ["evaluate.mjs"], {
        cwd: dir,
        encoding: "utf8",
        timeout: 60_000,
        env: { ...env, WRIT_URL: url, WRIT_API_KEY: API_KEY, WRIT_PUBLIC_KEY_FILE: join(runDir, "signing.pub") },
      });
      expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
      expect(JSON.parse(r.stdout)).toEqual({ status: "approved", valid: true, errors: [], changed: false });
    });

    it("writ conformance from the compiler alone: the suite's evaluate cases pass against that sidecar, the report names the suite's version", () => {
      const report = join(runDir, "report.json");
      const r = run(
        bin("compiler", "writ"),
        [
          "conformance",
          "--surface",
          "a",
          "--base-url",
          url,
          "--api-key",
          API_KEY,
          "--public-key",
          join(runDir, "signing.pub"),
          "--only",
          "a.evaluate.",
          "--report",
          report,
        ],
        project("compiler"),
      );
      expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
      const json = JSON.parse(readFileSync(report, "utf8")) as { suiteVersion: string; passed: boolean; cases: { outcome: string }[] };
      expect({ suiteVersion: json.suiteVersion, passed: json.passed }).toEqual({
        suiteVersion: manifest("conformance").version,
        passed: true,
      });
      expect(json.cases.length).toBeGreaterThan(0);
      expect(json.cases.filter((c) => c.outcome !== "pass")).toEqual([]);
    });
  });
});
