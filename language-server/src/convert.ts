import type { Diagnostic as WritDiagnostic, TextRange } from "@writ/compiler";
import { DiagnosticSeverity, DiagnosticTag, type Diagnostic, type Range } from "vscode-languageserver";
import type { TextDocument } from "vscode-languageserver-textdocument";

/**
 * The compiler counts offsets in UTF-16 code units, as JavaScript strings do, and so does LSP's default
 * position encoding: a position is found from an offset by the document itself, never by columns, so a line
 * with non-ASCII text before a name still maps exactly.
 */
export function toRange(doc: TextDocument, range: TextRange): Range {
  return { start: doc.positionAt(range.start), end: doc.positionAt(range.end) };
}

/** Warnings about code that has no effect: the editor shows it faded. */
const UNNECESSARY = new Set(["W401", "W402", "W602", "W605"]);

/**
 * A compiler diagnostic for the editor, with its code and severity. Its notes ("did you mean `amount`?") go
 * in related information when the client shows it, else on the message's next lines.
 */
export function toDiagnostic(doc: TextDocument, d: WritDiagnostic, relatedInformation: boolean): Diagnostic {
  const range = toRange(doc, { start: d.span.start.offset, end: d.span.end.offset });
  const notes = d.notes ?? [];
  return {
    range,
    severity: d.severity === "error" ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning,
    code: d.code,
    source: "writ",
    message: relatedInformation || notes.length === 0 ? d.message : [d.message, ...notes].join("\n"),
    ...(relatedInformation && notes.length > 0
      ? { relatedInformation: notes.map((message) => ({ location: { uri: doc.uri, range }, message })) }
      : {}),
    ...(UNNECESSARY.has(d.code) ? { tags: [DiagnosticTag.Unnecessary] } : {}),
  };
}
