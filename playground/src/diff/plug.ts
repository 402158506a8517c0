/**
 * The playground's diff panel runs `writ diff` (compiler `diffChecks`, in the browser): the policy being edited compared
 * with a baseline (the example as loaded, or the policy when "use as baseline" was pressed), each region of the signal
 * space where the verdict or the deciding rule changes listed with a witness signal set the user can try. This file
 * maps the compiler's answer to what diff/panel.ts renders.
 */
import { checkSource, diffChecks } from "@writ/compiler";

/** One region where the two versions answer differently, with one signal set in it. */
export interface DiffRegion {
  /** Signals valid for both versions on which they differ. */
  readonly witness: Readonly<Record<string, unknown>>;
  /** The decision instant they differ at, when either version reads `now`; empty otherwise. */
  readonly now: string;
  /** What each version decides for the witness: its verdict (`undecided` when none) and deciding rule (`otherwise` for the catch-all). */
  readonly before: DiffSide;
  readonly after: DiffSide;
}

export interface DiffSide {
  readonly verdict: string;
  readonly rule: string | null;
}

export type DiffResult =
  /**
   * No regions and nothing undecided: the two versions are equivalent, they decide alike on every signal set.
   * `undecided` names each pair of outcomes the diff could neither show different nor rule out, with why.
   */
  | { readonly kind: "compared"; readonly regions: readonly DiffRegion[]; readonly undecided: readonly string[] }
  /** The diff could not run, e.g. a version does not compile or their signals differ in a way the diff refuses. */
  | { readonly kind: "failed"; readonly message: string };

export type PolicyDiff = (before: string, after: string) => DiffResult;

export const policyDiff: PolicyDiff | null = (before, after) => {
  const [old, now] = [checkSource("baseline.writ", before, { until: "lower" }), checkSource("policy.writ", after, { until: "lower" })];
  const diff = diffChecks(old, now);
  if (diff === null)
    return {
      kind: "failed",
      message:
        old.ir === null
          ? "the baseline has errors: nothing to compare with"
          : "the policy has errors: fix them to compare it with the baseline",
    };
  return {
    kind: "compared",
    regions: diff.regions.map((r) => ({
      witness: r.witness.signals,
      now: r.witness.now ?? "",
      before: { verdict: r.old.verdict, rule: r.old.rule },
      after: { verdict: r.new.verdict, rule: r.new.rule },
    })),
    undecided: diff.undecided.map((u) => `${u.old.rule} → ${u.new.rule}: ${u.reasons.join("; ")}`),
  };
};
