import { DIAGNOSTICS, type DiagnosticCode, type Severity } from "./codes.js";
import type { LineIndex, Span } from "./source.js";

export interface Diagnostic {
  readonly code: DiagnosticCode;
  readonly severity: Severity;
  readonly message: string;
  readonly file: string;
  readonly span: Span;
  /** Extra lines shown under the excerpt, e.g. "did you mean `amount`?". */
  readonly notes?: readonly string[];
}

/** Collects diagnostics for one file; the phase driver sorts and de-duplicates them at the end. */
export class DiagnosticSink {
  private readonly items: Diagnostic[] = [];
  constructor(readonly file: string) {}

  report(code: DiagnosticCode, span: Span, message: string, notes?: readonly string[]): void {
    const d: Diagnostic = { code, severity: DIAGNOSTICS[code].severity, message, file: this.file, span };
    this.items.push(notes && notes.length > 0 ? { ...d, notes } : d);
  }

  get errorCount(): number {
    return this.items.filter((d) => d.severity === "error").length;
  }

  all(): Diagnostic[] {
    return sortDiagnostics(this.items);
  }
}

/** Sorted by file, position, code, message; exact duplicates (same code, place and message) kept once. */
export function sortDiagnostics(items: readonly Diagnostic[]): Diagnostic[] {
  const sorted = [...items].sort(
    (a, b) =>
      compare(a.file, b.file) || a.span.start.offset - b.span.start.offset || compare(a.code, b.code) || compare(a.message, b.message),
  );
  return sorted.filter(
    (d, i) =>
      i === 0 ||
      !(
        d.file === sorted[i - 1]!.file &&
        d.code === sorted[i - 1]!.code &&
        d.span.start.offset === sorted[i - 1]!.span.start.offset &&
        d.message === sorted[i - 1]!.message
      ),
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Renders one diagnostic the way compilers people know do:
 *
 *   error[E404]: unknown name `amont`
 *     --> policies/payments/policy.writ:12:18
 *      |
 *   12 | rule r when amont > 5 reject "x"
 *      |             ^^^^^
 *      = did you mean `amount`?
 */
export function renderDiagnostic(d: Diagnostic, lines: LineIndex): string {
  const { line, column } = d.span.start;
  const text = lines.lineText(line).replace(/\t/g, " ");
  const gutter = String(line).length;
  const pad = " ".repeat(gutter);
  const endOnLine = d.span.end.line === line ? d.span.end.column : text.length + 1;
  const width = Math.max(1, endOnLine - column);
  const out = [
    `${d.severity}[${d.code}]: ${d.message}`,
    `${pad}--> ${d.file}:${line}:${column}`,
    `${pad} |`,
    `${line} | ${text}`,
    `${pad} | ${" ".repeat(Math.max(0, column - 1))}${"^".repeat(width)}`,
  ];
  for (const note of d.notes ?? []) out.push(`${pad} = ${note}`);
  return out.join("\n");
}

/** One line per diagnostic, for tools and golden files: `file:line:col: severity[CODE]: message`. */
export function formatDiagnosticLine(d: Diagnostic): string {
  return `${d.file}:${d.span.start.line}:${d.span.start.column}: ${d.severity}[${d.code}]: ${d.message}`;
}
