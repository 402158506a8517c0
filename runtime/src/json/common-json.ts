/**
 * The fast path of `parseStrictJson` (strict-parse.ts): V8's native JSON.parse, taken only where its answer is provably
 * the strict parser's, which then never runs. Untrusted request bodies are parsed on every request, and the strict
 * parser, written in JavaScript, costs several times the native one. The checks below answer null (the strict parser
 * decides) wherever JSON.parse would differ: duplicate keys, lone or escaped surrogates, numbers the strict parser
 * refuses, rewrites or records, nesting deeper than `maxDepth`, and anything JSON.parse refuses (docs/runtime.md,
 * "Strict JSON").
 *
 * INVARIANT (the fast path is the strict parser's answer): when this answers a value, the strict parser answers an equal
 * one (runtime/test/json/common-json.test.ts, on arbitrary and adversarial texts).
 */
import { carriesExactly } from "./exact-number.js";

/** A string token of a text JSON.parse accepted: quotes around runs of plain characters and escapes (unrolled). */
const STRING = /"[^"\\]*(?:\\.[^"\\]*)*"/g;
/**
 * Longer texts go to the strict parser: request bodies are far shorter, and a regular expression's backtracking stack
 * over a string of many megabytes of escapes would overflow.
 */
const FAST_PATH_MAX_LENGTH = 1 << 20;
/** A number token of such a text once its strings are blanked: its only digits, `-`, `.`, `e` and `+` are numbers'. */
const NUMBER = /-?\d[\d.eE+-]*/g;
const ESCAPED_SURROGATE = /\\u[dD][89a-fA-F]/;

/** The value of `text` when it is JSON the strict parser accepts as it is (see above); null when the strict parser must decide. */
export function parseCommonJson(text: string, maxDepth: number): { readonly value: unknown } | null {
  if (text.length > FAST_PATH_MAX_LENGTH || !text.isWellFormed() || ESCAPED_SURROGATE.test(text)) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const bare = text.replace(STRING, '""');
  for (const [literal] of bare.matchAll(NUMBER)) {
    const n = Number(literal);
    if (!(Math.abs(n) <= Number.MAX_SAFE_INTEGER) || (n === 0 && literal !== "0") || !carriesExactly(literal, n)) return null;
  }
  const keys = objectKeys(value, maxDepth);
  return keys !== -1 && keys === count(bare, ":") ? { value } : null;
}

/** How many keys the objects of `value` have in all; -1 when containers nest deeper than `maxDepth`. */
function objectKeys(value: unknown, maxDepth: number): number {
  if (typeof value !== "object" || value === null) return 0;
  let keys = 0;
  const stack: { readonly container: object; readonly depth: number }[] = [{ container: value, depth: 0 }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { container, depth } = next;
    if (depth >= maxDepth) return -1;
    const items: unknown[] = Array.isArray(container) ? container : Object.values(container);
    if (!Array.isArray(container)) keys += items.length;
    for (const item of items) if (typeof item === "object" && item !== null) stack.push({ container: item, depth: depth + 1 });
  }
  return keys;
}

function count(text: string, char: string): number {
  let n = 0;
  for (let at = text.indexOf(char); at !== -1; at = text.indexOf(char, at + 1)) n += 1;
  return n;
}
