import { DiagnosticSink } from "../diagnostics/diagnostic.js";
import { LineIndex, type Span } from "../diagnostics/source.js";

/** What every phase can see: the file being compiled and where its diagnostics go. */
export interface PhaseContext {
  readonly file: string;
  readonly text: string;
  readonly lines: LineIndex;
  readonly sink: DiagnosticSink;
}

export function createContext(file: string, text: string): PhaseContext {
  return { file, text, lines: new LineIndex(text), sink: new DiagnosticSink(file) };
}

/** Span of `[start, end)` offsets; helpers keep the phases free of position arithmetic. */
export function spanOf(ctx: PhaseContext, start: number, end: number): Span {
  return ctx.lines.span(start, end);
}

export function joinSpans(a: Span, b: Span): Span {
  return { start: a.start, end: b.end };
}
