/**
 * The .vsix a user installs (`npm run package:vscode`): built with vsce, then read back as the zip it is. It
 * holds the manifest, the grammar, the language configuration and two self-contained bundles, and the bundled
 * language server answers over stdio from a directory with no node_modules.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import yauzl from "yauzl";
import { spawnedSession } from "../../../language-server/test/support/session.js";
import { writGrammar } from "../src/grammar.js";

const repo = new URL("../../../", import.meta.url).pathname;
const vsix = join(repo, "editors/vscode/dist/writ.vsix");

/** npm started by npm passes its settings down as npm_* variables; the nested npm keeps only where its cache and registry are. */
const KEPT = /^npm_config_(cache|registry|userconfig)$/i;
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name) || KEPT.test(name)));

function readZip(path: string): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      const files = new Map<string, Buffer>();
      zip.on("entry", (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e) return reject(e);
          const chunks: Buffer[] = [];
          stream.on("data", (c: Buffer) => chunks.push(c));
          stream.on("end", () => {
            files.set(entry.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.on("end", () => resolve(files));
      zip.on("error", reject);
      zip.readEntry();
    });
  });
}

describe("the VS Code extension package", () => {
  let files: Map<string, Buffer>;
  const text = (name: string): string => files.get(name)!.toString("utf8");

  beforeAll(async () => {
    const r = spawnSync("npm", ["run", "package:vscode"], { cwd: repo, env, encoding: "utf8", timeout: 120_000 });
    expect(r.status, r.stderr + r.stdout).toBe(0);
    files = await readZip(vsix);
  }, 150_000);

  it("holds the manifest, the grammar, the language configuration and the two bundles, nothing else", () => {
    expect([...files.keys()].sort()).toEqual([
      "[Content_Types].xml",
      "extension.vsixmanifest",
      "extension/LICENSE.txt",
      "extension/dist/extension.cjs",
      "extension/dist/server.cjs",
      "extension/dist/writ.tmLanguage.json",
      "extension/language-configuration.json",
      "extension/package.json",
      "extension/readme.md",
    ]);
    expect(text("extension.vsixmanifest")).toContain('<Identity Language="en-US" Id="vscode-writ" Version="0.1.0" Publisher="writ" />');
  });

  it("contributes the writ language for .writ files, its grammar and its configuration, and starts from the bundled client", () => {
    const manifest = JSON.parse(text("extension/package.json")) as {
      main: string;
      contributes: {
        languages: { id: string; extensions: string[]; configuration: string }[];
        grammars: { language: string; scopeName: string; path: string }[];
      };
    };
    const inPackage = (p: string) => `extension/${p.replace(/^\.\//, "")}`;
    expect(manifest.contributes.languages).toEqual([expect.objectContaining({ id: "writ", extensions: [".writ"] })]);
    expect(files.has(inPackage(manifest.contributes.languages[0]!.configuration))).toBe(true);
    expect(JSON.parse(text(inPackage(manifest.contributes.languages[0]!.configuration)))).toMatchObject({ comments: { lineComment: "#" } });
    expect(manifest.contributes.grammars).toEqual([{ language: "writ", scopeName: "source.writ", path: "./dist/writ.tmLanguage.json" }]);
    expect(JSON.parse(text(inPackage(manifest.contributes.grammars[0]!.path)))).toEqual(writGrammar());
    expect(files.has(inPackage(manifest.main))).toBe(true);
  });

  it("bundles every dependency: the two bundles require only Node's modules and `vscode`", () => {
    const node = new Set(builtinModules);
    for (const bundle of ["extension/dist/extension.cjs", "extension/dist/server.cjs"]) {
      // A call, not the text of one inside a string (ajv keeps `'require("ajv/dist/runtime/equal")'` for generated code).
      const required = [...text(bundle).matchAll(/(?<!['"`])\brequire\("([^"]+)"\)/g)].map((m) => m[1]!.replace(/^node:/, ""));
      expect(required.length, bundle).toBeGreaterThan(0);
      expect(
        required.filter((m) => !node.has(m) && !(bundle.endsWith("extension.cjs") && m === "vscode")),
        bundle,
      ).toEqual([]);
    }
  });

  describe("its language server, run alone from a directory with no node_modules", () => {
    const dir = mkdtempSync(join(tmpdir(), "writ-vsix-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("publishes diagnostics for a policy with an error", async () => {
      writeFileSync(join(dir, "server.cjs"), files.get("extension/dist/server.cjs")!);
      const session = await spawnedSession(process.execPath, [join(dir, "server.cjs"), "--stdio"]);
      try {
        const published = await session.open(
          "file:///p/policy.writ",
          'policy "p" version "1.0.0"\ngoverns "a"\nsignals { n: number }\nrule r when m > 1 reject "r"\n',
        );
        expect(published.diagnostics.map((d) => [d.code, d.message, d.range.start])).toEqual([
          ["W401", "signal `n` is declared but no rule or binding uses it", { line: 2, character: 10 }],
          ["E404", "unknown name `m`", { line: 3, character: 12 }],
        ]);
      } finally {
        await session.close();
      }
    });
  });
});
