/**
 * The values a condition computes with (docs/language.md "Evaluation"): JSON scalars, and *unknown*, the third truth
 * value of Kleene's logic, which an absent optional signal has and which every operator but `present`, `and` and `or`
 * passes on.
 */
import { ipAddress } from "../signals/ip.js";
import { semverKey } from "../signals/semver.js";
import { instantText } from "./time.js";

export type Scalar = string | number | boolean;

export const UNKNOWN: unique symbol = Symbol("unknown");
/**
 * An instant a decision computes (`now`, `timestamp ± duration`): its milliseconds, read by every comparison without
 * parsing, and its RFC 3339 text, written only when an explanation shows it. A timestamp a signal or a literal gives
 * stays its text. `decision`: the decision instant, written as an attestation's `issuedAt` is (time.ts
 * `decisionInstant`); otherwise as time.ts `instantText` writes a computed one.
 */
export class Instant {
  constructor(
    readonly ms: number,
    private readonly decision = false,
  ) {}

  get text(): string {
    return this.decision ? new Date(this.ms).toISOString() : instantText(this.ms)!;
  }
}

/** A bigint is a decimal computed exactly: its units at the places its node has (exact.ts, scale.ts); in the `semver` comparison domain, a version's precedence key (semver.ts), in the `ip` domain an address (ip.ts). */
export type Value = Scalar | bigint | Instant | typeof UNKNOWN;
/** A value that is not unknown. */
export type Known = Exclude<Value, typeof UNKNOWN>;

/** The comparison domain decides how operands are compared: timestamps as instants, decimals exactly, versions by precedence. */
export type CompareKind = "number" | "string" | "boolean" | "timestamp" | "decimal" | "semver" | "ip";

export function isScalar(v: unknown): v is Scalar {
  return typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v));
}

/** Maps a value into its comparison domain (unknown when it is not of that domain); a timestamp is its instant in ms. */
export const COMPARISON_DOMAINS: Readonly<Record<CompareKind, (v: Value) => Value>> = {
  number: (v) => (typeof v === "number" ? v : UNKNOWN),
  /**
   * A decimal given as a number (a signal, a literal) is its double: two decimals that JSON numbers carry exactly
   * compare as their doubles do, since distinct ones never share a double. A comparison with a decimal computed
   * exactly (a bigint) maps both sides to units instead (apply.ts `decimalDomain`).
   */
  decimal: (v) => (typeof v === "number" ? v : UNKNOWN),
  string: (v) => (typeof v === "string" ? v : UNKNOWN),
  boolean: (v) => (typeof v === "boolean" ? v : UNKNOWN),
  timestamp: (v) => {
    if (v instanceof Instant) return v.ms;
    if (typeof v !== "string") return UNKNOWN;
    const ms = Date.parse(v);
    return Number.isNaN(ms) ? UNKNOWN : ms;
  },
  /** A version is its precedence key (semver.ts): build metadata aside, `1.0.0-rc.1 < 1.0.0`. */
  semver: (v) => (typeof v === "string" ? (semverKey(v) ?? UNKNOWN) : UNKNOWN),
  /** An address is its point of the 128-bit space (ip.ts): `10.0.0.1` is `::ffff:10.0.0.1`. */
  ip: (v) => (typeof v === "string" ? (ipAddress(v) ?? UNKNOWN) : UNKNOWN),
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
