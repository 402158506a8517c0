/**
 * What a caller may learn about one decision besides its answer: the phases it went through, with monotonic instants,
 * and which policy version and rule decided. The caller passes an empty report and reads it afterwards, whether the
 * call succeeded or not; the runtime only writes data into it, so it needs no tracing or metrics library (the sidecar
 * turns reports into spans and metrics: docs/sidecar.md, "Observability"). Without a report nothing is timed.
 */
import type { Verdict } from "./ir/types.js";

/**
 * The phases the runtime times. `bundle`: the policy bundle is found (loaded on its first use); `validate`: the signals
 * are checked against the policy's schema (for an override, the pending decision's lineage); `evaluate`: the rules
 * decide (for a confirmation, the executed action is matched); `sign`: the attestation (override record, proof) is
 * signed; `verify`: the attestation is verified (after signing: the self-verification); `write`: the durable write.
 */
export type DecisionPhase = "bundle" | "validate" | "evaluate" | "sign" | "verify" | "write";

export interface PhaseTiming {
  /** A DecisionPhase, or a phase the caller timed itself. */
  readonly phase: string;
  /** `performance.now()` at its start and at its end, in ms. */
  readonly start: number;
  readonly end: number;
}

/** The policy version and rule that decided: the bundle's own ids, never the request's. */
export interface Decided {
  readonly policyId: string;
  readonly policyVersion: string;
  readonly verdict: Verdict;
  readonly ruleId: string;
}

export interface DecisionReport {
  /** The phases timed so far, in the order they ended. */
  readonly phases: PhaseTiming[];
  /** Set once a signed decision was made (evaluate, execute): its answer may still fail (a replay, a failed write). */
  decided?: Decided;
}

/** The instant a phase starts: `performance.now()`, or 0 when there is no report (nothing is timed). */
export function phaseStart(report: DecisionReport | undefined): number {
  return report === undefined ? 0 : performance.now();
}

/** Records `phase` from `start` until now in `report`; returns now, the start of the next phase (0 without a report). */
export function endPhase(report: DecisionReport | undefined, phase: DecisionPhase, start: number): number {
  if (report === undefined) return 0;
  const end = performance.now();
  report.phases.push({ phase, start, end });
  return end;
}

/** `running`, with `phase` recorded in `report` when it settles (from `start`); `running` itself without a report. */
export function timedPhase<T>(report: DecisionReport | undefined, phase: DecisionPhase, start: number, running: Promise<T>): Promise<T> {
  if (report === undefined) return running;
  return running.finally(() => endPhase(report, phase, start));
}
