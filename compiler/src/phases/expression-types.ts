/**
 * The types the type checker gives expressions (type-check.ts), and what the phases after it read of them: a signal's
 * declared type, a literal's, how a type is named in messages, the comparison domain of a type, and the types written
 * as strings of a lexical structure of their own (timestamps, versions, addresses).
 */
import { isIpAddress, isSemver, isTimestamp, type CompareKind } from "@writ/runtime";
import type { Expr, ScalarValue, SignalDecl } from "../syntax/ast.js";

/**
 * `enumOf` remembers which enum a string came from, so `currency == "YEN"` is caught at compile time. A number's
 * `exact` says how it computes: `double` (number signals, quotients, and arithmetic with them: IEEE-754), `decimal`
 * (decimal signals and arithmetic with them: exactly), `flexible` (integer signals, literals, constants, `len`, and
 * `+ - *` of these: exactly beside a decimal, as doubles elsewhere, which for integers is the same).
 */
export type Type =
  | { readonly t: "number"; readonly integer: boolean; readonly exact: "double" | "decimal" | "flexible" }
  | { readonly t: "string"; readonly enumOf?: { readonly name: string; readonly values: readonly string[] } }
  | { readonly t: "boolean" }
  | { readonly t: "timestamp" }
  | { readonly t: "duration" }
  | { readonly t: "semver" }
  | { readonly t: "ip" }
  | { readonly t: "list"; readonly elem: Type | null }
  | { readonly t: "error" };

export interface Typing {
  /** The type of every expression node. */
  readonly types: ReadonlyMap<Expr, Type>;
  /** The comparison domain of each `compare`, `in` and range node (a string literal beside a timestamp is one). */
  readonly kinds: ReadonlyMap<Expr, CompareKind>;
}

export const NUMBER: Type = { t: "number", integer: false, exact: "double" };
export const INTEGER: Type = { t: "number", integer: true, exact: "flexible" };
export const DECIMAL: Type = { t: "number", integer: false, exact: "decimal" };
const FLEXIBLE_NUMBER: Type = { t: "number", integer: false, exact: "flexible" };
export const STRING: Type = { t: "string" };
export const BOOLEAN: Type = { t: "boolean" };
export const TIMESTAMP: Type = { t: "timestamp" };
export const DURATION: Type = { t: "duration" };
export const ERROR: Type = { t: "error" };

export function signalType(s: SignalDecl): Type {
  switch (s.type.kind) {
    case "number":
      return NUMBER;
    case "integer":
      return INTEGER;
    case "decimal":
      return DECIMAL;
    case "string":
      return STRING;
    case "boolean":
      return BOOLEAN;
    case "timestamp":
      return { t: "timestamp" };
    case "semver":
      return { t: "semver" };
    case "ip":
      return { t: "ip" };
    case "enum":
      return { t: "string", enumOf: { name: s.name.name, values: s.type.values.map((v) => v.value) } };
  }
}

export function describeType(t: Type): string {
  switch (t.t) {
    case "number":
      return t.exact === "decimal" ? "decimal" : t.integer ? "integer" : "number";
    case "string":
      return t.enumOf ? `enum \`${t.enumOf.name}\`` : "string";
    case "list":
      return t.elem ? `list of ${describeType(t.elem)}` : "empty list";
    case "error":
      return "invalid";
    default:
      return t.t;
  }
}

/** A literal's type: a duration when it has a unit (`30d`). */
export function scalarType(v: ScalarValue, unit?: string): Type {
  if (unit !== undefined) return DURATION;
  if (typeof v === "number") return Number.isInteger(v) ? INTEGER : FLEXIBLE_NUMBER;
  return typeof v === "string" ? STRING : BOOLEAN;
}

export const isDecimal = (t: Type): boolean => t.t === "number" && t.exact === "decimal";
/** A number a decimal cannot meet: a `number` signal, a quotient, or a computation with one. */
export const isDouble = (t: Type): boolean => t.t === "number" && t.exact === "double";

export function isInteger(t: Type): boolean {
  return t.t === "number" && t.integer;
}

/** The result of `+ - *` on numbers that are not decimals: a double once one operand is. */
export function numeric(types: readonly Type[], integer: boolean): Type {
  if (types.some((t) => t.t === "number" && t.exact === "double")) return NUMBER;
  return integer ? INTEGER : FLEXIBLE_NUMBER;
}

/** Durations compare as their milliseconds: numbers. */
export function kindOf(t: Type): CompareKind | null {
  if (t.t === "duration") return "number";
  return t.t === "number" || t.t === "string" || t.t === "boolean" || t.t === "timestamp" || t.t === "semver" || t.t === "ip" ? t.t : null;
}

/**
 * The types written as strings of a lexical structure of their own: a string literal or constant beside one is read as
 * one (an instant, a version), compared in that type's domain, and refused at compile time when it is not one.
 */
export const LEXICAL: readonly {
  readonly t: "timestamp" | "semver" | "ip";
  readonly valid: (s: string) => boolean;
  readonly code: "E505" | "E511" | "E512";
  readonly refusal: string;
  /** Whether `<` and the like compare it. */
  readonly ordered: boolean;
}[] = [
  {
    t: "timestamp",
    ordered: true,
    valid: isTimestamp,
    code: "E505",
    refusal:
      "is not a timestamp: write an RFC 3339 date and time with an offset, such as `2025-01-31T00:00:00Z` (a real calendar date, no leap second)",
  },
  {
    t: "semver",
    ordered: true,
    valid: isSemver,
    code: "E511",
    refusal:
      "is not a semantic version: write SemVer 2.0.0, such as `2.4.0` or `2.4.0-rc.1` (three numbers, no `v` prefix, no leading zeros)",
  },
  {
    t: "ip",
    ordered: false,
    valid: isIpAddress,
    code: "E512",
    refusal: "is not an IP address: write IPv4 as `203.0.113.7` (no leading zeros) or IPv6 as `2001:db8::7` (no zone)",
  },
];
