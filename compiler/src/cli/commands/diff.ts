import { diffPolicies, type PolicyDiff } from "../../diff/diff.js";
import type { SignalsSchema } from "../../diff/signal-domain.js";
import { diffLines } from "../diff-text.js";
import { EXIT, type CliIo } from "../io.js";
import { readPolicyTarget, targetAbout, targetHeading, type PolicyTarget } from "../policy-target.js";

export interface DiffRun {
  readonly io: CliIo;
  /** Each a policy source (`.writ` file or its directory), a bundle directory or a `.bundle.json` archive. */
  readonly oldPath: string;
  readonly newPath: string;
  readonly format: "text" | "json";
}

/**
 * `writ diff`: compares two versions of a policy exactly (docs/compiler.md "writ diff"). Exit 0 when they are
 * equivalent, 1 when they differ, 6 when no difference was found but some region could not be decided; 3 when a
 * side does not compile, 5 when a bundle does not verify.
 */
export async function runDiff(run: DiffRun): Promise<number> {
  const { io } = run;
  const old = await readPolicyTarget(io, run.oldPath);
  const next = await readPolicyTarget(io, run.newPath);
  const diff = diffPolicies({ old: versionOf(old), new: versionOf(next) });
  if (run.format === "json") io.out(JSON.stringify({ old: targetAbout(old), new: targetAbout(next), ...diff }));
  else for (const line of [`old: ${targetHeading(old)}`, `new: ${targetHeading(next)}`, ...diffLines(diff)]) io.out(line);
  return exitCode(diff);
}

function versionOf(t: PolicyTarget) {
  return { ir: t.ir, schema: t.schema as SignalsSchema };
}

function exitCode(diff: PolicyDiff): number {
  return diff.result === "equivalent" ? EXIT.ok : diff.result === "different" ? EXIT.different : EXIT.undecided;
}
