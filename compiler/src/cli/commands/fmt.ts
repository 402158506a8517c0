import { formatSource } from "../../fmt/format.js";
import { renderDiagnostic } from "../../diagnostics/diagnostic.js";
import { LineIndex } from "../../diagnostics/source.js";
import { EXIT, type CliIo } from "../io.js";
import { plural } from "../report.js";
import { collectSources, writeAtomically } from "../sources.js";

/** `write` rewrites files; `check` lists those that differ; `diff` prints, for each, the unified diff fmt would apply. */
export type FmtMode = "write" | "check" | "diff";

/**
 * `writ fmt`: rewrites policies in canonical form; `check` and `diff` change nothing and exit 1 when a file is not in
 * canonical form. A diff is git's form (`--- a/PATH`, `+++ b/PATH`, paths as shown), so `git apply` takes it.
 */
export async function runFmt(io: CliIo, paths: readonly string[], mode: FmtMode): Promise<number> {
  const sources = await collectSources(io.cwd, paths);
  let broken = 0;
  let changed = 0;
  for (const file of sources) {
    const result = formatSource(file.display, file.text);
    if (!result.ok) {
      broken++;
      const lines = new LineIndex(file.text);
      for (const d of result.errors) io.err(`${renderDiagnostic(d, lines)}\n`);
      continue;
    }
    if (result.text === file.text) continue;
    changed++;
    if (mode === "diff") {
      // jsdiff is loaded only for --diff: `fmt` and `fmt --check` print no patch.
      const { createTwoFilesPatch, FILE_HEADERS_ONLY } = await import("diff");
      const patch = createTwoFilesPatch(`a/${file.display}`, `b/${file.display}`, file.text, result.text, undefined, undefined, {
        headerOptions: FILE_HEADERS_ONLY,
      });
      io.out(patch.trimEnd());
    } else if (mode === "check") io.out(`${file.display}: not formatted`);
    else {
      await writeAtomically(file.absolute, result.text);
      io.out(`${file.display}: formatted`);
    }
  }
  const what = mode === "write" ? `${changed} reformatted` : `${changed} not formatted`;
  io.err(`${plural(sources.length, "file")}: ${what}${broken ? `, ${broken} with syntax errors` : ""}`);
  if (broken > 0) return EXIT.compileFailed;
  return mode !== "write" && changed > 0 ? EXIT.unformatted : EXIT.ok;
}
