/**
 * The command line of the suite, shared by `writ-conformance` and `writ conformance`: parse the options, run, print
 * the per-section table, write the JSON report. Exit codes: 0 every case passed, 1 a case failed, 2 bad arguments
 * or a run that cannot start (unreachable server, unusable key, malformed case file).
 */
import { readFile, writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import pkg from "../package.json";
import type { Surface } from "./case-file.js";
import { ConformanceSetupError, runConformance } from "./runner.js";
import { formatTable } from "./table.js";

export interface CliIo {
  readonly cwd: string;
  out(line: string): void;
  err(line: string): void;
}

export const EXIT = { passed: 0, failed: 1, badArguments: 2, internal: 70 } as const;

export function usage(program: string): string {
  return `usage: ${program} --surface a|b --base-url URL --api-key KEY [options]

Runs the writ conformance suite against a running server, over HTTP only (docs/conformance.md).

  --surface a|b       a: the governance server (spec 4.1); b: the business-transaction API (spec 4.2)
  --base-url URL      where that surface listens, e.g. http://127.0.0.1:8080
  --api-key KEY       the server's Bearer key (spec 5)
  --public-key FILE   the server's Ed25519 public key (SPKI PEM): signatures are checked by the suite;
                      without it the cases that check signatures are skipped
  --report FILE       the JSON report (default: conformance-report-<surface>.json)
  --only PREFIX       run only the cases whose id starts with PREFIX (e.g. a.evaluate.)
  --help, -h          this text
  --version, -V       the suite's version

The server must serve the suite's fixture policies (conformance/fixtures/policies), compiled by writ.
exit codes: 0 every case passed, 1 a case failed, 2 bad arguments or the run could not start`;
}

class UsageError extends Error {}

function parse(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      options: {
        surface: { type: "string" },
        "base-url": { type: "string" },
        "api-key": { type: "string" },
        "public-key": { type: "string" },
        report: { type: "string" },
        only: { type: "string" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "V" },
      },
      allowPositionals: false,
      strict: true,
    }).values;
  } catch (e) {
    const message = (e as Error).message
      .split("\n")[0]!
      .replace(/^Unknown option '([^']*)'.*$/, "unknown option `$1`")
      .replace(/\.$/, "");
    throw new UsageError(message.charAt(0).toLowerCase() + message.slice(1));
  }
}

/** One run of the command; returns the exit code. Never throws for a user error. */
export async function runConformanceCli(argv: readonly string[], io: CliIo, program = "writ-conformance"): Promise<number> {
  const fail = (message: string): number => {
    io.err(`${program}: ${message}`);
    return EXIT.badArguments;
  };
  let values: ReturnType<typeof parse>;
  try {
    values = parse(argv);
  } catch (e) {
    return fail(`${(e as Error).message} (see \`${program} --help\`)`);
  }
  if (values.help === true) {
    io.out(usage(program));
    return EXIT.passed;
  }
  if (values.version === true) {
    io.out(pkg.version);
    return EXIT.passed;
  }
  const surface = values.surface;
  if (surface === undefined) return fail("--surface is required: `a` or `b`");
  if (surface !== "a" && surface !== "b") return fail(`--surface must be \`a\` or \`b\`, not \`${surface}\``);
  const baseUrl = values["base-url"];
  if (baseUrl === undefined) return fail("--base-url is required, e.g. http://127.0.0.1:8080");
  const apiKey = values["api-key"];
  if (apiKey === undefined || apiKey === "") return fail("--api-key is required: the server's Bearer key");
  let publicKeyPem: string | undefined;
  if (values["public-key"] !== undefined) {
    try {
      publicKeyPem = await readFile(resolve(io.cwd, values["public-key"]), "utf8");
    } catch (e) {
      return fail(`cannot read the public key \`${values["public-key"]}\`: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  }
  const reportPath = resolve(io.cwd, values.report ?? `conformance-report-${surface}.json`);

  try {
    const report = await runConformance({
      surface: surface as Surface,
      baseUrl,
      apiKey,
      ...(publicKeyPem === undefined ? {} : { publicKeyPem }),
      ...(values.only === undefined ? {} : { filter: values.only }),
    });
    io.out(formatTable(report));
    await writeFile(reportPath, `${JSON.stringify(report, null, 2)}\n`);
    io.out(`report: ${reportPath}`);
    return report.passed ? EXIT.passed : EXIT.failed;
  } catch (e) {
    if (e instanceof ConformanceSetupError) return fail(e.message);
    const code = (e as NodeJS.ErrnoException | null)?.code;
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return fail((e as Error).message);
    io.err(`${program}: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    return EXIT.internal;
  }
}
