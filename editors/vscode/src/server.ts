import process from "node:process";
import { serveFromCommandLine } from "@writ/language-server";

// The language server the extension starts (bundled as dist/server.cjs, so the .vsix needs nothing installed).
const code = serveFromCommandLine(
  (line) => process.stderr.write(`${line}\n`),
  (line) => process.stdout.write(`${line}\n`),
);
if (code !== null) process.exitCode = code;
