/**
 * The values a condition computes with (docs/language.md "Evaluation"): JSON scalars, and *unknown*, the third truth
 * value of Kleene's logic, which an absent optional signal has and which every operator but `present`, `and` and `or`
 * passes on.
 */
export type Scalar = string | number | boolean;

export const UNKNOWN: unique symbol = Symbol("unknown");
export type Value = Scalar | typeof UNKNOWN;

/** The comparison domain decides how operands are compared: timestamps compare as instants. */
export type CompareKind = "number" | "string" | "boolean" | "timestamp";

export function isScalar(v: unknown): v is Scalar {
  return typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v));
}

/** Maps a value into its comparison domain (unknown when it is not of that domain); a timestamp is its instant in ms. */
export const COMPARISON_DOMAINS: Readonly<Record<CompareKind, (v: Value) => Value>> = {
  number: (v) => (typeof v === "number" ? v : UNKNOWN),
  string: (v) => (typeof v === "string" ? v : UNKNOWN),
  boolean: (v) => (typeof v === "boolean" ? v : UNKNOWN),
  timestamp: (v) => {
    if (typeof v !== "string") return UNKNOWN;
    const ms = Date.parse(v);
    return Number.isNaN(ms) ? UNKNOWN : ms;
  },
};

/** Code points, as JSON Schema's minLength / maxLength count them. */
export function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}
