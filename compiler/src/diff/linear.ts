import { COMPARISON_DOMAINS, INSTANT_LIMIT, MAX_MAGNITUDE, UNKNOWN, prepareExpression, type CompareOp, type IrExpr } from "@writ/runtime";
import { Rational } from "../analysis/rational.js";
import { valueAt } from "./truth.js";

/**
 * Sums and differences of signals and constants, as exact linear forms `sum of c_i * x_i + k` over the signals'
 * values, where the runtime computes them exactly: decimal arithmetic (exact), integer arithmetic with whole
 * constants (exact within ±(2^53 - 1), a fault beyond), and instants and durations as milliseconds (`requested_at <
 * opened_at + 30d`, `b - a > 1h`: exact, an instant beyond ECMAScript's dates a fault). A comparison of two such forms
 * is one linear constraint; each `+`, `-` and `*` by a constant on the way is a value that faults out of its range, a
 * linear form of its own. relation.ts makes octagon constraints of those over two signals.
 */
export interface LinearForm {
  /** Coefficients by signal name, none zero. */
  readonly coefficients: ReadonlyMap<string, Rational>;
  readonly constant: Rational;
}

/** An arithmetic result on the way, and the range it must stay in, both ends included. */
export interface Intermediate {
  readonly form: LinearForm;
  readonly min: Rational;
  readonly max: Rational;
}

/** A comparison `left cmp right` read as `form cmp 0`, with the arithmetic results on the way that must stay in range. */
export interface LinearComparison {
  readonly form: LinearForm;
  readonly cmp: CompareOp;
  readonly intermediates: readonly Intermediate[];
}

const MAX = Rational.of(BigInt(MAX_MAGNITUDE));
/** A number's range, and an instant's (time.ts in the runtime). */
const NUMBER_RANGE = { min: MAX.neg(), max: MAX };
const INSTANT_RANGE = { min: Rational.of(BigInt(-INSTANT_LIMIT)), max: Rational.of(BigInt(INSTANT_LIMIT)) };

/** How the signals a form reads compute: `integer` ones with IEEE-754 (exact for whole values), `decimal` exactly. */
export type SignalTypes = (name: string) => "integer" | "decimal" | "timestamp" | "other";

/**
 * `e` as a linear comparison, or null. `rounded`: read `number` arithmetic as if exact too (any number signal, any
 * constant), for a witness search to aim at a boundary it then checks by evaluation (witness.ts), never to decide.
 */
export function linearComparison(e: IrExpr, types: SignalTypes, rounded = false): LinearComparison | null {
  if (e.op !== "cmp" || (e.kind !== "number" && e.kind !== "decimal" && e.kind !== "timestamp")) return null;
  const intermediates: Intermediate[] = [];
  const reader = new Reader(e.kind, rounded ? () => "integer" : types, intermediates, rounded);
  const [left, right] = [reader.form(e.left), reader.form(e.right)];
  if (left === null || right === null) return null;
  return { form: combine(left, right, -1), cmp: e.cmp, intermediates };
}

class Reader {
  constructor(
    private readonly kind: "number" | "decimal" | "timestamp",
    private readonly types: SignalTypes,
    private readonly intermediates: Intermediate[],
    private readonly rounded: boolean,
  ) {}

  /** `time`: inside arithmetic on time, where signals are timestamps and numbers durations, both in milliseconds. */
  form(e: IrExpr, time = this.kind === "timestamp"): LinearForm | null {
    switch (e.op) {
      case "signal": {
        const type = this.types(e.name);
        const fits = time ? type === "timestamp" : this.kind === "decimal" ? type !== "timestamp" && type !== "other" : type === "integer";
        return fits ? { coefficients: new Map([[e.name, Rational.ONE]]), constant: Rational.ZERO } : null;
      }
      case "lit": {
        const c = this.constant(e, time);
        return c === null ? null : { coefficients: new Map(), constant: c };
      }
      case "neg": {
        const inner = this.form(e.arg, time);
        return inner === null ? null : scale(inner, Rational.ONE.neg());
      }
      case "arith": {
        if (e.kind === "time") return this.time(e);
        if (time || (e.kind === "decimal") !== (this.kind === "decimal")) return null;
        const [l, r] = [this.form(e.left), this.form(e.right)];
        if (l === null || r === null) return null;
        let out: LinearForm;
        if (e.fn === "add" || e.fn === "sub") out = combine(l, r, e.fn === "add" ? 1 : -1);
        else if (e.fn === "mul" && l.coefficients.size === 0) out = scale(r, l.constant);
        else if (e.fn === "mul" && r.coefficients.size === 0) out = scale(l, r.constant);
        else return null;
        // On integers the operands are whole (constants included), so every result is, and a double holds it exactly.
        if (this.kind === "number" && !this.rounded && (l.constant.den !== 1n || r.constant.den !== 1n)) return null;
        // Arithmetic on constants alone was folded unless it faults: then the condition is not a relation.
        if (out.coefficients.size === 0) return valueAt(prepareExpression(e), {}) === "fault" ? null : out;
        this.intermediates.push({ form: out, ...NUMBER_RANGE });
        return out;
      }
      default:
        return null;
    }
  }

  /**
   * `+` or `-` on time. A timestamp is a point and a duration a length, so a result whose coefficients sum to 1 is an
   * instant (`a + 30d`, `a - b + c`), to 0 a duration (`b - a`, `30d + 1h`): each is checked against its own range.
   */
  private time(e: IrExpr & { op: "arith" }): LinearForm | null {
    if (e.fn !== "add" && e.fn !== "sub") return null;
    const [l, r] = [this.form(e.left, true), this.form(e.right, true)];
    if (l === null || r === null) return null;
    const out = combine(l, r, e.fn === "add" ? 1 : -1);
    if (out.coefficients.size === 0) return valueAt(prepareExpression(e), {}) === "fault" ? null : out;
    const points = [...out.coefficients.values()].reduce((a, c) => a.add(c), Rational.ZERO);
    this.intermediates.push({ form: out, ...(points.compare(Rational.ONE) === 0 ? INSTANT_RANGE : NUMBER_RANGE) });
    return out;
  }

  /** A literal as the runtime compares it: a decimal as the decimal it writes, a number exactly, an instant in ms. */
  private constant(e: IrExpr, time: boolean): Rational | null {
    const v = valueAt(prepareExpression(e), {});
    if (v === "fault") return null;
    // On time, a number is a duration's milliseconds, a string an instant.
    if (time) {
      const ms = typeof v === "number" ? v : COMPARISON_DOMAINS.timestamp(v);
      return typeof ms === "number" ? Rational.fromDouble(ms) : null;
    }
    const mapped = COMPARISON_DOMAINS[this.kind](v);
    if (mapped === UNKNOWN || typeof mapped !== "number") return null;
    return this.kind === "decimal" ? Rational.fromDecimal(mapped) : Rational.fromDouble(mapped);
  }
}

function combine(a: LinearForm, b: LinearForm, sign: 1 | -1): LinearForm {
  const coefficients = new Map(a.coefficients);
  for (const [name, c] of b.coefficients) {
    const sum = (coefficients.get(name) ?? Rational.ZERO).add(sign > 0 ? c : c.neg());
    if (sum.sign() === 0) coefficients.delete(name);
    else coefficients.set(name, sum);
  }
  return { coefficients, constant: a.constant.add(sign > 0 ? b.constant : b.constant.neg()) };
}

function scale(a: LinearForm, k: Rational): LinearForm {
  if (k.sign() === 0) return { coefficients: new Map(), constant: Rational.ZERO };
  return { coefficients: new Map([...a.coefficients].map(([n, c]) => [n, c.mul(k)])), constant: a.constant.mul(k) };
}
