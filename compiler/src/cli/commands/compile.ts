import { readFile, rm, mkdir } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { SIGNATURE_FILE, loadSigningKeyPem, type SigningKey } from "@writ/runtime";
import { compile, type CompileResult } from "../../compile.js";
import { CliError, EXIT, type CliIo } from "../io.js";
import { plural, reportDiagnostics, type DiagnosticFormat } from "../report.js";
import { collectSources, writeAtomically, type SourceFile } from "../sources.js";

export interface CompileRun {
  readonly io: CliIo;
  readonly paths: readonly string[];
  readonly format: DiagnosticFormat;
  readonly denyWarnings: boolean;
  /** Where bundles go; null for `writ check`, which writes nothing. */
  readonly outRoot: string | null;
  readonly signKeyPath: string | null;
  readonly timings: boolean;
}

/** `writ compile` and `writ check`: the same eight phases, with or without writing bundles. */
export async function runCompile(run: CompileRun): Promise<number> {
  const { io } = run;
  const sources = await collectSources(io.cwd, run.paths);
  const signingKey = run.signKeyPath ? await readSigningKey(io.cwd, run.signKeyPath) : undefined;
  let failed = 0;
  let warnings = 0;
  for (const file of sources) {
    const result = compile(file.display, file.text, {
      ...(signingKey ? { signingKey } : {}),
      ...(run.outRoot === null ? { until: "lower" as const } : {}),
    });
    reportDiagnostics(io, file, result, run.format);
    warnings += result.warnings.length;
    const ok = result.valid && !(run.denyWarnings && result.warnings.length > 0);
    if (!ok) {
      failed++;
      if (run.format !== "json") io.err(`${file.display}: ${result.valid ? "warnings denied" : `failed with ${plural(result.errors.length, "error")}`}`);
      continue;
    }
    if (run.outRoot !== null) await writeBundle(io, file, result, resolve(io.cwd, run.outRoot), signingKey);
    else if (run.format !== "json") io.out(`${file.display}: ok${result.warnings.length ? ` (${plural(result.warnings.length, "warning")})` : ""}`);
    if (run.timings) io.out(`  phases: ${result.timings.map((t) => `${t.phase} ${t.ms.toFixed(1)}ms`).join(", ")}`);
  }
  if (run.format !== "json") {
    const verb = run.outRoot === null ? "checked" : "compiled";
    io.err(`${verb} ${plural(sources.length, "policy", "policies")}: ${sources.length - failed} ok, ${failed} failed, ${plural(warnings, "warning")}`);
  }
  return failed > 0 ? EXIT.compileFailed : EXIT.ok;
}

async function readSigningKey(cwd: string, path: string): Promise<SigningKey> {
  let pem: string;
  try {
    pem = await readFile(resolve(cwd, path), "utf8");
  } catch {
    throw new CliError(`cannot read signing key \`${path}\``);
  }
  try {
    return loadSigningKeyPem(pem);
  } catch (e) {
    throw new CliError(`signing key \`${path}\` is unusable: ${e instanceof Error ? e.message : String(e)}`);
  }
}

async function writeBundle(io: CliIo, file: SourceFile, result: CompileResult, outRoot: string, key: SigningKey | undefined): Promise<void> {
  const bundle = result.bundle!;
  const dir = join(outRoot, bundle.policyId, bundle.version);
  // A `policy.writ` already inside the output root must sit in the directory its header names, or the
  // bundle would be written beside a stale copy.
  const rel = relative(outRoot, file.absolute);
  if (!rel.startsWith("..") && rel.endsWith(`${sep}policy.writ`) && dirname(file.absolute) !== dir) {
    throw new CliError(
      `\`${file.display}\` declares ${bundle.policyId}@${bundle.version}, so it belongs in \`${relative(io.cwd, dir)}/\``,
      EXIT.compileFailed,
    );
  }
  await mkdir(dir, { recursive: true });
  for (const [name, bytes] of bundle.files) await writeAtomically(join(dir, name), bytes);
  // An unsigned compile must not leave an old signature beside a new manifest.
  if (!key) await rm(join(dir, SIGNATURE_FILE), { force: true });
  const signed = key ? `signed by ${key.keyId}` : "unsigned";
  const notes = result.warnings.length ? `, ${plural(result.warnings.length, "warning")}` : "";
  io.out(`${file.display}: ${bundle.policyId}@${bundle.version} -> ${relative(io.cwd, dir) || "."} (bundle_hash ${bundle.manifest.bundle_hash.slice(0, 16)}…, ${signed}${notes})`);
}
