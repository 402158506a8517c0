#!/usr/bin/env node
// `writ-language-server`: runs dist/cli.js, the build output: a committed file, so npm links it at install, before anything is built.
import { existsSync } from "node:fs";
import process from "node:process";
import { URL } from "node:url";

const built = new URL("../dist/cli.js", import.meta.url);
if (!existsSync(built)) {
  process.stderr.write("writ-language-server is not built: run `npm run build`\n");
  process.exit(1);
}
await import(built.href);
