import type * as Suite from "@writ/conformance";
import { CliError, type CliIo } from "../io.js";

/**
 * `writ conformance ...`: the conformance suite (`@writ/conformance`) behind the one `writ` binary. Its options, output
 * and exit codes are the suite's own (0 every case passed, 1 a case failed, 2 bad arguments or the run could not
 * start). Loaded on use: policy authors who never run it do not load undici and ajv.
 */
export async function runConformance(argv: readonly string[], io: CliIo): Promise<number> {
  let suite: typeof Suite;
  try {
    suite = await import("@writ/conformance");
  } catch (e) {
    throw new CliError(
      `conformance: the suite (@writ/conformance) cannot be loaded: ${e instanceof Error ? e.message.split("\n")[0]! : String(e)}`,
    );
  }
  return suite.runConformanceCli(argv, io, "writ conformance");
}
