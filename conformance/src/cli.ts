#!/usr/bin/env node
/** `writ-conformance`: the suite's binary (docs/conformance.md). */
import { runConformanceCli } from "./cli-main.js";

process.exitCode = await runConformanceCli(process.argv.slice(2), {
  cwd: process.cwd(),
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
});
