/**
 * RFC 8785 (JCS) canonical JSON, the body of every writ signing input (docs/signing.md). One walk validates and writes:
 * JCS writes numbers and strings as ECMAScript's JSON.stringify does and orders members by UTF-16 code units, as the
 * default sort does, so each leaf is written by JSON.stringify and each object's keys sorted with the default
 * comparator. Not the `canonicalize` package: signing runs on every request, and its walk after a safety walk was a
 * large share of an attestation's cost (docs/benchmarks.md, "Runtime"); it remains the oracle (jcs.test.ts).
 *
 * What JSON cannot express is refused, never silently rewritten (a signature must not cover a rewrite): undefined,
 * functions, symbols, bigints, non-finite numbers, lone surrogates, sparse arrays, symbol-keyed members, circular
 * references, objects that are not plain; `toJSON` is not called; getters run once. The error names the JSON path of
 * the first offending value.
 */
import { CanonicalizationError } from "../errors.js";

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Characters JSON.stringify escapes in a well-formed string; a string without them is written as `"` + s + `"`. */
// eslint-disable-next-line no-control-regex -- the control characters are exactly what JSON escapes
const NEEDS_ESCAPE = /[\u0000-\u001f"\\]/;

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

/**
 * Member names as JSON text, by name. Objects writ signs reuse a few dozen names, and writing a name
 * (escape check and quoting) was a sixth of an attestation body's canonicalization. Only well-formed names are
 * kept, and at most NAME_CACHE_LIMIT of them, so untrusted input cannot grow it without bound.
 */
const nameCache = new Map<string, string>();
const NAME_CACHE_LIMIT = 4096;

function nameText(key: string, at: At | null): string {
  let text = nameCache.get(key);
  if (text === undefined) {
    if (!key.isWellFormed()) {
      throw new CanonicalizationError(`member name ${JSON.stringify(key)} at \`${pathOf(at)}\` contains a lone surrogate`);
    }
    text = JSON.stringify(key);
    if (nameCache.size < NAME_CACHE_LIMIT) nameCache.set(key, text);
  }
  return text;
}

function describe(value: object): string {
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== null && typeof proto === "object") {
    const ctor: unknown = (proto as { constructor?: unknown }).constructor;
    if (typeof ctor === "function" && typeof ctor.name === "string" && ctor.name !== "") return ctor.name;
  }
  return "unknown prototype";
}

function write(value: unknown, at: At | null, seen: Set<object> | null): string {
  switch (typeof value) {
    case "string":
      if (!value.isWellFormed()) throw new CanonicalizationError(`string at \`${pathOf(at)}\` contains a lone surrogate`);
      return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
    case "number":
      if (!Number.isFinite(value)) throw new CanonicalizationError(`value at \`${pathOf(at)}\` is not finite`);
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
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
  if (value === null) return "null";
  const obj = value as object;
  // Created at the first object: a layout (canonical/layout.ts) writes most members as scalars, one call each.
  const ancestors = seen ?? new Set<object>();
  if (ancestors.has(obj)) throw new CanonicalizationError(`value at \`${pathOf(at)}\` is a circular reference`);
  if (Object.getOwnPropertySymbols(obj).length > 0) {
    throw new CanonicalizationError(`value at \`${pathOf(at)}\` has a symbol-keyed member`);
  }
  ancestors.add(obj);
  let text: string;
  if (Array.isArray(obj)) {
    text = "[";
    for (let i = 0; i < obj.length; i++) {
      if (!Object.hasOwn(obj, i))
        throw new CanonicalizationError(`value at \`${pathOf({ parent: at, key: i })}\` is missing (sparse array)`);
      text += (i > 0 ? "," : "") + write((obj as unknown[])[i], { parent: at, key: i }, ancestors);
    }
    text += "]";
  } else {
    const proto: unknown = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) {
      throw new CanonicalizationError(`value at \`${pathOf(at)}\` is not a plain object (${describe(obj)})`);
    }
    const keys = Object.keys(obj).sort();
    text = "{";
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      text += (i > 0 ? "," : "") + nameText(key, at) + ":" + write((obj as Record<string, unknown>)[key], { parent: at, key }, ancestors);
    }
    text += "}";
  }
  ancestors.delete(obj);
  return text;
}

/**
 * The RFC 8785 canonical JSON text of `value`.
 * @throws CanonicalizationError when `value` is not plain JSON data (see the module comment); the message names the
 *   JSON path of the first offending value, e.g. "value at `$.a[2]` is not finite".
 */
export function canonicalJson(value: unknown): string {
  return write(value, null, null);
}

const utf8 = new TextEncoder();

/** The UTF-8 bytes of {@link canonicalJson}: the JCS body that signatures and hashes cover. */
export function canonicalBytes(value: unknown): Uint8Array {
  return utf8.encode(canonicalJson(value));
}
