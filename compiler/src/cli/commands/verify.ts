import { readFile, stat } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
import {
  MANIFEST_FILE,
  PAYLOAD_TYPES,
  WritRuntimeError,
  createTrustRoot,
  loadBundle,
  loadPublicKeyPem,
  parseStrictJson,
  toEndpointVerification,
  trustRootFromDocument,
  verifyAttestation,
  verifyObject,
  type PublicKey,
  type TrustRoot,
} from "@writ/runtime";
import { CliError, EXIT, type CliIo } from "../io.js";

export interface VerifyRun {
  readonly io: CliIo;
  readonly path: string;
  readonly keyPaths: readonly string[];
  readonly trustRootPath: string | null;
  /**
   * `--accept-runtime`: when given, exactly the runtime hashes whose attestations are accepted; otherwise this
   * runtime's own and the trust root's `acceptedRuntimeHashes` (docs/attestations.md, "Runtime upgrades").
   */
  readonly acceptRuntimes: readonly string[];
}

const RUNTIME_HASH_FORM = /^[0-9a-f]{64}$/;

/**
 * `writ verify`: checks a signed writ artifact offline against pinned keys only. The kind is read from the
 * artifact: a bundle directory (or its manifest), an attestation, or an execution integrity proof.
 */
export async function runVerify(run: VerifyRun): Promise<number> {
  const { io } = run;
  const malformed = run.acceptRuntimes.find((h) => !RUNTIME_HASH_FORM.test(h));
  if (malformed !== undefined) throw new CliError(`--accept-runtime \`${malformed}\` is not a runtimeHash (64 lowercase hex digits)`);
  const trustRoot = await pinnedKeys(run);
  const target = resolve(io.cwd, run.path);
  const info = await stat(target).catch(() => null);
  if (!info) throw new CliError(`\`${run.path}\` does not exist`);
  if (info.isDirectory() || basename(target) === MANIFEST_FILE)
    return verifyBundle(io, info.isDirectory() ? target : dirname(target), trustRoot.keys);

  let value: unknown;
  try {
    value = parseStrictJson(await readFile(target, "utf8"));
  } catch (e) {
    throw new CliError(`\`${run.path}\` is not strict JSON: ${e instanceof Error ? e.message : String(e)}`, EXIT.notVerified);
  }
  const record = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  if ("matchDetails" in record && "integrityHash" in record) {
    const key = verifyObject(PAYLOAD_TYPES.executionProof, record, String(record["signature"]), trustRoot.keys);
    io.out(key ? `execution proof: verified (signed by ${key.keyId}); match: ${String(record["match"])}` : "execution proof: NOT verified");
    return key ? EXIT.ok : EXIT.notVerified;
  }
  if ("execution_fingerprint" in record) {
    const v = verifyAttestation(record, {
      trustRoot,
      ...(run.acceptRuntimes.length > 0 ? { acceptedRuntimeHashes: run.acceptRuntimes } : {}),
    });
    const e = toEndpointVerification(v);
    io.out(
      `attestation: ${v.valid ? "valid" : "NOT valid"} (signature ${e.checks.signature}, runtime ${e.checks.runtime}, schema ${e.checks.schema})`,
    );
    for (const [check, ok] of Object.entries(v.checks)) io.out(`  ${ok ? "ok  " : "FAIL"} ${check}`);
    for (const err of v.errors) io.out(`  error: ${err}`);
    for (const w of v.warnings) io.out(`  warning: ${w}`);
    return v.valid ? EXIT.ok : EXIT.notVerified;
  }
  throw new CliError(`\`${run.path}\` is not a writ attestation, execution proof or bundle`, EXIT.notVerified);
}

async function verifyBundle(io: CliIo, dir: string, keys: readonly PublicKey[]): Promise<number> {
  const version = basename(dir);
  const policyId = basename(dirname(dir));
  try {
    const b = await loadBundle(dirname(dirname(dir)), policyId, version, { trustedKeys: keys, requireSignature: true });
    io.out(`bundle ${policyId}@${version}: verified (bundle_hash ${b.manifest.bundle_hash}, signed by ${b.signedBy})`);
    return EXIT.ok;
  } catch (e) {
    if (!(e instanceof WritRuntimeError)) throw e;
    io.out(`bundle ${policyId}@${version}: NOT verified: ${e.message}`);
    return EXIT.notVerified;
  }
}

/** The keys to verify against: `--trust-root FILE` (with the runtimes it accepts), or one or more `--key FILE` (SPKI PEM). */
export async function pinnedKeys(run: Pick<VerifyRun, "io" | "keyPaths" | "trustRootPath">): Promise<TrustRoot> {
  const read = async (p: string): Promise<string> => {
    try {
      return await readFile(resolve(run.io.cwd, p), "utf8");
    } catch {
      throw new CliError(`cannot read \`${p}\``);
    }
  };
  try {
    if (run.trustRootPath) return trustRootFromDocument(parseStrictJson(await read(run.trustRootPath)));
    if (run.keyPaths.length === 0) throw new CliError("verify needs the keys to trust: --key PUBLIC.pem (repeatable) or --trust-root FILE");
    const keys = await Promise.all(run.keyPaths.map(async (p) => loadPublicKeyPem(await read(p))));
    return createTrustRoot("pinned-on-command-line", keys);
  } catch (e) {
    if (e instanceof CliError) throw e;
    const what = run.trustRootPath ? `unusable trust root \`${run.trustRootPath}\`` : "unusable key";
    throw new CliError(`${what}: ${e instanceof Error ? e.message : String(e)}`);
  }
}
