/**
 * The report as a terminal reads it: one row per spec section (pass, fail, skip), the totals, then every failing
 * case with its messages, and the verdict on the last line.
 */
import type { ConformanceReport } from "./report.js";

function row(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
    .join("  ")
    .trimEnd();
}

/** A failure whose answer was a 429 where the case expected something else: the status line `check-answer` writes. */
const UNEXPECTED_429 = /^status: expected .*, got 429 /;

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

export function formatTable(report: ConformanceReport): string {
  const lines: string[] = [];
  const n = report.cases.length;
  lines.push(
    `writ conformance: Surface ${report.surface.toUpperCase()} at ${report.target} (${n} case${n === 1 ? "" : "s"}, ${seconds(report.durationMs)})`,
  );
  lines.push(
    report.publicKeyId === null
      ? "signatures: not checked (no --public-key); those cases are skipped"
      : `signatures: checked against key ${report.publicKeyId}`,
  );
  lines.push("");
  const header = ["section", "pass", "fail", "skip"];
  const body = report.sections.map((t) => [t.section, String(t.pass), String(t.fail), String(t.skip)]);
  const total = ["total", String(report.totals.pass), String(report.totals.fail), String(report.totals.skip)];
  const widths = header.map((h, i) => Math.max(h.length, ...[...body, total].map((r) => r[i]!.length)));
  lines.push(row(header, widths));
  for (const r of body) lines.push(row(r, widths));
  lines.push(row(total, widths));

  const failed = report.cases.filter((c) => c.outcome === "fail");
  if (failed.length > 0) {
    lines.push("", "failed:");
    for (const c of failed) {
      lines.push(`  ${c.id} (section ${c.section}): ${c.title}`);
      for (const f of c.failures) lines.push(`    step ${f.step}: ${f.message}`);
    }
    // The usual cause is not the server under test but an earlier run against it: the POST /execute budget
    // (100 a minute, spec 8) is per server, and a Surface A run ends by spending it.
    const limited = failed.filter((c) => c.failures.some((f) => UNEXPECTED_429.test(f.message))).length;
    if (limited > 0) {
      lines.push(
        "",
        `note: ${limited} failing case${limited === 1 ? " was" : "s were"} answered 429 (rate limited): if an earlier run spent this minute's POST /execute budget, wait 60 s or restart the server and run again`,
      );
    }
  }
  lines.push("");
  lines.push(
    report.passed
      ? `PASS: ${report.totals.pass} passed${report.totals.skip > 0 ? `, ${report.totals.skip} skipped` : ""}`
      : `FAIL: ${report.totals.fail} of ${n} case${n === 1 ? "" : "s"} failed`,
  );
  return lines.join("\n");
}
