import { mkdir } from "node:fs/promises";
import { dirname, relative, resolve } from "node:path";
import { signalDeclarations } from "../../typegen/declarations.js";
import { UnsupportedSchemaError } from "../../typegen/describe.js";
import { readInputs, type InputFailure } from "../../typegen/inputs.js";
import { CliError, EXIT, type CliIo } from "../io.js";
import { plural, reportDiagnostics } from "../report.js";
import { writeAtomically } from "../sources.js";

export interface TypegenRun {
  readonly io: CliIo;
  readonly paths: readonly string[];
  /** `--out`: the file to write, `-` for standard output; null when not given. */
  readonly out: string | null;
}

/**
 * `writ typegen`: TypeScript declarations of every policy version's signals, from the schemas the runtime validates
 * with, and the `WritPolicies` map the SDK's clients take (docs/sdk.md "Typed signals"). All or nothing: when any
 * input fails (a source does not compile, a bundle does not verify, two inputs hold one version with different
 * schemas) nothing is written; exit 5 when a bundle did not verify, else 3.
 */
export async function runTypegen(run: TypegenRun): Promise<number> {
  const { io } = run;
  if (run.out === null) throw new CliError("typegen needs --out FILE, or --out - for standard output");
  const { found, failures } = await readInputs(io.cwd, run.paths);
  for (const failure of failures) report(io, failure);
  if (failures.length > 0) {
    io.err(`typegen: ${plural(failures.length, "input")} failed; nothing written`);
    return failures.some((f) => f.kind === "bundle") ? EXIT.notVerified : EXIT.compileFailed;
  }
  let text: string;
  try {
    text = await signalDeclarations(found);
  } catch (e) {
    if (e instanceof UnsupportedSchemaError) throw new CliError(`typegen: ${e.message}; nothing written`, EXIT.compileFailed);
    throw e;
  }
  if (run.out === "-") {
    io.out(text.slice(0, -1));
    return EXIT.ok;
  }
  const target = resolve(io.cwd, run.out);
  await mkdir(dirname(target), { recursive: true });
  await writeAtomically(target, text);
  const ids = new Set(found.map((f) => f.policyId));
  io.out(
    `${relative(io.cwd, target)}: signals types of ${plural(found.length, "policy version")} (${plural(ids.size, "policy", "policies")})`,
  );
  return EXIT.ok;
}

function report(io: CliIo, failure: InputFailure): void {
  switch (failure.kind) {
    case "compile":
      reportDiagnostics(io, failure.file, failure.result, "pretty");
      io.err(`${failure.file.display}: failed with ${plural(failure.result.errors.length, "error")}`);
      return;
    case "bundle":
      io.err(`${failure.origin}: NOT verified: ${failure.message}`);
      return;
    case "conflict":
      io.err(`typegen: ${failure.message}`);
      return;
  }
}
