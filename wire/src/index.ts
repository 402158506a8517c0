/**
 * @writ/wire: the JSON bodies of writ's two HTTP surfaces (spec sections 2, 4, 7; docs/sidecar.md, docs/audit.md,
 * docs/surface-b.md, docs/errors.md), shared by the sidecar that answers them, the SDK that sends them and the
 * conformance suite that checks them. Each shape is a TypeBox schema (JSON Schema) and the TypeScript type of the
 * same name (schema.ts): the sidecar validates request bodies with the schemas and builds its OpenAPI documents from
 * them. Beside them, the fixed strings of `constants.ts`. It imports no other writ package.
 */
export * from "./constants.js";
export * from "./common.js";
export * from "./attestation.js";
export * from "./evidence.js";
export * from "./surface-a.js";
export * from "./runtime-info.js";
export * from "./audit.js";
export * from "./audit-log.js";
export * from "./surface-b.js";
export * from "./errors.js";
export type { Static, TSchema } from "./schema.js";
