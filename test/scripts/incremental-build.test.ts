/**
 * `npm run build` and `npm start` build a workspace only when its inputs changed (scripts/lib/incremental-build.ts),
 * checked on a repository of four workspaces whose builds record each run: `lib`; `app`, which depends on lib (and so
 * reads its sources); `site`, built after app (`writ.buildAfter`: it uses app's dist/); and `other`.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build } from "../../scripts/lib/incremental-build.js";

// Each build appends "<workspace> start" (then " js" for `build:js`) and "<workspace> end" to ../builds.log and copies
// src/value.txt to dist/; a value of "fail" fails the build.
const BUILD_SCRIPT = `
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
const name = process.cwd().split("/").pop();
appendFileSync("../builds.log", name + " start" + (process.argv[2] === "--js" ? " js" : "") + "\\n");
const value = readFileSync("src/value.txt", "utf8");
if (value === "fail") { console.error("value is fail"); process.exit(1); }
mkdirSync("dist", { recursive: true });
writeFileSync("dist/out.txt", value);
appendFileSync("../builds.log", name + " end\\n");
`;

let root: string;
let said: string[];
const write = (path: string, text: string) => {
  mkdirSync(join(root, path, ".."), { recursive: true });
  writeFileSync(join(root, path), text);
};
const builds = (): string[] =>
  existsSync(join(root, "builds.log")) ? readFileSync(join(root, "builds.log"), "utf8").trim().split("\n") : [];
const run = async (targets?: string[], force = false, declarations = true) => {
  rmSync(join(root, "builds.log"), { force: true });
  said = [];
  return build({ root, ...(targets && { targets }), force, declarations, say: (line) => void said.push(line) });
};

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "writ-incremental-build-"));
  write("package.json", JSON.stringify({ name: "repo", private: true, workspaces: ["lib", "app", "site", "other"] }));
  write("tsconfig.base.json", "{}");
  const packages = [
    ["lib", {}],
    ["app", { devDependencies: { lib: "1.0.0" } }],
    ["site", { writ: { buildAfter: ["app"] } }],
    ["other", {}],
  ] as const;
  for (const [name, fields] of packages) {
    // lib and app have declarations to skip; site and other build the same either way.
    const scripts = { build: "node build.mjs", ...(name === "lib" || name === "app" ? { "build:js": "node build.mjs --js" } : {}) };
    write(`${name}/package.json`, JSON.stringify({ name, version: "1.0.0", type: "module", scripts, ...fields }));
    write(`${name}/build.mjs`, BUILD_SCRIPT);
    write(`${name}/src/value.txt`, `${name} 1`);
  }
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("the incremental build", () => {
  it("builds everything once, what uses another's output after it, then nothing while nothing changed", async () => {
    expect(await run()).toBe(true);
    const log = builds();
    expect(log.filter((l) => l.endsWith("start")).sort()).toEqual(["app start", "lib start", "other start", "site start"]);
    expect(log.indexOf("app end")).toBeLessThan(log.indexOf("site start"));
    expect(readFileSync(join(root, "app/dist/out.txt"), "utf8")).toBe("app 1");

    expect(await run()).toBe(true);
    expect(builds()).toEqual([]);
    expect(said.sort()).toEqual(["app: up to date", "lib: up to date", "other: up to date", "site: up to date"]);
  });

  it("rebuilds a changed workspace, those that read its sources and those built after them, nothing else", async () => {
    await run();
    write("site/src/value.txt", "site 2");
    await run();
    expect(builds()).toEqual(["site start", "site end"]);

    write("lib/src/value.txt", "lib 2");
    await run();
    expect(
      builds()
        .filter((l) => l.endsWith("start"))
        .sort(),
    ).toEqual(["app start", "lib start", "site start"]);
  });

  it("ignores tests and Markdown, not the lock file", async () => {
    await run();
    write("lib/test/a.test.ts", "changed");
    write("lib/README.md", "changed");
    await run();
    expect(builds()).toEqual([]);
    write("package-lock.json", "{}");
    await run();
    expect(builds()).toHaveLength(8);
  });

  it("builds only the named workspaces and those whose output they use", async () => {
    expect(await run(["site"])).toBe(true);
    expect(
      builds()
        .filter((l) => l.endsWith("start"))
        .sort(),
    ).toEqual(["app start", "site start"]);
    await run(["other"]);
    expect(builds()).toEqual(["other start", "other end"]);
    await expect(run(["nope"])).rejects.toThrow("no workspace with a build script: nope (known: lib, app, site, other)");
  });

  it("after a failed build, says why, builds nothing that uses its output, and builds it again next time", async () => {
    await run();
    write("app/src/value.txt", "fail");
    write("site/src/value.txt", "site 2");
    expect(await run()).toBe(false);
    expect(builds()).toEqual(["app start"]);
    expect(said.find((l) => l.startsWith("app: build failed"))).toMatch(/^app: build failed \(`node build.mjs` in app\):\nvalue is fail$/);

    write("app/src/value.txt", "app 2");
    expect(await run()).toBe(true);
    expect(
      builds()
        .filter((l) => l.endsWith("start"))
        .sort(),
    ).toEqual(["app start", "site start"]);
  });

  it("builds again a workspace whose dist/ was deleted, or all of them when forced", async () => {
    await run();
    rmSync(join(root, "other/dist"), { recursive: true });
    await run();
    expect(builds()).toEqual(["other start", "other end"]);
    await run(undefined, true);
    expect(builds()).toHaveLength(8);
  });

  it("without declarations runs build:js where there is one; a build with them serves both, not the other way round", async () => {
    await run(undefined, false, false);
    expect(
      builds()
        .filter((l) => l.includes("start"))
        .sort(),
    ).toEqual(["app start js", "lib start js", "other start", "site start"]);
    expect(said.find((l) => l.startsWith("lib: built"))).toMatch(/^lib: built in \d+\.\d s \(JavaScript only\)$/);
    expect(said.find((l) => l.startsWith("other: built"))).toMatch(/^other: built in \d+\.\d s$/);
    await run(undefined, false, false);
    expect(builds()).toEqual([]);

    await run();
    expect(
      builds()
        .filter((l) => l.includes("start"))
        .sort(),
    ).toEqual(["app start", "lib start"]);
    await run(undefined, false, false);
    expect(builds()).toEqual([]);
  });
});
