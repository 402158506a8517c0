import { CALENDAR_OPERATORS, INSTANT_LIMIT, MAX_INSTANT, MAX_MAGNITUDE, MIN_INSTANT, ZONE_HORIZON, isCalendarOp } from "@writ/runtime";
import type { Span } from "../diagnostics/source.js";
import { printExpr } from "../fmt/print-expr.js";
import { operandsOf, type Expr, type SignalDecl } from "../syntax/ast.js";
import { declaredInterval } from "./domain.js";
import { nextDown, nextUp } from "./number-set.js";

/**
 * Where arithmetic can fault (docs/language.md "Faults") for signals the schema accepts: a divisor whose values
 * include 0 (EVAL-001), or a result whose interval leaves ±(2^53 - 1) (EVAL-002). Interval arithmetic over the
 * declarations, narrowed by the comparisons beside an operand in `and` (and their negations in `or`), since a fault
 * there counts only where they hold: `balance > 0 and amount / balance > 0.5` is quiet. It may warn where no request
 * faults (it does not see that `x - x` is 0), never the other way. Underflow (EVAL-003) is not predicted: it takes
 * inputs nearer 0 than 1e-290. `%` faults as `/` does by 0 and never leaves the range; `abs`, `min` and `max` carry
 * their operands' intervals. A timestamp is its instants in milliseconds and a duration its milliseconds: an instant
 * computed faults beyond ±8.64e15 ms (time.ts in the runtime), which only a duration of hundreds of millennia reaches.
 * A calendar field faults outside its zone table's horizon (EVAL-004); a request's own instants are taken within it,
 * so what warns is arithmetic that moves an instant more than a year past it (docs/language.md, W606, says why).
 */
export interface FaultWarning {
  readonly span: Span;
  readonly message: string;
}

interface Scope {
  readonly signal: (name: string) => SignalDecl | undefined;
  readonly constant: (name: string) => number | undefined;
}

/** The instants a timestamp signal is taken to hold: any RFC 3339 writes, or (for a calendar field) the horizon. */
interface Instants {
  readonly lo: number;
  readonly hi: number;
}
const ALL_INSTANTS: Instants = { lo: MIN_INSTANT, hi: MAX_INSTANT };
const HORIZON_INSTANTS: Instants = { lo: ZONE_HORIZON[0] * 1000, hi: ZONE_HORIZON[1] * 1000 - 1 };
/** How far past the horizon a computed instant may reach before W606 says so: a shift of days or months does not. */
const HORIZON_MARGIN = 366 * 86_400_000;

/**
 * The values a number can take: an interval, and whether 0 is left out of it (`x != 0`); `time`: a timestamp's
 * instants or a duration's milliseconds.
 */
interface Bounds {
  readonly lo: number;
  readonly hi: number;
  readonly nonZero: boolean;
  readonly time?: "instant" | "duration";
}

/** What the comparisons beside an operand say of each signal. */
type Guards = ReadonlyMap<string, Bounds>;

export function faultWarnings(condition: Expr, scope: Scope): FaultWarning[] {
  const warnings: FaultWarning[] = [];
  new Intervals(scope, warnings).of(condition, new Map());
  return warnings;
}

class Intervals {
  constructor(
    private readonly scope: Scope,
    private readonly warnings: FaultWarning[],
    private readonly instants: Instants = ALL_INSTANTS,
  ) {}

  /** The values `e` can take (numbers only), or null when it is not a number or a fault below it was reported. */
  of(e: Expr, guards: Guards): Bounds | null {
    switch (e.kind) {
      case "literal":
        if (typeof e.value !== "number") return null;
        return e.unit === undefined ? point(e.value) : { ...point(e.value), time: "duration" };
      case "ref":
        return this.ref(e.name, guards);
      case "now":
        // The decision instant is one an RFC 3339 timestamp writes, as a timestamp signal's (decisionInstant), and is taken
        // within the zone tables' horizon in a calendar field's argument as a signal's is.
        return this.instant();
      case "call":
        if (isCalendarOp(e.fn.name)) return this.calendar(e, e.fn.name, guards);
        return called(
          e.fn.name,
          e.args.map((a) => this.of(a, guards)),
        );
      case "unary": {
        const b = this.of(e.arg, guards);
        return e.op === "neg" && b ? { lo: -b.hi, hi: -b.lo, nonZero: b.nonZero } : null;
      }
      case "logical":
        e.args.forEach((a, i) => this.of(a, this.narrowed(guards, e.args, i, e.op === "or")));
        return null;
      case "binary":
        return this.binary(e, guards);
      default:
        for (const o of operandsOf(e)) this.of(o, guards);
        return null;
    }
  }

  /** A timestamp signal's instants, and the decision instant's. */
  private instant(): Bounds {
    return { lo: this.instants.lo, hi: this.instants.hi, nonZero: false, time: "instant" };
  }

  private ref(name: string, guards: Guards): Bounds | null {
    const c = this.scope.constant(name);
    if (c !== undefined) return point(c);
    const s = this.scope.signal(name);
    if (s?.type.kind === "timestamp") return this.instant();
    if (!s || (s.type.kind !== "number" && s.type.kind !== "integer" && s.type.kind !== "decimal")) return null;
    const i = declaredInterval(s);
    const nonZero = i.lo > 0 || i.hi < 0 || (i.lo === 0 && !i.loIncl) || (i.hi === 0 && !i.hiIncl);
    const declared = { lo: Math.max(i.lo, -MAX_MAGNITUDE), hi: Math.min(i.hi, MAX_MAGNITUDE), nonZero };
    const guard = guards.get(name);
    return guard ? intersect(declared, guard) : declared;
  }

  private binary(e: Extract<Expr, { kind: "binary" }>, guards: Guards): Bounds | null {
    const l = this.of(e.left, guards);
    const r = this.of(e.right, guards);
    if (e.op !== "add" && e.op !== "sub" && e.op !== "mul" && e.op !== "div" && e.op !== "mod") return null;
    if (l === null || r === null) return null;
    if ((e.op === "div" || e.op === "mod") && r.lo <= 0 && r.hi >= 0 && !r.nonZero) {
      const divisor = printExpr(e.right);
      // A number divisor must also stay away from 0, or the quotient leaves the range (below); a remainder cannot.
      const away = e.op === "mod" || this.whole(e.right) ? "> 0" : ">= 0.01";
      this.warnings.push({
        span: e.span,
        message: `\`${printExpr(e)}\` faults (EVAL-001) when \`${divisor}\` is 0, which the declarations allow: declare the divisor \`${away}\`, or test it in the same condition (\`${divisor} ${away} and ${printExpr(e)} ...\`)`,
      });
      return null;
    }
    if (e.op === "mod") return remainder(l, r);
    if (l.time !== undefined || r.time !== undefined) return this.time(e, l, r);
    const b = arithmetic(e.op, l, r);
    if (e.op === "div" && !Number.isFinite(b.hi)) {
      const divisor = printExpr(e.right);
      this.warnings.push({
        span: e.span,
        message: `\`${printExpr(e)}\` can leave ±9007199254740991 and fault (EVAL-002): the declarations let \`${divisor}\` come as near 0 as a number can; declare a least magnitude for it (such as \`>= 0.01\`)`,
      });
      return null;
    }
    if (b.lo < -MAX_MAGNITUDE || b.hi > MAX_MAGNITUDE) {
      const open = this.unbounded(e);
      const fix =
        open.length > 0 ? `give ${open.map((n) => `\`${n}\``).join(" and ")} tighter bounds in \`signals\`` : "bound its signals tighter";
      this.warnings.push({
        span: e.span,
        message: `\`${printExpr(e)}\` can leave ±9007199254740991 (it ranges from ${show(b.lo)} to ${show(b.hi)} over the declared values) and then faults (EVAL-002): ${fix}, such as \`${b.hi > MAX_MAGNITUDE ? "<= 1000000000" : ">= -1000000000"}\``,
      });
      return null;
    }
    return b;
  }

  /** `+` or `-` on time, exactly in whole milliseconds: an instant (one operand an instant, not subtracted) or a duration. */
  private time(e: Extract<Expr, { kind: "binary" }>, l: Bounds, r: Bounds): Bounds | null {
    const [li, ri] = [l.time === "instant", r.time === "instant"];
    const instant = e.op === "add" ? li !== ri : li && !ri;
    const b = e.op === "add" ? { lo: l.lo + r.lo, hi: l.hi + r.hi } : { lo: l.lo - r.hi, hi: l.hi - r.lo };
    const limit = instant ? INSTANT_LIMIT : MAX_MAGNITUDE;
    if (b.lo >= -limit && b.hi <= limit) return { ...b, nonZero: false, time: instant ? "instant" : "duration" };
    this.warnings.push({
      span: e.span,
      message: instant
        ? `\`${printExpr(e)}\` can leave the instants a date holds (±8.64e15 ms, about 275,000 years either side of 1970) and then faults (EVAL-002): use a shorter duration`
        : `\`${printExpr(e)}\` can leave ±9007199254740991 ms and then faults (EVAL-002): use a shorter duration`,
    });
    return null;
  }

  /**
   * A calendar field: its argument's faults are reported as anywhere; then, with timestamp signals taken within the
   * horizon, an argument that can reach more than HORIZON_MARGIN past it warns (EVAL-004). The field's own values.
   */
  private calendar(e: Extract<Expr, { kind: "call" }>, fn: keyof typeof CALENDAR_OPERATORS, guards: Guards): Bounds | null {
    const arg = e.args[0]!;
    if (this.of(arg, guards) === null) return null;
    const within = new Intervals(this.scope, [], HORIZON_INSTANTS).of(arg, guards);
    if (within !== null && (within.lo < HORIZON_INSTANTS.lo - HORIZON_MARGIN || within.hi > HORIZON_INSTANTS.hi + HORIZON_MARGIN)) {
      this.warnings.push({
        span: e.span,
        message: `\`${printExpr(e)}\` can read an instant beyond its zone table's horizon (1970-01-01 to 2100-01-01 UTC) and then faults (EVAL-004): shift the instant by less than a year`,
      });
      return null;
    }
    const { least, greatest } = CALENDAR_OPERATORS[fn];
    return { lo: least, hi: greatest, nonZero: least > 0 };
  }

  /**
   * The guards for operand `i` of an `and` (or an `or`): what its siblings that compare a signal with a constant say
   * (their negation for `or`), since the operand's fault only counts where none of them is false (true for `or`).
   */
  private narrowed(guards: Guards, args: readonly Expr[], i: number, negate: boolean): Guards {
    let out: Map<string, Bounds> | null = null;
    args.forEach((sibling, j) => {
      if (j === i) return;
      const g = this.guardOf(sibling, negate);
      if (g === null) return;
      out ??= new Map(guards);
      const before = out.get(g.name);
      out.set(g.name, before ? intersect(before, g.bounds) : g.bounds);
    });
    return out ?? guards;
  }

  /** `x op c` (or `c op x`) for a signal `x` and a constant `c`, as the values of `x` where it holds. */
  private guardOf(e: Expr, negate: boolean): { name: string; bounds: Bounds } | null {
    if (e.kind !== "binary") return null;
    const flipped = { lt: "gt", le: "ge", gt: "lt", ge: "le", eq: "eq", ne: "ne" } as const;
    const negated = { lt: "ge", le: "gt", gt: "le", ge: "lt", eq: "ne", ne: "eq" } as const;
    if (!(e.op in flipped)) return null;
    let op = e.op as keyof typeof flipped;
    let [x, c] = [e.left, e.right];
    if (x.kind !== "ref" || this.scope.signal(x.name) === undefined) {
      [x, c] = [e.right, e.left];
      op = flipped[op];
    }
    if (x.kind !== "ref" || this.scope.signal(x.name) === undefined) return null;
    const value = c.kind === "literal" ? c.value : c.kind === "ref" ? this.scope.constant(c.name) : undefined;
    if (typeof value !== "number") return null;
    if (negate) op = negated[op];
    if (this.scope.signal(x.name)?.type.kind === "integer") return { name: x.name, bounds: wholeGuard(op, value) };
    const all = { lo: -Infinity, hi: Infinity, nonZero: false };
    // Strict bounds are kept inclusive: wider, so never claiming a divisor cannot be 0 when it can.
    const bounds: Bounds =
      op === "eq"
        ? point(value)
        : op === "ne"
          ? { ...all, nonZero: value === 0 }
          : op === "lt" || op === "le"
            ? { ...all, hi: value, nonZero: op === "lt" && value === 0 }
            : { ...all, lo: value, nonZero: op === "gt" && value === 0 };
    return { name: x.name, bounds };
  }

  /** Whether `e` is whole: an integer signal or constant, `len(...)`, or `+ - *` of such. */
  private whole(e: Expr): boolean {
    switch (e.kind) {
      case "literal":
        return typeof e.value === "number" && Number.isInteger(e.value);
      case "ref": {
        const c = this.scope.constant(e.name);
        return c !== undefined ? Number.isInteger(c) : this.scope.signal(e.name)?.type.kind === "integer";
      }
      case "call":
        return (
          e.fn.name === "len" ||
          isCalendarOp(e.fn.name) ||
          (["abs", "min", "max"].includes(e.fn.name) && e.args.every((a) => this.whole(a)))
        );
      case "unary":
        return this.whole(e.arg);
      case "binary":
        return e.op !== "div" && this.whole(e.left) && this.whole(e.right);
      default:
        return false;
    }
  }

  /** The signals of `e` whose declaration leaves a side unbounded. */
  private unbounded(e: Expr): string[] {
    if (e.kind === "ref") {
      const s = this.scope.signal(e.name);
      const i = s ? declaredInterval(s) : null;
      return i && (!Number.isFinite(i.lo) || !Number.isFinite(i.hi)) ? [e.name] : [];
    }
    return [...new Set(operandsOf(e).flatMap((o) => this.unbounded(o)))];
  }
}

/** `x op c` of an integer `x`: a strict bound is the next whole number (`seats > 0` is `seats >= 1`). */
function wholeGuard(op: "lt" | "le" | "gt" | "ge" | "eq" | "ne", c: number): Bounds {
  const all = { lo: -Infinity, hi: Infinity, nonZero: false };
  switch (op) {
    case "eq":
      return point(c);
    case "ne":
      return { ...all, nonZero: c === 0 };
    case "lt":
      return widen({ ...all, hi: Number.isInteger(c) ? c - 1 : Math.floor(c) });
    case "le":
      return widen({ ...all, hi: Math.floor(c) });
    case "gt":
      return widen({ ...all, lo: Number.isInteger(c) ? c + 1 : Math.ceil(c) });
    case "ge":
      return widen({ ...all, lo: Math.ceil(c) });
  }
}

/** What a built-in function of numbers gives (`len`, `abs`, `min`, `max`), or null when it is not one or not known. */
function called(fn: string, args: readonly (Bounds | null)[]): Bounds | null {
  const [a, b] = args;
  if (fn === "len") return { lo: 0, hi: MAX_MAGNITUDE, nonZero: false };
  if (a === null || a === undefined) return null;
  if (fn === "abs") {
    const hi = Math.max(-a.lo, a.hi);
    return { lo: a.lo <= 0 && a.hi >= 0 ? 0 : Math.min(Math.abs(a.lo), Math.abs(a.hi)), hi, nonZero: a.nonZero };
  }
  if ((fn !== "min" && fn !== "max") || b === null || b === undefined) return null;
  const pick = fn === "min" ? Math.min : Math.max;
  const lo = pick(a.lo, b.lo);
  const hi = pick(a.hi, b.hi);
  return { lo, hi, nonZero: lo > 0 || hi < 0 };
}

/** `l % r` (truncated: the dividend's sign, less in magnitude than the divisor and no more than the dividend). */
function remainder(l: Bounds, r: Bounds): Bounds {
  const m = Math.max(-r.lo, r.hi);
  return { lo: l.lo < 0 ? Math.max(l.lo, -m) : 0, hi: l.hi > 0 ? Math.min(l.hi, m) : 0, nonZero: false };
}

function widen(b: Bounds): Bounds {
  return { ...b, nonZero: b.lo > 0 || b.hi < 0 };
}

function point(v: number): Bounds {
  return { lo: v, hi: v, nonZero: v !== 0 };
}

function intersect(a: Bounds, b: Bounds): Bounds {
  const lo = Math.max(a.lo, b.lo);
  const hi = Math.min(a.hi, b.hi);
  return { lo, hi, nonZero: a.nonZero || b.nonZero || lo > 0 || hi < 0 };
}

function arithmetic(op: "add" | "sub" | "mul" | "div", l: Bounds, r: Bounds): Bounds {
  // A divisor that comes as near 0 as it likes (`x > 0` of a number) makes the quotient as large.
  if (op === "div" && r.lo <= 0 && r.hi >= 0 && !(l.lo === 0 && l.hi === 0)) return { lo: -Infinity, hi: Infinity, nonZero: false };
  const pairs = [
    [l.lo, r.lo],
    [l.lo, r.hi],
    [l.hi, r.lo],
    [l.hi, r.hi],
  ] as const;
  let lo = Infinity;
  let hi = -Infinity;
  for (const [a, b] of pairs) {
    const c = op === "add" ? a + b : op === "sub" ? a - b : op === "mul" ? a * b : a / b;
    if (Number.isNaN(c)) {
      // ∞ - ∞ or 0 × ∞ at a corner: an unbounded side, not a value.
      lo = Math.min(lo, 0);
      hi = Math.max(hi, 0);
      continue;
    }
    // A corner the double rounded is widened by a step each way, so that an exact result just past ±(2^53 - 1), as
    // -9007199254740991 - 0.0005 is, is never rounded back inside the range and missed.
    const exact = exactly(op, a, b, c);
    lo = Math.min(lo, exact ? c : nextDown(c));
    hi = Math.max(hi, exact ? c : nextUp(c));
  }
  return { lo, hi, nonZero: false };
}

/** Whether the double `c` is exactly `a op b`: TwoSum's error term for a sum, whole operands for the rest. */
function exactly(op: "add" | "sub" | "mul" | "div", a: number, b: number, c: number): boolean {
  if (!Number.isFinite(c)) return true;
  switch (op) {
    case "add":
    case "sub": {
      const y = op === "add" ? b : -b;
      const back = c - a;
      return a - (c - back) + (y - back) === 0;
    }
    case "mul":
      return a === 0 || b === 0 || (Number.isInteger(a) && Number.isInteger(b) && Math.abs(c) <= Number.MAX_SAFE_INTEGER);
    case "div":
      return a === 0 || b === 1 || b === -1;
  }
}

function show(n: number): string {
  return Math.abs(n) >= 1e15 ? n.toExponential(3) : String(n);
}
