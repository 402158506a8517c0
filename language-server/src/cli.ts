import process from "node:process";
import { serveFromCommandLine } from "./main.js";

const code = serveFromCommandLine(
  (line) => process.stderr.write(`${line}\n`),
  (line) => process.stdout.write(`${line}\n`),
);
if (code !== null) process.exitCode = code;
