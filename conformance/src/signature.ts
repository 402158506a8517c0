/**
 * The suite's own check of a writ signature (docs/signing.md), with node:crypto and an RFC 8785 library only:
 *
 *     signing input = PAE(payloadType, JCS(object without its top-level "signature" member))
 *     PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
 *
 * The object is the value as received, parsed strictly (the caller parses the response text with
 * `parseStrictJson`, so duplicate keys, lone surrogates and unsafe numbers never reach this point). The signature is
 * canonical padded standard base64 of 64 bytes and nothing else.
 */
import { verify } from "node:crypto";
import canonicalize from "canonicalize";
import { isPlainObject } from "./matchers.js";
import type { PinnedKey } from "./pinned-key.js";
import { parseStrictJson, StrictJsonError } from "./strict-json.js";

const SIGNATURE_TEXT = /^[A-Za-z0-9+/]{86}==$/;

/** The DSSE v1 pre-authentication encoding; lengths are byte lengths. */
export function pae(payloadType: string, body: Uint8Array): Buffer {
  const type = Buffer.from(payloadType, "utf8");
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${body.length} `), body]);
}

/** The 64 signature bytes, or why the text is not a canonical padded base64 Ed25519 signature. */
export function decodeSignature(text: unknown): { ok: true; bytes: Buffer } | { ok: false; problem: string } {
  if (typeof text !== "string")
    return { ok: false, problem: `signature is not a string (${text === undefined ? "missing" : typeof text})` };
  if (!SIGNATURE_TEXT.test(text)) return { ok: false, problem: "signature is not 88 characters of padded standard base64" };
  const bytes = Buffer.from(text, "base64");
  // Unused low bits of the last character must be zero: one signature, one spelling.
  if (bytes.length !== 64 || bytes.toString("base64") !== text)
    return { ok: false, problem: "signature is not canonical base64 (unused bits set)" };
  return { ok: true, bytes };
}

export interface SignedValue {
  /** The signed object, or (with `jcsString`) a string holding it. */
  readonly value: unknown;
  readonly payloadType: string;
  readonly jcsString?: boolean;
  /** Top-level members besides `signature` that the signature does not cover. */
  readonly omit?: readonly string[];
}

/** The JCS bytes a signer signed: the object without `signature` and the `omit` members. */
export function signedBody(object: Readonly<Record<string, unknown>>, omit: readonly string[] = []): Buffer {
  const unsigned: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) {
    if (key !== "signature" && !omit.includes(key))
      Object.defineProperty(unsigned, key, { value, enumerable: true, writable: true, configurable: true });
  }
  const text = canonicalize(unsigned);
  if (text === undefined) throw new Error("the object has no canonical form");
  return Buffer.from(text, "utf8");
}

/** null when `signed` carries a valid signature by `key`; otherwise what is wrong, as a message ending a sentence. */
export function signatureProblem(signed: SignedValue, key: PinnedKey): string | null {
  let object: unknown = signed.value;
  if (signed.jcsString === true) {
    if (typeof object !== "string") return `expected a string holding canonical JSON, got ${object === null ? "null" : typeof object}`;
    try {
      object = parseStrictJson(object);
    } catch (e) {
      return `the string is not strict JSON: ${e instanceof StrictJsonError ? e.message : String(e)}`;
    }
  }
  if (!isPlainObject(object)) return "the signed value is not a JSON object";
  if (!Object.hasOwn(object, "signature")) return "signature is missing";
  const signature = decodeSignature(object["signature"]);
  if (!signature.ok) return signature.problem;
  let body: Buffer;
  try {
    body = signedBody(object, signed.omit);
  } catch (e) {
    return `cannot canonicalize the object: ${(e as Error).message}`;
  }
  return verify(null, pae(signed.payloadType, body), key.key, signature.bytes) ? null : "signature does not verify";
}
