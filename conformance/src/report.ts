/** The JSON report of one run (docs/conformance.md, "Report"): what ran against what, and every failure in words. */
import type { Surface } from "./case-file.js";

export type Outcome = "pass" | "fail" | "skip";

export interface Failure {
  /** Index of the step in the case (from 0). */
  readonly step: number;
  /** What went wrong, e.g. `status: expected 404, got 400`. */
  readonly message: string;
}

export interface CaseResult {
  readonly id: string;
  readonly section: string;
  readonly title: string;
  readonly file: string;
  readonly outcome: Outcome;
  readonly durationMs: number;
  readonly failures: readonly Failure[];
  /** Why a skipped case did not run. */
  readonly skipReason?: string;
}

export interface Totals {
  readonly pass: number;
  readonly fail: number;
  readonly skip: number;
}

export interface SectionTotals extends Totals {
  /** The spec section, e.g. "2.9". */
  readonly section: string;
}

export interface ConformanceReport {
  readonly suite: "writ-conformance";
  readonly suiteVersion: string;
  /** The base URL the cases ran against. */
  readonly target: string;
  readonly surface: Surface;
  readonly startedAt: string;
  readonly durationMs: number;
  /** keyId of the pinned public key (docs/signing.md), or null when signature cases were skipped. */
  readonly publicKeyId: string | null;
  readonly cases: readonly CaseResult[];
  /** Per spec section, in document order ("2.9" before "2.10" before "3"). */
  readonly sections: readonly SectionTotals[];
  readonly totals: Totals;
  /** No case failed (skipped cases do not fail a run). */
  readonly passed: boolean;
}

/** Spec section numbers in document order ("2.11" after "2.9"). */
export function compareSections(a: string, b: string): number {
  const x = a.split(".").map(Number);
  const y = b.split(".").map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? -1) - (y[i] ?? -1);
    if (d !== 0) return d;
  }
  return 0;
}

function count(results: readonly CaseResult[]): Totals {
  return {
    pass: results.filter((r) => r.outcome === "pass").length,
    fail: results.filter((r) => r.outcome === "fail").length,
    skip: results.filter((r) => r.outcome === "skip").length,
  };
}

export function buildReport(run: {
  readonly suiteVersion: string;
  readonly target: string;
  readonly surface: Surface;
  readonly startedAt: Date;
  readonly durationMs: number;
  readonly publicKeyId: string | null;
  readonly cases: readonly CaseResult[];
}): ConformanceReport {
  const sections = [...new Set(run.cases.map((c) => c.section))]
    .sort(compareSections)
    .map((section) => ({ section, ...count(run.cases.filter((c) => c.section === section)) }));
  const totals = count(run.cases);
  return {
    suite: "writ-conformance",
    suiteVersion: run.suiteVersion,
    target: run.target,
    surface: run.surface,
    startedAt: run.startedAt.toISOString(),
    durationMs: run.durationMs,
    publicKeyId: run.publicKeyId,
    cases: run.cases,
    sections,
    totals,
    passed: totals.fail === 0,
  };
}
