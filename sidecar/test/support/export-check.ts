/**
 * An NDJSON audit export (docs/audit.md, "Export") checked as `writ audit verify` checks it: each line handed to
 * `verifier` in order. Also answers the executionIds of the decision records it holds as logged entries, for the tests
 * that hold a log to every decision they saw acknowledged.
 */
import type { ExportReport, ExportVerifier } from "@writ/runtime";

export interface CheckedExport {
  readonly report: ExportReport;
  readonly decisions: ReadonlySet<string>;
}

export function checkExport(ndjson: string, verifier: ExportVerifier): CheckedExport {
  const decisions = new Set<string>();
  for (const text of ndjson.split("\n")) {
    if (text === "") continue;
    const line = JSON.parse(text) as { type: string; kind?: string; record?: string };
    verifier.add(line);
    if (line.type === "entry" && line.kind === "decision" && line.record !== undefined)
      decisions.add((JSON.parse(line.record) as { executionId: string }).executionId);
  }
  return { report: verifier.finish(), decisions };
}
