/**
 * `npm run build [-- workspace… | --force | --no-declarations]`: builds every workspace (or the named ones and what
 * they need), skipping each that is up to date (scripts/lib/incremental-build.ts); `--force` builds them all again,
 * `--no-declarations` skips the type declarations (`npm test` needs none).
 */
import { fileURLToPath } from "node:url";
import { build } from "./lib/incremental-build.js";

const args = process.argv.slice(2);
const started = performance.now();
const say = (line: string): void => void process.stderr.write(`build: ${line}\n`);
const flags = ["--force", "--no-declarations"];
const unknown = args.filter((a) => a.startsWith("-") && !flags.includes(a));
if (unknown.length > 0) {
  say(`unknown option ${unknown[0]} (known: ${flags.join(", ")})`);
  process.exit(2);
}
const targets = args.filter((a) => !a.startsWith("-")).map((a) => a.replace(/\/$/, ""));
build({
  root: fileURLToPath(new URL("../", import.meta.url)),
  targets,
  force: args.includes("--force"),
  declarations: !args.includes("--no-declarations"),
  say,
}).then(
  (ok) => {
    if (ok) say(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    process.exitCode = ok ? 0 : 1;
  },
  (e: unknown) => {
    say(e instanceof Error ? e.message : String(e));
    process.exitCode = 2;
  },
);
