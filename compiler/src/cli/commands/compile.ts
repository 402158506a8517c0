import { rm, mkdir } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import {
  BundleError,
  PAYLOAD_TYPES,
  SIGNATURE_FILE,
  loadBundle,
  serializeJson,
  signObject,
  type BundleSignature,
  type SigningKey,
} from "@writ/runtime";
import { compile, type CompileResult } from "../../compile.js";
import { existingBundle, sameFiles } from "../existing-bundle.js";
import { mayReplace, short } from "../immutable.js";
import { CliError, EXIT, type CliIo } from "../io.js";
import { readSigningKey } from "../keys.js";
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
  /** Replace a version already in `outRoot` with other content (INVARIANT (a version is immutable)). */
  readonly force: boolean;
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
      if (run.format !== "json")
        io.err(`${file.display}: ${result.valid ? "warnings denied" : `failed with ${plural(result.errors.length, "error")}`}`);
      continue;
    }
    if (run.outRoot !== null) {
      if (!(await writeBundle(run, file, result, signingKey))) failed++;
    } else if (run.format !== "json")
      io.out(`${file.display}: ok${result.warnings.length ? ` (${plural(result.warnings.length, "warning")})` : ""}`);
    if (run.timings) io.out(`  phases: ${result.timings.map((t) => `${t.phase} ${t.ms.toFixed(1)}ms`).join(", ")}`);
  }
  if (run.format !== "json") {
    const verb = run.outRoot === null ? "checked" : "compiled";
    io.err(
      `${verb} ${plural(sources.length, "policy", "policies")}: ${sources.length - failed} ok, ${failed} failed, ${plural(warnings, "warning")}`,
    );
  }
  return failed > 0 ? EXIT.compileFailed : EXIT.ok;
}

/**
 * Writes the bundle under `outRoot/{policyId}/{version}/`, unless that version is already there: with the same files it
 * is kept untouched ("unchanged"); with other files it is refused, or replaced with a warning under --force. Returns
 * false when refused (the one line is printed).
 */
async function writeBundle(run: CompileRun, file: SourceFile, result: CompileResult, key: SigningKey | undefined): Promise<boolean> {
  const { io } = run;
  const outRoot = resolve(io.cwd, run.outRoot!);
  const bundle = result.bundle!;
  const dir = join(outRoot, bundle.policyId, bundle.version);
  const shown = relative(io.cwd, dir) || ".";
  const ref = `${bundle.policyId}@${bundle.version}`;
  // A `policy.writ` already inside the output root must sit in the directory its header names, or the
  // bundle would be written beside a stale copy.
  const rel = relative(outRoot, file.absolute);
  if (!rel.startsWith("..") && rel.endsWith(`${sep}policy.writ`) && dirname(file.absolute) !== dir) {
    throw new CliError(`\`${file.display}\` declares ${ref}, so it belongs in \`${relative(io.cwd, dir)}/\``, EXIT.compileFailed);
  }
  const notes = result.warnings.length ? `, ${plural(result.warnings.length, "warning")}` : "";
  const existing = await existingBundle(dir);
  if (existing !== null) {
    if ("files" in existing && sameFiles(existing.files, bundle.manifest.files) && !run.force) {
      // A signature is not part of bundle_hash: signing the version already there changes no byte it is named by.
      if (key && existing.signedBy !== key.keyId) {
        await signExisting(outRoot, bundle.policyId, bundle.version, key);
        io.out(
          `${file.display}: ${ref} unchanged in ${shown} (bundle_hash ${short(existing.bundleHash)}), now signed by ${key.keyId}${notes}`,
        );
        return true;
      }
      const signer = existing.signedBy ? `signed by ${existing.signedBy}` : "unsigned";
      io.out(`${file.display}: ${ref} unchanged in ${shown} (bundle_hash ${short(existing.bundleHash)}, ${signer}${notes})`);
      return true;
    }
    const occupant = "files" in existing ? { bundleHash: existing.bundleHash } : existing;
    const differs = !("files" in existing) || existing.bundleHash !== bundle.manifest.bundle_hash;
    if (differs && !mayReplace(io, ref, relative(io.cwd, outRoot) || ".", occupant, bundle.manifest.bundle_hash, run.force)) return false;
  }
  await mkdir(dir, { recursive: true });
  for (const [name, bytes] of bundle.files) await writeAtomically(join(dir, name), bytes);
  // An unsigned compile must not leave an old signature beside a new manifest.
  if (!key) await rm(join(dir, SIGNATURE_FILE), { force: true });
  const signed = key ? `signed by ${key.keyId}` : "unsigned";
  io.out(`${file.display}: ${ref} -> ${shown} (bundle_hash ${short(bundle.manifest.bundle_hash)}, ${signed}${notes})`);
  return true;
}

/**
 * Signs the bundle already in `outRoot/{policyId}/{version}/` with `key`, its manifest as it is (which may name an
 * earlier compiler): the directory is verified whole first, so no signature is ever put on a changed bundle.
 */
async function signExisting(outRoot: string, policyId: string, version: string, key: SigningKey): Promise<void> {
  let manifest;
  try {
    ({ manifest } = await loadBundle(outRoot, policyId, version));
  } catch (e) {
    if (!(e instanceof BundleError)) throw e;
    throw new CliError(
      `\`${policyId}@${version}\` in \`${outRoot}\` does not verify, so it is not signed: ${e.message}`,
      EXIT.compileFailed,
    );
  }
  const sig: BundleSignature = {
    payloadType: PAYLOAD_TYPES.bundle,
    keyId: key.keyId,
    signature: signObject(PAYLOAD_TYPES.bundle, manifest, key),
  };
  await writeAtomically(join(outRoot, policyId, version, SIGNATURE_FILE), serializeJson(sig));
}
