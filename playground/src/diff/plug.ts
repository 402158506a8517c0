/**
 * WHERE `writ diff` PLUGS IN (issue 17, item 2). The playground's diff panel compares the policy being edited with a
 * baseline (the example as loaded, or the policy when "use as baseline" was pressed) and lists each region of the
 * signal space where the verdict or the deciding rule changes, with a witness signal set the user can try. It stays
 * hidden while `policyDiff` is null.
 *
 * To plug it in: import the compiler's semantic diff from `@writ/compiler` (it must be exported from
 * compiler/src/portable.ts, so it runs in the browser) and set `policyDiff` to a function that runs it on the two
 * sources and maps its result to `DiffResult` below. Nothing else in the playground changes; diff/panel.ts renders it.
 */

/** One region where the two versions answer differently, with one signal set in it. */
export interface DiffRegion {
  /** Signals valid for both versions on which they differ. */
  readonly witness: Readonly<Record<string, unknown>>;
  /** What each version decides for the witness: its verdict (`undecided` when none) and deciding rule (`otherwise` for the catch-all). */
  readonly before: DiffSide;
  readonly after: DiffSide;
}

export interface DiffSide {
  readonly verdict: string;
  readonly rule: string | null;
}

export type DiffResult =
  /** No regions: the two versions are equivalent, they decide alike on every signal set. */
  | { readonly kind: "compared"; readonly regions: readonly DiffRegion[] }
  /** The diff could not run, e.g. a version does not compile or their signals differ in a way the diff refuses. */
  | { readonly kind: "failed"; readonly message: string };

export type PolicyDiff = (before: string, after: string) => DiffResult;

export const policyDiff: PolicyDiff | null = null;
