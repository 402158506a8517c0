/**
 * `writ audit verify`: checks a sidecar's audit log export, or one inclusion or consistency proof, offline against
 * pinned keys only (docs/audit.md, "Verifying an export"). The export is read line by line, so a log of any length is
 * verified in constant memory beside its Merkle frontier.
 */
import { constants, createReadStream } from "node:fs";
import { access, readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import {
  ExportVerifier,
  decisionAttestationSigned,
  parseStrictJson,
  verifyConsistencyProof,
  verifyInclusionProof,
  type ExportReport,
  type TrustRoot,
} from "@writ/runtime";
import { CliError, EXIT, type CliIo } from "../io.js";
import { pinnedKeys } from "./verify.js";

export interface AuditVerifyRun {
  readonly io: CliIo;
  /** The export's path, or `-` for standard input; null with `proofPath`. */
  readonly exportPath: string | null;
  readonly proofPath: string | null;
  readonly keyPaths: readonly string[];
  readonly trustRootPath: string | null;
  /** Standard input, for `-`. */
  readonly stdin?: Readable;
}

export async function runAuditVerify(run: AuditVerifyRun): Promise<number> {
  if ((run.exportPath === null) === (run.proofPath === null))
    throw new CliError("audit verify takes an export (a path, or - for standard input) or --proof FILE, one of them");
  const trustRoot = await pinnedKeys(run);
  return run.proofPath !== null ? verifyProof(run, run.proofPath, trustRoot) : verifyExport(run, run.exportPath!, trustRoot);
}

async function verifyExport(run: AuditVerifyRun, path: string, trustRoot: TrustRoot): Promise<number> {
  const { io } = run;
  if (path !== "-") {
    await access(resolve(io.cwd, path), constants.R_OK).catch((e: unknown) => {
      throw new CliError(`cannot read \`${path}\`: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    });
  }
  const input = path === "-" ? (run.stdin ?? process.stdin) : createReadStream(resolve(io.cwd, path));
  const verifier = new ExportVerifier(trustRoot, decisionAttestationSigned(trustRoot));
  for await (const text of createInterface({ input, crlfDelay: Infinity })) {
    if (text === "") continue;
    let line: unknown;
    try {
      line = parseStrictJson(text);
    } catch (e) {
      verifier.add(null);
      verifier.fail(`not strict JSON: ${e instanceof Error ? e.message : String(e)}`);
      continue;
    }
    verifier.add(line);
  }
  return report(io, verifier.finish());
}

function report(io: CliIo, r: ExportReport): number {
  const counts = `${r.entries} entries (${r.removed} removed by retention), ${r.checkpoints} checkpoints, ${r.attestations} attestations`;
  if (r.valid) {
    io.out(`audit log ${r.logId}: verified: ${counts}; latest checkpoint: size ${r.latest?.size ?? 0}, ${r.latest?.timestamp ?? "none"}`);
    return EXIT.ok;
  }
  const first = r.failures[0];
  const where =
    first === undefined
      ? ""
      : `line ${first.line}${first.position === undefined ? "" : `, position ${first.position}`}${first.checkpoint === undefined ? "" : `, checkpoint ${first.checkpoint}`}: `;
  io.out(`audit log ${r.logId ?? "(unknown)"}: NOT verified: ${where}${first?.reason ?? "the export is empty"}`);
  if (r.failures.length > 1) io.out(`  and ${r.failures.length - 1} more failure${r.failures.length > 2 ? "s" : ""} after it`);
  return EXIT.notVerified;
}

async function verifyProof(run: AuditVerifyRun, path: string, trustRoot: TrustRoot): Promise<number> {
  let value: unknown;
  try {
    value = parseStrictJson(await readFile(resolve(run.io.cwd, path), "utf8"));
  } catch (e) {
    throw new CliError(`\`${path}\` is not a readable JSON proof: ${e instanceof Error ? e.message : String(e)}`, EXIT.notVerified);
  }
  const proof = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  const kind = "leafIndex" in proof ? "inclusion" : "from" in proof && "to" in proof ? "consistency" : null;
  if (kind === null) throw new CliError(`\`${path}\` is neither an inclusion proof nor a consistency proof`, EXIT.notVerified);
  const result = kind === "inclusion" ? verifyInclusionProof(proof, trustRoot) : verifyConsistencyProof(proof, trustRoot);
  run.io.out(`${kind} proof: ${result.valid ? "verified" : `NOT verified: ${result.errors.join("; ")}`}`);
  return result.valid ? EXIT.ok : EXIT.notVerified;
}
