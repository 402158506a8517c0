/**
 * @writ/wire: the JSON bodies of writ's two HTTP surfaces (spec sections 2, 4, 7; docs/sidecar.md, docs/audit.md,
 * docs/surface-b.md, docs/errors.md), shared by the sidecar that answers them, the SDK that sends them and the
 * conformance suite that checks them. Types only, apart from the fixed strings of `constants.ts`; it depends on
 * nothing and imports no other writ package.
 */
export { PAYLOAD_TYPES, PROVENANCE_VERSION, SPEC_ERRORS, type PayloadType } from "./constants.js";
export type * from "./common.js";
export type * from "./attestation.js";
export type * from "./evidence.js";
export type * from "./surface-a.js";
export type * from "./runtime-info.js";
export type * from "./audit.js";
export type * from "./audit-log.js";
export type * from "./surface-b.js";
export type * from "./errors.js";
