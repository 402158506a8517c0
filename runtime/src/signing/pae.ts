/**
 * DSSE pre-authentication encoding (docs/signing.md):
 *
 *     signing input = PAE(payloadType, JCS(object without its "signature" member))
 *     PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
 *
 * LEN is the decimal ASCII byte length (of the UTF-8 type, of the body bytes); SP is one 0x20 byte.
 */
import { canonicalJson } from "../canonical/jcs.js";
import type { PayloadType } from "./payload-types.js";

const utf8 = new TextEncoder();

/** `"DSSEv1" SP LEN(type) SP type SP`, encoded once per payloadType: it is the same for every signature. */
const prefixes = new Map<string, Uint8Array>();

function prefixOf(payloadType: string): Uint8Array {
  let prefix = prefixes.get(payloadType);
  if (!prefix) {
    prefix = utf8.encode(`DSSEv1 ${utf8.encode(payloadType).length} ${payloadType} `);
    if (prefixes.size < 64) prefixes.set(payloadType, prefix);
  }
  return prefix;
}

export function pae(payloadType: string, body: Uint8Array): Uint8Array {
  const prefix = prefixOf(payloadType);
  const length = utf8.encode(`${body.length} `);
  const out = new Uint8Array(prefix.length + length.length + body.length);
  out.set(prefix, 0);
  out.set(length, prefix.length);
  out.set(body, prefix.length + length.length);
  return out;
}

/**
 * The bytes an Ed25519 writ signature covers. Only the object's own top-level `signature` member is left out;
 * `object` is not mutated (a shallow copy with the same prototype is canonicalized, so a non-plain object is still
 * refused by the canonicalizer).
 * @throws CanonicalizationError when the object is not plain JSON data
 */
export function signingInput(payloadType: PayloadType, object: object): Uint8Array {
  let unsigned: object = object;
  if (object !== null && typeof object === "object" && Object.hasOwn(object, "signature")) {
    const descriptors = Object.getOwnPropertyDescriptors(object) as Record<string, PropertyDescriptor>;
    delete descriptors["signature"];
    unsigned = Object.create(Object.getPrototypeOf(object) as object | null, descriptors) as object;
  }
  return canonicalSigningInput(payloadType, canonicalJson(unsigned));
}

/**
 * The signing input of an object already in its canonical JSON text: {@link pae} of its UTF-8 bytes, encoded
 * straight into the output (this runs once per signature; docs/benchmarks.md).
 */
export function canonicalSigningInput(payloadType: PayloadType, canonicalText: string): Uint8Array {
  const prefix = prefixOf(payloadType);
  const bodyLength = Buffer.byteLength(canonicalText, "utf8");
  const length = `${bodyLength} `;
  // Every byte is written below: the prefix, the ASCII length and the body.
  const out = Buffer.allocUnsafe(prefix.length + length.length + bodyLength);
  out.set(prefix, 0);
  out.write(length, prefix.length, "latin1");
  out.write(canonicalText, prefix.length + length.length, "utf8");
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}
