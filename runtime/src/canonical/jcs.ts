/**
 * RFC 8785 (JCS) canonical JSON, the body of every writ signing input (DESIGN.md section 3).
 *
 * Serialization itself is done by the maintained `canonicalize` package (UTF-16 code unit key order, ECMAScript
 * number formatting). That package silently normalizes what JSON cannot express (it drops `undefined` members,
 * turns `undefined` array items into `null`, calls `toJSON`, serializes a `Date` as a string). A signature must never
 * cover such a silent rewrite, so the value is first walked and copied into a snapshot of plain JSON data; anything
 * that is not plain JSON data is refused with a {@link CanonicalizationError} naming its JSON path. Getters run once
 * (during the walk) and the snapshot, not the live value, is serialized.
 */
import canonicalize from "canonicalize";
import { CanonicalizationError } from "../errors.js";

type JsonSnapshot = null | boolean | number | string | JsonSnapshot[] | { [key: string]: JsonSnapshot };

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * Where a value sits, as a linked list rendered only when an error names it: building a JSON path string
 * for every node made the walk cost more than the serialization (this runs on every signature).
 */
interface At {
  readonly parent: At | null;
  readonly key: string | number;
}

function pathOf(at: At | null): string {
  if (at === null) return "$";
  const { parent, key } = at;
  if (typeof key === "number") return `${pathOf(parent)}[${key}]`;
  return IDENTIFIER.test(key) ? `${pathOf(parent)}.${key}` : `${pathOf(parent)}[${JSON.stringify(key)}]`;
}

function describe(value: object): string {
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== null && typeof proto === "object") {
    const ctor: unknown = (proto as { constructor?: unknown }).constructor;
    if (typeof ctor === "function" && typeof ctor.name === "string" && ctor.name !== "") return ctor.name;
  }
  return "unknown prototype";
}

function snapshot(value: unknown, at: At | null, ancestors: Set<object>): JsonSnapshot {
  switch (typeof value) {
    case "string":
      if (!value.isWellFormed()) throw new CanonicalizationError(`string at \`${pathOf(at)}\` contains a lone surrogate`);
      return value;
    case "number":
      if (!Number.isFinite(value)) throw new CanonicalizationError(`value at \`${pathOf(at)}\` is not finite`);
      return value;
    case "boolean":
      return value;
    case "undefined":
      throw new CanonicalizationError(`value at \`${pathOf(at)}\` is undefined`);
    case "function":
      throw new CanonicalizationError(`value at \`${pathOf(at)}\` is a function`);
    case "symbol":
      throw new CanonicalizationError(`value at \`${pathOf(at)}\` is a symbol`);
    case "bigint":
      throw new CanonicalizationError(`value at \`${pathOf(at)}\` is a bigint`);
    case "object":
      break;
  }
  if (value === null) return null;
  const obj = value as object;
  if (ancestors.has(obj)) throw new CanonicalizationError(`value at \`${pathOf(at)}\` is a circular reference`);
  if (Object.getOwnPropertySymbols(obj).length > 0) {
    throw new CanonicalizationError(`value at \`${pathOf(at)}\` has a symbol-keyed member`);
  }
  ancestors.add(obj);
  try {
    if (Array.isArray(obj)) {
      const items: JsonSnapshot[] = [];
      for (let i = 0; i < obj.length; i++) {
        if (!Object.hasOwn(obj, i)) throw new CanonicalizationError(`value at \`${pathOf({ parent: at, key: i })}\` is missing (sparse array)`);
        items.push(snapshot((obj as unknown[])[i], { parent: at, key: i }, ancestors));
      }
      return items;
    }
    const proto: unknown = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) {
      throw new CanonicalizationError(`value at \`${pathOf(at)}\` is not a plain object (${describe(obj)})`);
    }
    const out: { [key: string]: JsonSnapshot } = Object.create(null) as { [key: string]: JsonSnapshot };
    for (const key of Object.keys(obj)) {
      if (!key.isWellFormed()) {
        throw new CanonicalizationError(`member name ${JSON.stringify(key)} at \`${pathOf(at)}\` contains a lone surrogate`);
      }
      out[key] = snapshot((obj as Record<string, unknown>)[key], { parent: at, key }, ancestors);
    }
    return out;
  } finally {
    ancestors.delete(obj);
  }
}

/**
 * The RFC 8785 canonical JSON text of `value`.
 * @throws CanonicalizationError when `value` is not plain JSON data (see the module comment); the message names the
 *   JSON path of the first offending value, e.g. "value at `$.a[2]` is not finite".
 */
export function canonicalJson(value: unknown): string {
  const data = snapshot(value, null, new Set());
  let text: string | undefined;
  try {
    text = canonicalize(data);
  } catch (cause) {
    // Unreachable for a snapshot; kept so a library change cannot surface as an untyped error.
    throw new CanonicalizationError(`value cannot be canonicalized (RFC 8785): ${(cause as Error).message}`);
  }
  if (text === undefined) throw new CanonicalizationError("value at `$` cannot be canonicalized (RFC 8785)");
  return text;
}

const utf8 = new TextEncoder();

/** The UTF-8 bytes of {@link canonicalJson}: the JCS body that signatures and hashes cover. */
export function canonicalBytes(value: unknown): Uint8Array {
  return utf8.encode(canonicalJson(value));
}
