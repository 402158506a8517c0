/** A bundle manifest of `payments.transfer` 1.2.0 over placeholder files: what attestation tests sign decisions of. */
import { buildManifest } from "../../src/index.js";

const utf8 = new TextEncoder();

export const TRANSFER_MANIFEST = buildManifest(
  { policyId: "payments.transfer", version: "1.2.0", governs: "transfer.execute", compiler: { name: "writ", version: "0.1.0" } },
  new Map([
    ["policy.writ", utf8.encode("source")],
    ["signals.schema.json", utf8.encode("{}")],
    ["policy.ir.json", utf8.encode("{}")],
  ]),
);
