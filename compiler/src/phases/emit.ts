import {
  BUNDLE_FILES,
  MANIFEST_FILE,
  PAYLOAD_TYPES,
  SIGNATURE_FILE,
  buildManifest,
  serializeIr,
  serializeJson,
  signObject,
  type BundleManifest,
  type BundleSignature,
  type PolicyIr,
  type SigningKey,
} from "@writ/runtime";
import { signalsSchema } from "../emit/signals-schema.js";
import type { PolicyAst } from "../syntax/ast.js";
import { COMPILER } from "../version.js";
import type { PhaseContext } from "./context.js";

export interface Bundle {
  readonly policyId: string;
  readonly version: string;
  readonly manifest: BundleManifest;
  /** Every file of `policies/{policyId}/{version}/`, by name, in the order they are written. */
  readonly files: ReadonlyMap<string, Uint8Array>;
}

export interface EmitOptions {
  readonly signingKey?: SigningKey;
}

const utf8 = new TextEncoder();

/**
 * Phase emit. Guarantees: the bundle is self-consistent (each file's SHA-256 and `bundle_hash` in the
 * manifest match the bytes) and reproducible: the same source, compiler and key give the same bytes
 * (JSON is written in a fixed member order, Ed25519 signatures are deterministic, nothing reads a clock).
 */
export function emit(ctx: PhaseContext, ast: PolicyAst, ir: PolicyIr, options: EmitOptions): Bundle {
  const content = new Map<string, Uint8Array>([
    [BUNDLE_FILES.source, utf8.encode(ctx.text)],
    [BUNDLE_FILES.schema, utf8.encode(serializeJson(signalsSchema(ast)))],
    [BUNDLE_FILES.ir, utf8.encode(serializeIr(ir))],
  ]);
  const manifest = buildManifest({ policyId: ir.policyId, version: ir.version, governs: ir.governs.action, compiler: COMPILER }, content);
  const files = new Map(content).set(MANIFEST_FILE, utf8.encode(serializeJson(manifest)));
  if (options.signingKey) {
    const key = options.signingKey;
    try {
      const sig: BundleSignature = {
        payloadType: PAYLOAD_TYPES.bundle,
        keyId: key.keyId,
        signature: signObject(PAYLOAD_TYPES.bundle, manifest, key),
      };
      files.set(SIGNATURE_FILE, utf8.encode(serializeJson(sig)));
    } catch (e) {
      ctx.sink.report("E801", ast.span, `bundle could not be signed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return { policyId: ir.policyId, version: ir.version, manifest, files };
}
