import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUNDLE_FILES, MANIFEST_FILE, buildManifest, serializeIr, serializeJson, type PolicyIr } from "../../src/index.js";

/**
 * A bundle written by hand, as the compiler would (runtime tests do not depend on the compiler).
 * Policy: approve small, escalate large, reject sanctioned countries; `amount` and `currency` are bound.
 */
export const TRANSFER_IR: PolicyIr = {
  irVersion: 1,
  policyId: "payments.transfer",
  version: "1.2.0",
  governs: { action: "transfer.execute", binding: ["amount", "currency"] },
  signals: {
    amount: { type: "number", optional: false },
    currency: { type: "enum", optional: false },
    country: { type: "string", optional: true },
  },
  rules: [
    {
      id: "sanctioned",
      verdict: "reject",
      reason: "destination is sanctioned",
      when: { op: "in", kind: "string", value: { op: "signal", name: "country" }, set: ["KP", "IR"] },
    },
    {
      id: "large",
      verdict: "escalate",
      reason: "large transfer needs a human",
      when: { op: "cmp", cmp: "gt", kind: "number", left: { op: "signal", name: "amount" }, right: { op: "lit", value: 10000 } },
    },
    {
      id: "small",
      verdict: "approve",
      reason: "within limits",
      when: { op: "cmp", cmp: "le", kind: "number", left: { op: "signal", name: "amount" }, right: { op: "lit", value: 1000 } },
    },
  ],
  otherwise: null,
};

export const TRANSFER_SCHEMA = {
  $schema: "http://json-schema.org/draft-07/schema#",
  type: "object",
  properties: {
    amount: { type: "number", minimum: 0 },
    currency: { type: "string", enum: ["USD", "EUR"] },
    country: { type: "string", pattern: "^[A-Z]{2}$" },
  },
  required: ["amount", "currency"],
  additionalProperties: false,
};

/** Writes the bundle (or, by hand, one with another IR or schema) under a fresh temporary root and returns the root. */
export function writeTransferBundle(by: { readonly ir?: PolicyIr; readonly schema?: object } = {}): string {
  const { ir = TRANSFER_IR, schema = TRANSFER_SCHEMA } = by;
  const root = mkdtempSync(join(tmpdir(), "writ-runtime-"));
  const dir = join(root, TRANSFER_IR.policyId, TRANSFER_IR.version);
  mkdirSync(dir, { recursive: true });
  const utf8 = new TextEncoder();
  const files = new Map<string, Uint8Array>([
    [BUNDLE_FILES.source, utf8.encode("# hand-written test bundle\n")],
    [BUNDLE_FILES.schema, utf8.encode(serializeJson(schema))],
    [BUNDLE_FILES.ir, utf8.encode(serializeIr(ir))],
  ]);
  const manifest = buildManifest(
    {
      policyId: TRANSFER_IR.policyId,
      version: TRANSFER_IR.version,
      governs: TRANSFER_IR.governs.action,
      compiler: { name: "test", version: "0" },
    },
    files,
  );
  for (const [name, bytes] of files) writeFileSync(join(dir, name), bytes);
  writeFileSync(join(dir, MANIFEST_FILE), serializeJson(manifest));
  return root;
}
