import { stat } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";
import {
  ARCHIVE_SUFFIX,
  BUNDLE_FILES,
  BundleError,
  MANIFEST_FILE,
  createSignalValidator,
  loadBundle,
  loadBundleArchive,
  parseStrictJson,
  readBundleArchive,
  readBundleFile,
  type PolicyIr,
  type SignalValidator,
} from "@writ/runtime";
import { CliError, EXIT, type CliIo } from "./io.js";
import { reportDiagnostics } from "./report.js";
import { collectSources } from "./sources.js";

/** A policy to decide with, read the way `writ eval` names it (docs/compiler.md). */
export interface PolicyTarget {
  /** `source`: compiled here, in memory; `bundle`, `archive`: verified as a runtime loads it. */
  readonly kind: "source" | "bundle" | "archive";
  /** The path as given. */
  readonly path: string;
  readonly ir: PolicyIr;
  /** The signals schema (`signals.schema.json`) `validateSignals` checks against. */
  readonly schema: object;
  readonly validateSignals: SignalValidator;
  readonly bundleHash: string;
  /** The policy's source (a bundle carries it), to show each rule as written. */
  readonly source: string;
}

/**
 * Reads the policy at `path`: a `.writ` file or a directory of one policy source (compiled; exit 3 when it does not
 * compile), a bundle directory (it holds `bundle.manifest.json`; the source inside it is part of the bundle) or a
 * `.bundle.json` archive (exit 5 when either does not verify). Signatures are not required: this decides, it does not
 * vouch for who signed.
 */
export async function readPolicyTarget(io: CliIo, path: string): Promise<PolicyTarget> {
  const target = resolve(io.cwd, path);
  const info = await stat(target).catch(() => null);
  if (!info) throw new CliError(`\`${path}\` does not exist`);
  try {
    if (info.isDirectory() && (await stat(join(target, MANIFEST_FILE)).catch(() => null))) return await fromBundleDirectory(path, target);
    if (info.isFile() && target.endsWith(ARCHIVE_SUFFIX)) return await fromArchive(path, target);
  } catch (e) {
    if (e instanceof BundleError) throw new CliError(`\`${path}\` does not verify: ${e.message}`, EXIT.notVerified);
    throw e;
  }
  return fromSource(io, path);
}

async function fromSource(io: CliIo, path: string): Promise<PolicyTarget> {
  const sources = await collectSources(io.cwd, [path]);
  if (sources.length > 1) {
    throw new CliError(`\`${path}\` holds ${sources.length} policies: name one (\`${sources[0]!.display}\`, ...)`);
  }
  const file = sources[0]!;
  // The compiler (chevrotain's parser) is loaded only for a source: a bundle or an archive does not need it.
  const { compile } = await import("../compile.js");
  const result = compile(file.display, file.text);
  if (!result.valid || !result.ir || !result.bundle) {
    reportDiagnostics(io, file, result, "pretty");
    throw new CliError(`\`${file.display}\` does not compile`, EXIT.compileFailed);
  }
  const read = (name: string): unknown => parseStrictJson(new TextDecoder().decode(result.bundle!.files.get(name)!));
  const manifest = read(MANIFEST_FILE) as { bundle_hash: string };
  const schema = read(BUNDLE_FILES.schema) as object;
  return {
    kind: "source",
    path: relative(io.cwd, file.absolute) || file.display,
    ir: result.ir,
    schema,
    validateSignals: createSignalValidator(schema),
    bundleHash: manifest.bundle_hash,
    source: file.text,
  };
}

/** A bundle directory laid out as `{policyId}/{version}/`, as `writ compile` writes and a sidecar serves it. */
async function fromBundleDirectory(path: string, dir: string): Promise<PolicyTarget> {
  const bundle = await loadBundle(dirname(dirname(dir)), basename(dirname(dir)), basename(dir));
  const source = await readBundleFile(dir, BUNDLE_FILES.source);
  return {
    kind: "bundle",
    path,
    ir: bundle.ir,
    schema: bundle.schema,
    validateSignals: bundle.validateSignals,
    bundleHash: bundle.manifest.bundle_hash,
    source: text(source),
  };
}

async function fromArchive(path: string, file: string): Promise<PolicyTarget> {
  const bytes = await readBundleFile(dirname(file), basename(file));
  if (bytes === null) throw new CliError(`\`${path}\` does not exist`);
  const bundle = await loadBundleArchive(bytes, basename(file), {});
  const source = readBundleArchive(bytes, basename(file)).files.get(BUNDLE_FILES.source) ?? null;
  return {
    kind: "archive",
    path,
    ir: bundle.ir,
    schema: bundle.schema,
    validateSignals: bundle.validateSignals,
    bundleHash: bundle.manifest.bundle_hash,
    source: text(source),
  };
}

function text(bytes: Uint8Array | null): string {
  return bytes === null ? "" : new TextDecoder().decode(bytes);
}

/** How a command names the policy it read: `payments.transfer@1.2.0 (source `path`, bundle_hash 0123456789abcdef…)`. */
export function targetHeading(t: PolicyTarget): string {
  return `${t.ir.policyId}@${t.ir.version} (${t.kind} \`${t.path}\`, bundle_hash ${t.bundleHash.slice(0, 16)}…)`;
}

/** The same, as JSON output names it. */
export function targetAbout(t: PolicyTarget): {
  policyId: string;
  version: string;
  from: PolicyTarget["kind"];
  path: string;
  bundleHash: string;
} {
  return { policyId: t.ir.policyId, version: t.ir.version, from: t.kind, path: t.path, bundleHash: t.bundleHash };
}
