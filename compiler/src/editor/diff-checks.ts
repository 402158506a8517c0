/**
 * `writ diff` for an editor: two policies as the editor checked them (`checkSource(..., { until: "lower" })`) compared
 * in memory, with the signals schemas a bundle of each would carry. Runs in a browser (the playground's diff panel).
 */
import { diffPolicies, type DiffOptions, type PolicyDiff } from "../diff/diff.js";
import type { SignalsSchema } from "../diff/signal-domain.js";
import { signalsSchema } from "../emit/signals-schema.js";
import type { SourceCheck } from "./check.js";

/** The diff of `before` and `after`; null when either has errors (no IR to compare). */
export function diffChecks(before: SourceCheck, after: SourceCheck, options: DiffOptions = {}): PolicyDiff | null {
  if (!before.ir || !before.ast || !after.ir || !after.ast) return null;
  // The document signals-schema.ts emits is the one a bundle carries, which `writ diff` reads as a SignalsSchema.
  const schema = (check: SourceCheck): SignalsSchema => signalsSchema(check.ast!) as unknown as SignalsSchema;
  return diffPolicies({ old: { ir: before.ir, schema: schema(before) }, new: { ir: after.ir, schema: schema(after) } }, options);
}
