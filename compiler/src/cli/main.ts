import { parseArgs, type ParseArgsConfig } from "node:util";
import { COMPILER } from "../version.js";
import { commandUsage, helpRequest } from "./command-help.js";
import { DEFAULT_PLAYGROUND_HOST, DEFAULT_PLAYGROUND_PORT, parsePort } from "./playground-options.js";
import { CliError, EXIT, type CliIo } from "./io.js";
import type { DiagnosticFormat } from "./report.js";

const USAGE = `writ ${COMPILER.version}: the writ policy compiler

usage: writ <command> [options] <path>...

commands (paths are .writ files or directories searched for them):
  compile <path>...   compile policies into bundles under --out/{policyId}/{version}/
      --out DIR         bundle root (default: policies)
      --sign-key FILE   sign each bundle with this Ed25519 PKCS8 PEM key (bundle.sig)
      --timings         print the time each of the eight phases took
      --force           overwrite a version already in --out with other content (a version is immutable)
  check <path>...     run every phase but emit; write nothing
      --format F        pretty (default), short (file:line:col: ...) or json (one object per line)
      --deny-warnings   fail when there are warnings
  fmt <path>...       rewrite policies in canonical form
      --check           change nothing; exit 1 when a file is not formatted
      --diff            change nothing; print the unified diff fmt would apply (git's form); exit 1 when there is one
  test <path>...      run the policy.test.json beside each policy and report rule coverage
      --require-coverage  fail when a rule is reached by no case
      --verbose         list passing cases too
      --format F        text (default), json (one document) or junit (JUnit XML, for CI test reports)
  eval <policy>       decide one request as a runtime would: <policy> is a .writ file or its directory (compiled
                      in memory), a bundle directory or a .bundle.json archive (verified)
      --signals FILE    the signals object as JSON; - reads standard input (required)
      --explain         every rule's condition, true, false or unknown, down to each comparison and its values
      --now TIMESTAMP   the decision instant \`now\` reads (RFC 3339, such as 2026-06-01T12:00:00Z); default
                        the current time; printed when the policy reads \`now\`
      --format F        text (default) or json
  diff <old> <new>    compare two versions of a policy exactly, each a .writ file or its directory, a bundle
                      directory or a .bundle.json archive: for every kind of request the two decide differently
                      (verdict, rule or reason), a witness request run on both; signals added, removed or
                      retyped first; exit 0 equivalent, 1 different, 6 no difference found but some regions
                      undecided (docs/compiler.md)
      --format F        text (default) or json
  keygen              create an Ed25519 signing key pair
      --out PREFIX      write PREFIX.key (mode 0600) and PREFIX.pub (default: writ-signing)
      --force           replace existing files
  verify <path>       check a bundle directory, attestation or execution proof offline
      --key FILE        a pinned Ed25519 public key (SPKI PEM); repeatable
      --trust-root FILE a trust root document instead of --key
      --accept-runtime HASH  accept attestations of this runtimeHash (default: this runtime's own and the trust root's); repeatable
  bundle pack <bundle-dir>...  verify bundle directories and write each as {policyId}@{version}.bundle.json
      --out DIR         where the archives go (default: .)
      --key FILE        require a bundle.sig by this pinned Ed25519 public key (SPKI PEM); repeatable
      --force           overwrite an archive of the same version with another bundle_hash
  bundle inspect <archive>  verify an archive and print its policy, bundle_hash, signer and files
      --key FILE        require a bundle.sig by this pinned key; repeatable
      --json            one JSON object instead of text
  bundle index <dir>  publish a bundle source: verify every *.bundle.json in <dir>, write <dir>/index.json signed
      --sign-key FILE   the Ed25519 PKCS8 PEM key that signs the index (required)
      --alias P@A=V     alias A of policy P names version V; P@A= removes it; repeatable (others are kept)
      --expires-in D    readers refuse the index after D (e.g. 30d, 12h, 90m)
      --serial N        the serial to publish (default: the current index's + 1, or 1)
      --key FILE        require a bundle.sig by this pinned key on every archive; repeatable
      --force           publish a version whose bundle_hash differs from the current index's
  typegen <path>...   TypeScript types of each policy version's signals, for the SDK (docs/sdk.md "Typed signals");
                      paths are policies roots, policy or bundle directories, .writ files or .bundle.json archives
      --out FILE        the declarations file to write; - writes them to standard output
  audit verify <export>  check a sidecar's audit log export (GET /audit/export; - reads standard input) offline:
                        every record, checkpoint, the chain and each decision's attestation signature
      --proof FILE      check one inclusion or consistency proof (GET /audit/proofs/...) instead of an export
      --key FILE        a pinned Ed25519 public key (SPKI PEM): the sidecar's signing key; repeatable
      --trust-root FILE a trust root document instead of --key
  playground          serve the playground: a policy and signals edited side by side in the browser, with live
                      diagnostics, the decision and its explanation (docs/playground.md); Ctrl-C stops it
      --port N          the port to listen on (default: ${DEFAULT_PLAYGROUND_PORT}; 0 picks a free one)
      --host H          the address to listen on (default: ${DEFAULT_PLAYGROUND_HOST}, this machine only)
      --open            open the page in the default browser
  conformance         run the conformance suite against a running server over HTTP (docs/conformance.md)
      --surface a|b     a: the governance server (spec 4.1); b: the business-transaction API (spec 4.2)
      --base-url URL    where that surface listens, e.g. http://127.0.0.1:8080
      --api-key KEY     the server's Bearer key
      --public-key FILE the server's Ed25519 public key (SPKI PEM); without it signature cases are skipped
      --report FILE     the JSON report (default: conformance-report-<surface>.json)
      --only PREFIX     run only the cases whose id starts with PREFIX
  help [<command>]    this text, or one command's (as \`writ <command> --help\`)

exit codes: 0 ok, 1 not formatted (fmt --check, --diff), signals refused (eval), versions differ (diff) or a conformance case
            failed, 2 bad arguments, 3 compile failed or a version exists with another bundle_hash (or typegen: one version with
            two schemas), 4 tests failed, 5 not verified (verify, bundle, audit verify, eval, diff, typegen), 6 diff could not
            decide some regions and found no difference`;

type Options = NonNullable<ParseArgsConfig["options"]>;

function args(argv: readonly string[], options: Options, command: string) {
  try {
    return parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (e) {
    const message =
      e instanceof Error ? e.message.split("\n")[0]!.replace(/^Unknown option '([^']*)'.*$/, "unknown option `$1`") : String(e);
    throw new CliError(`${command}: ${message.charAt(0).toLowerCase()}${message.slice(1).replace(/\.$/, "")} (see \`writ help\`)`);
  }
}

function noPositionals(positionals: readonly string[], command: string): void {
  if (positionals.length > 0) throw new CliError(`${command} takes no paths, given \`${positionals[0]}\``);
}

/** `writ bundle pack|inspect|index ...`: one-file archives and the signed index of a bundle source (docs/bundles.md). */
async function runBundle(argv: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  const command = `bundle ${sub ?? ""}`.trim();
  const keys = { key: { type: "string", multiple: true } } as const;
  switch (sub) {
    case "pack": {
      const { values, positionals } = args(rest, { ...keys, out: { type: "string" }, force: { type: "boolean" } }, command);
      const keyPaths = (values.key as string[] | undefined) ?? [];
      const { runBundlePack } = await import("./commands/bundle-pack.js");
      return runBundlePack({
        io,
        dirs: positionals,
        outDir: (values.out as string | undefined) ?? ".",
        keyPaths,
        force: values.force === true,
      });
    }
    case "inspect": {
      const { values, positionals } = args(rest, { ...keys, json: { type: "boolean" } }, command);
      if (positionals.length !== 1) throw new CliError("bundle inspect takes exactly one archive (`{policyId}@{version}.bundle.json`)");
      const { runBundleInspect } = await import("./commands/bundle-inspect.js");
      return runBundleInspect({
        io,
        path: positionals[0]!,
        keyPaths: (values.key as string[] | undefined) ?? [],
        json: values.json === true,
      });
    }
    case "index": {
      const { values, positionals } = args(
        rest,
        {
          ...keys,
          "sign-key": { type: "string" },
          alias: { type: "string", multiple: true },
          "expires-in": { type: "string" },
          serial: { type: "string" },
          force: { type: "boolean" },
        },
        command,
      );
      if (positionals.length !== 1) throw new CliError("bundle index takes exactly one directory: the one the archives are served from");
      const signKeyPath = values["sign-key"] as string | undefined;
      if (signKeyPath === undefined) throw new CliError("bundle index needs --sign-key FILE: the key readers pin to trust the index");
      const { runBundleIndex } = await import("./commands/bundle-index.js");
      return runBundleIndex({
        io,
        dir: positionals[0]!,
        signKeyPath,
        aliases: (values.alias as string[] | undefined) ?? [],
        expiresIn: (values["expires-in"] as string | undefined) ?? null,
        serial: (values.serial as string | undefined) ?? null,
        keyPaths: (values.key as string[] | undefined) ?? [],
        force: values.force === true,
      });
    }
    default:
      throw new CliError(
        sub === undefined ? "bundle needs a subcommand: pack, inspect or index" : `unknown command \`bundle ${sub}\` (see \`writ help\`)`,
      );
  }
}

/**
 * Runs one `writ` invocation and returns its exit code; user errors are one line on stderr. Each command's module is
 * imported when that command runs, after its arguments are checked: help, --version and usage errors load none of
 * them (chevrotain, refa, ajv, ... cost most of a second).
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    const helpTopic = helpRequest(argv) ?? (command === "help" && rest.length > 0 ? rest.join(" ") : null);
    if (helpTopic !== null) {
      const help = commandUsage(USAGE, helpTopic);
      if (help === null) throw new CliError(`unknown command \`${helpTopic}\` (see \`writ help\`)`);
      io.out(help);
      return EXIT.ok;
    }
    switch (command) {
      case "compile": {
        const { values, positionals } = args(
          rest,
          { out: { type: "string" }, "sign-key": { type: "string" }, timings: { type: "boolean" }, force: { type: "boolean" } },
          command,
        );
        const { runCompile } = await import("./commands/compile.js");
        return await runCompile({
          io,
          paths: positionals,
          format: "pretty",
          denyWarnings: false,
          outRoot: (values.out as string | undefined) ?? "policies",
          signKeyPath: (values["sign-key"] as string | undefined) ?? null,
          timings: values.timings === true,
          force: values.force === true,
        });
      }
      case "check": {
        const { values, positionals } = args(rest, { format: { type: "string" }, "deny-warnings": { type: "boolean" } }, command);
        const format = (values.format as string | undefined) ?? "pretty";
        if (!["pretty", "short", "json"].includes(format))
          throw new CliError(`check: --format must be pretty, short or json, given \`${format}\``);
        const { runCompile } = await import("./commands/compile.js");
        return await runCompile({
          io,
          paths: positionals,
          format: format as DiagnosticFormat,
          denyWarnings: values["deny-warnings"] === true,
          outRoot: null,
          signKeyPath: null,
          timings: false,
          force: false,
        });
      }
      case "fmt": {
        const { values, positionals } = args(rest, { check: { type: "boolean" }, diff: { type: "boolean" } }, command);
        const { runFmt } = await import("./commands/fmt.js");
        return await runFmt(io, positionals, values.diff === true ? "diff" : values.check === true ? "check" : "write");
      }
      case "test": {
        const { values, positionals } = args(
          rest,
          { "require-coverage": { type: "boolean" }, verbose: { type: "boolean" }, format: { type: "string" } },
          command,
        );
        const format = (values.format as string | undefined) ?? "text";
        if (format !== "text" && format !== "json" && format !== "junit")
          throw new CliError(`test: --format must be text, json or junit, given \`${format}\``);
        const { runTest } = await import("./commands/test.js");
        return await runTest({
          io,
          paths: positionals,
          requireCoverage: values["require-coverage"] === true,
          verbose: values.verbose === true,
          format,
        });
      }
      case "eval": {
        const { values, positionals } = args(
          rest,
          { signals: { type: "string" }, explain: { type: "boolean" }, now: { type: "string" }, format: { type: "string" } },
          command,
        );
        if (positionals.length !== 1)
          throw new CliError("eval takes exactly one policy: a .writ file or its directory, a bundle directory or a .bundle.json archive");
        const signalsPath = values.signals as string | undefined;
        if (signalsPath === undefined)
          throw new CliError("eval needs --signals FILE (or --signals - for standard input): the signals object to decide");
        const format = (values.format as string | undefined) ?? "text";
        if (format !== "text" && format !== "json") throw new CliError(`eval: --format must be text or json, given \`${format}\``);
        const now = values.now as string | undefined;
        const { runEval } = await import("./commands/eval.js");
        return await runEval({
          io,
          policyPath: positionals[0]!,
          signalsPath,
          explain: values.explain === true,
          format,
          ...(now === undefined ? {} : { now }),
        });
      }
      case "diff": {
        const { values, positionals } = args(rest, { format: { type: "string" } }, command);
        if (positionals.length !== 2) {
          throw new CliError(
            "diff takes exactly two policies, the old version then the new: each a .writ file or its directory, a bundle directory or a .bundle.json archive",
          );
        }
        const format = (values.format as string | undefined) ?? "text";
        if (format !== "text" && format !== "json") throw new CliError(`diff: --format must be text or json, given \`${format}\``);
        const { runDiff } = await import("./commands/diff.js");
        return await runDiff({ io, oldPath: positionals[0]!, newPath: positionals[1]!, format });
      }
      case "keygen": {
        const { values, positionals } = args(rest, { out: { type: "string" }, force: { type: "boolean" } }, command);
        noPositionals(positionals, command);
        const { runKeygen } = await import("./commands/keygen.js");
        return await runKeygen(io, (values.out as string | undefined) ?? "writ-signing", values.force === true);
      }
      case "verify": {
        const { values, positionals } = args(
          rest,
          {
            key: { type: "string", multiple: true },
            "trust-root": { type: "string" },
            "accept-runtime": { type: "string", multiple: true },
          },
          command,
        );
        if (positionals.length !== 1) throw new CliError("verify takes exactly one path: a bundle directory, an attestation or a proof");
        const { runVerify } = await import("./commands/verify.js");
        return await runVerify({
          io,
          path: positionals[0]!,
          keyPaths: (values.key as string[] | undefined) ?? [],
          trustRootPath: (values["trust-root"] as string | undefined) ?? null,
          acceptRuntimes: (values["accept-runtime"] as string[] | undefined) ?? [],
        });
      }
      case "typegen": {
        const { values, positionals } = args(rest, { out: { type: "string" } }, command);
        const { runTypegen } = await import("./commands/typegen.js");
        return await runTypegen({ io, paths: positionals, out: (values.out as string | undefined) ?? null });
      }
      case "bundle":
        return await runBundle(rest, io);
      case "audit": {
        const [sub, ...audit] = rest;
        if (sub !== "verify")
          throw new CliError(
            sub === undefined ? "audit needs a subcommand: verify" : `unknown command \`audit ${sub}\` (see \`writ help\`)`,
          );
        const { values, positionals } = args(
          audit,
          { key: { type: "string", multiple: true }, "trust-root": { type: "string" }, proof: { type: "string" } },
          "audit verify",
        );
        if (positionals.length > 1) throw new CliError("audit verify takes one export (a path, or - for standard input)");
        const { runAuditVerify } = await import("./commands/audit-verify.js");
        return await runAuditVerify({
          io,
          exportPath: positionals[0] ?? null,
          proofPath: (values.proof as string | undefined) ?? null,
          keyPaths: (values.key as string[] | undefined) ?? [],
          trustRootPath: (values["trust-root"] as string | undefined) ?? null,
        });
      }
      case "playground": {
        const { values, positionals } = args(
          rest,
          { port: { type: "string" }, host: { type: "string" }, open: { type: "boolean" } },
          command,
        );
        noPositionals(positionals, command);
        const host = (values.host as string | undefined) ?? DEFAULT_PLAYGROUND_HOST;
        const port = parsePort(values.port as string | undefined);
        const { runPlayground } = await import("./commands/playground.js");
        return await runPlayground({ io, port, host, open: values.open === true });
      }
      case "conformance": {
        const { runConformance } = await import("./commands/conformance.js");
        return await runConformance(rest, io);
      }
      case "help":
      case "--help":
      case "-h":
        io.out(USAGE);
        return EXIT.ok;
      case "--version":
      case "-V":
      case "-v":
        io.out(COMPILER.version);
        return EXIT.ok;
      case undefined:
        io.err(USAGE);
        return EXIT.badArguments;
      default:
        throw new CliError(`unknown command \`${command}\` (see \`writ help\`)`);
    }
  } catch (e) {
    if (e instanceof CliError) {
      io.err(`writ: ${e.message}`);
      return e.exitCode;
    }
    const code = (e as { code?: unknown } | null)?.code;
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) {
      // A file-system failure (EACCES, ENOSPC, ...) is the user's to fix: say which, without a trace.
      io.err(`writ: ${(e as Error).message}`);
      return EXIT.badArguments;
    }
    io.err(`writ: internal error: ${e instanceof Error ? e.message : String(e)} (please report this with the policy that caused it)`);
    return EXIT.internal;
  }
}
