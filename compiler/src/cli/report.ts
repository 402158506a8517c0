import type { CompileResult } from "../compile.js";
import { formatDiagnosticLine, renderDiagnostic } from "../diagnostics/diagnostic.js";
import { LineIndex } from "../diagnostics/source.js";
import type { CliIo } from "./io.js";
import type { SourceFile } from "./sources.js";

export type DiagnosticFormat = "pretty" | "short" | "json";

/** Prints a compile's diagnostics to stderr, errors before warnings, in the chosen format. */
export function reportDiagnostics(io: CliIo, file: SourceFile, result: CompileResult, format: DiagnosticFormat): void {
  const all = [...result.errors, ...result.warnings];
  if (format === "json") {
    for (const d of all) io.out(JSON.stringify(d));
    return;
  }
  const lines = new LineIndex(file.text);
  for (const d of all) io.err(format === "short" ? formatDiagnosticLine(d) : `${renderDiagnostic(d, lines)}\n`);
}

export function plural(n: number, word: string, words = `${word}s`): string {
  return `${n} ${n === 1 ? word : words}`;
}
