import { formatSource } from "../../fmt/format.js";
import { renderDiagnostic } from "../../diagnostics/diagnostic.js";
import { LineIndex } from "../../diagnostics/source.js";
import { EXIT, type CliIo } from "../io.js";
import { plural } from "../report.js";
import { collectSources, writeAtomically } from "../sources.js";

/** `writ fmt`: rewrites policies in canonical form; with `check`, only reports which ones differ. */
export async function runFmt(io: CliIo, paths: readonly string[], check: boolean): Promise<number> {
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
    if (check) io.out(`${file.display}: not formatted`);
    else {
      await writeAtomically(file.absolute, result.text);
      io.out(`${file.display}: formatted`);
    }
  }
  const what = check ? `${changed} not formatted` : `${changed} reformatted`;
  io.err(`${plural(sources.length, "file")}: ${what}${broken ? `, ${broken} with syntax errors` : ""}`);
  if (broken > 0) return EXIT.compileFailed;
  return check && changed > 0 ? EXIT.unformatted : EXIT.ok;
}
