/**
 * `npm run lint`'s comment check: the rules of scripts/lib/comment-rules.ts over the sources of every package's src/
 * and of scripts/; prints `file:line: rule: message` for each finding and fails when there is one.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { checkComments } from "./lib/comment-rules.js";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const PACKAGES = ["runtime", "wire", "compiler", "language-server", "sidecar", "sdk", "conformance", "editors/vscode", "playground"];
const FOLDERS = [...PACKAGES.map((name) => `${name}/src`), "scripts"];
const SOURCE = /\.(?:[mc]?ts|[mc]?js)$/;

function* sourcesUnder(folder: string): Generator<string> {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory() && entry.name !== "node_modules" && entry.name !== "dist") yield* sourcesUnder(path);
    else if (entry.isFile() && SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts")) yield path;
  }
}

/** Every package a package.json of the repository depends on: a version of one in a comment is a figure. */
function dependencyNames(): string[] {
  const names = new Set<string>();
  for (const folder of ["", ...PACKAGES]) {
    const manifest = JSON.parse(readFileSync(join(ROOT, folder, "package.json"), "utf8")) as Record<string, unknown>;
    for (const field of ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"]) {
      for (const name of Object.keys((manifest[field] as Record<string, string> | undefined) ?? {})) names.add(name);
    }
  }
  return [...names];
}

const libraries = dependencyNames();
let failures = 0;
for (const folder of FOLDERS) {
  for (const path of sourcesUnder(join(ROOT, folder))) {
    const file = relative(ROOT, path);
    for (const finding of checkComments(file, readFileSync(path, "utf8"), libraries)) {
      failures += 1;
      process.stderr.write(`${file}:${finding.line}: ${finding.rule}: ${finding.message}\n`);
    }
  }
}
if (failures > 0) {
  process.stderr.write(`check-comments: ${failures} finding(s); the rules: README.md, "Comments state reasons"\n`);
  process.exitCode = 1;
}
