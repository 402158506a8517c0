import { IrUnsupportedError } from "../errors.js";
import {
  IR_VERSION,
  OTHERWISE_RULE_ID,
  type ArithOp,
  type CompareKind,
  type CompareOp,
  type IrExpr,
  type PolicyIr,
  type Scalar,
  type Verdict,
} from "./types.js";

/** The third truth value: an absent optional signal, or arithmetic that is not finite. */
const UNKNOWN: unique symbol = Symbol("unknown");
type Value = Scalar | typeof UNKNOWN;
type Signals = Readonly<Record<string, unknown>>;
type Compiled = (signals: Signals) => Value;

export type Decision =
  | { readonly decided: true; readonly verdict: Verdict; readonly ruleId: string; readonly reason: string }
  | { readonly decided: false };

export interface PreparedPolicy {
  readonly ir: PolicyIr;
  /** Signals must already be validated against the bundle's schema. Deterministic, never throws. */
  evaluate(signals: Signals): Decision;
}

/**
 * Compiles the IR to closures once, so a request pays for evaluation only.
 * Throws IrUnsupportedError for an IR this runtime does not understand (newer format, unknown operator).
 */
export function preparePolicy(ir: PolicyIr): PreparedPolicy {
  if (ir.irVersion !== IR_VERSION) {
    throw new IrUnsupportedError(`IR version \`${String(ir.irVersion)}\` is not supported (expected ${IR_VERSION})`);
  }
  const rules = ir.rules.map((rule) => ({ rule, test: compile(rule.when) }));
  const otherwise = ir.otherwise;
  return {
    ir,
    evaluate(signals) {
      for (const { rule, test } of rules) {
        // INVARIANT (first match wins): a rule decides only when its condition is exactly true.
        if (test(signals) === true) {
          return { decided: true, verdict: rule.verdict, ruleId: rule.id, reason: rule.reason };
        }
      }
      if (otherwise === null) return { decided: false };
      return { decided: true, verdict: otherwise.verdict, ruleId: OTHERWISE_RULE_ID, reason: otherwise.reason };
    },
  };
}

function compile(expr: IrExpr): Compiled {
  switch (expr.op) {
    case "lit": {
      const value = expr.value;
      return () => value;
    }
    case "signal": {
      const name = expr.name;
      return (s) => {
        const v = Object.prototype.hasOwnProperty.call(s, name) ? s[name] : undefined;
        return isScalar(v) ? v : UNKNOWN;
      };
    }
    case "present": {
      const name = expr.name;
      return (s) => Object.prototype.hasOwnProperty.call(s, name) && s[name] !== undefined;
    }
    case "not": {
      const arg = compile(expr.arg);
      return (s) => {
        const v = arg(s);
        return v === UNKNOWN ? UNKNOWN : v !== true;
      };
    }
    case "and": {
      const args = expr.args.map(compile);
      return (s) => {
        let result: Value = true;
        for (const arg of args) {
          const v = arg(s);
          if (v === false) return false;
          if (v === UNKNOWN) result = UNKNOWN;
        }
        return result;
      };
    }
    case "or": {
      const args = expr.args.map(compile);
      return (s) => {
        let result: Value = false;
        for (const arg of args) {
          const v = arg(s);
          if (v === true) return true;
          if (v === UNKNOWN) result = UNKNOWN;
        }
        return result;
      };
    }
    case "cmp": {
      const left = compile(expr.left);
      const right = compile(expr.right);
      const key = keyOf(expr.kind);
      const test = comparator(expr.cmp);
      return (s) => {
        const a = key(left(s));
        const b = key(right(s));
        return a === UNKNOWN || b === UNKNOWN ? UNKNOWN : test(a, b);
      };
    }
    case "in": {
      const value = compile(expr.value);
      const key = keyOf(expr.kind);
      const set = new Set<Value>(expr.set.map((v) => key(v)));
      return (s) => {
        const v = key(value(s));
        return v === UNKNOWN ? UNKNOWN : set.has(v);
      };
    }
    case "range": {
      const value = compile(expr.value);
      const min = compile(expr.min);
      const max = compile(expr.max);
      return (s) => {
        const v = value(s);
        const lo = min(s);
        const hi = max(s);
        if (typeof v !== "number" || typeof lo !== "number" || typeof hi !== "number") return UNKNOWN;
        return v >= lo && v <= hi;
      };
    }
    case "str": {
      const left = compile(expr.left);
      const right = compile(expr.right);
      const fn = expr.fn;
      return (s) => {
        const a = left(s);
        const b = right(s);
        if (typeof a !== "string" || typeof b !== "string") return UNKNOWN;
        if (fn === "starts_with") return a.startsWith(b);
        if (fn === "ends_with") return a.endsWith(b);
        return a.includes(b);
      };
    }
    case "matches": {
      const value = compile(expr.value);
      // Same dialect as the signals schema's `pattern` (ajv compiles patterns with the `u` flag).
      const pattern = new RegExp(expr.pattern, "u");
      return (s) => {
        const v = value(s);
        return typeof v === "string" ? pattern.test(v) : UNKNOWN;
      };
    }
    case "arith": {
      const left = compile(expr.left);
      const right = compile(expr.right);
      const fn = arithmetic(expr.fn);
      return (s) => {
        const a = left(s);
        const b = right(s);
        if (typeof a !== "number" || typeof b !== "number") return UNKNOWN;
        const r = fn(a, b);
        return Number.isFinite(r) ? r : UNKNOWN;
      };
    }
    case "neg": {
      const arg = compile(expr.arg);
      return (s) => {
        const v = arg(s);
        return typeof v === "number" ? -v : UNKNOWN;
      };
    }
    case "len": {
      const arg = compile(expr.arg);
      // Code points, as JSON Schema's minLength / maxLength count them.
      return (s) => {
        const v = arg(s);
        return typeof v === "string" ? codePointLength(v) : UNKNOWN;
      };
    }
    default:
      throw new IrUnsupportedError(`IR operator \`${String((expr as { op: unknown }).op)}\` is not supported`);
  }
}

function isScalar(v: unknown): v is Scalar {
  return typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v));
}

/** Maps a value into its comparison domain; a timestamp compares as its instant in milliseconds. */
function keyOf(kind: CompareKind): (v: Value) => Value {
  switch (kind) {
    case "timestamp":
      return (v) => {
        if (typeof v !== "string") return UNKNOWN;
        const ms = Date.parse(v);
        return Number.isNaN(ms) ? UNKNOWN : ms;
      };
    case "number":
      return (v) => (typeof v === "number" ? v : UNKNOWN);
    case "string":
      return (v) => (typeof v === "string" ? v : UNKNOWN);
    case "boolean":
      return (v) => (typeof v === "boolean" ? v : UNKNOWN);
  }
}

/** The comparison operators, shared with the compiler's constant folding so both agree by construction. */
export function comparator(op: CompareOp): (a: Scalar, b: Scalar) => boolean {
  switch (op) {
    case "eq":
      return (a, b) => a === b;
    case "ne":
      return (a, b) => a !== b;
    case "lt":
      return (a, b) => a < b;
    case "le":
      return (a, b) => a <= b;
    case "gt":
      return (a, b) => a > b;
    case "ge":
      return (a, b) => a >= b;
  }
}

/** The arithmetic operators, shared with the compiler's constant folding (results may be non-finite). */
export function arithmetic(fn: ArithOp): (a: number, b: number) => number {
  switch (fn) {
    case "add":
      return (a, b) => a + b;
    case "sub":
      return (a, b) => a - b;
    case "mul":
      return (a, b) => a * b;
    case "div":
      return (a, b) => a / b;
  }
}

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
