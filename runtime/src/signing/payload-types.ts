/**
 * The DSSE payloadType of every signed writ object (docs/signing.md). The payloadType is part of the signing
 * input, so a signature made in one domain never verifies in another (e.g. an attestation is never accepted as a
 * runtime manifest). Declared once, with the wire format's other fixed strings, in @writ/wire's constants (the one
 * module of @writ/wire the runtime imports; it loads no TypeBox).
 */
export { PAYLOAD_TYPES, type PayloadType } from "@writ/wire/constants";
