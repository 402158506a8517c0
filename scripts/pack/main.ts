/**
 * `npm run pack`: builds the published packages and what they need, those not up to date (`npm run build -- <workspace…>`,
 * scripts/build.ts), then writes their tarballs into dist/packages/ at the repository root, replacing earlier ones,
 * and prints where. Each installs alone: `npm install /path/to/writ-sdk-0.1.0.tgz` in any project.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PACKAGES, packAll } from "./packages.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const destination = join(root, "dist", "packages");

execFileSync("npm", ["run", "build", "--", ...PACKAGES], { cwd: root, stdio: "inherit" });
rmSync(destination, { recursive: true, force: true });
mkdirSync(destination, { recursive: true });
const packed = packAll(root, destination);

const width = Math.max(...packed.map((p) => p.filename.length));
process.stdout.write(`\n${packed.length} packages packed into ${destination}:\n`);
for (const p of packed) process.stdout.write(`  ${p.filename.padEnd(width)}  ${Math.round(p.size / 1024)} KB  ${p.name}\n`);
process.stdout.write(`Install one alone, e.g.: npm install ${join(destination, packed.find((p) => p.name === "@writ/sdk")!.filename)}\n`);
