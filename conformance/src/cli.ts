#!/usr/bin/env node
/** `writ-conformance`: the suite's binary (docs/conformance.md). */
import { runConformanceCli } from "./cli-main.js";

/** A closed pipe (`writ-conformance ... | head -1`) drops the lines after it, quietly; the run still finishes. */
function lineWriter(stream: NodeJS.WriteStream): (line: string) => void {
  let open = true;
  stream.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code !== "EPIPE") throw e;
    open = false;
  });
  return (line) => {
    if (open) stream.write(`${line}\n`);
  };
}

process.exitCode = await runConformanceCli(process.argv.slice(2), {
  cwd: process.cwd(),
  out: lineWriter(process.stdout),
  err: lineWriter(process.stderr),
});
