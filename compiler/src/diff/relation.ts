import { COMPARISON_OPERATORS, type CompareOp, type IrExpr } from "@writ/runtime";
import { Rational } from "../analysis/rational.js";
import { absentOnly, everythingLike, present } from "../analysis/signal-set.js";
import { FALSE, TRUE, all, any, type Constraint, type LinearTerm } from "./constraint-tree.js";
import { irNodes } from "./ir-operands.js";
import { linearComparison, type LinearForm } from "./linear.js";
import { wholeCompare } from "./monotone.js";
import type { Variable } from "./space.js";

/**
 * A condition relating two signals by sums and differences, `daily_total + amount > LIMIT`, `requested_at >
 * change_window_end`, `coverage - previous_coverage < -5` on integers, as octagon constraints (`±x ± y <= c` on the
 * whole numbers the variables are held as: integers, a decimal's units, milliseconds) for each of its four values:
 * true and false where both are present, every intermediate result is in range and the comparison holds or not; a
 * fault where some intermediate result is out of range (its own signals present); unknown otherwise. The search
 * decides these by octagon closure (search.ts), exactly. Null when the condition is not of this form: more than two
 * signals, numbers held as doubles, or coefficients whose magnitudes differ once in units (`x + 2 * y`).
 */
export type RelationCases = readonly [Constraint, Constraint, Constraint, Constraint];

export function relationCases(e: IrExpr, variableOf: (signal: string) => Variable): RelationCases | null {
  const types = (name: string) => {
    const v = variableOf(name);
    if (v.kind === "timestamp") return "timestamp" as const;
    if (v.kind !== "number" || !v.numbers.whole) return "other" as const;
    return v.numbers.scale === 0 ? ("integer" as const) : ("decimal" as const);
  };
  const comparison = linearComparison(e, types);
  if (comparison === null) return null;
  const compared = inUnits(comparison.form, variableOf);
  const steps = comparison.intermediates.map((f) => inUnits(f.form, variableOf));
  if (compared === null || steps.some((s) => s === null)) return null;
  // Every signal read, also one whose terms cancel (`x + y - y`, `b - b`): absent, it makes the comparison unknown.
  const variables = [...new Set(irNodes(e).flatMap((n) => (n.op === "signal" ? [variableOf(n.name)] : [])))];
  const bounds = comparison.intermediates;
  // A step's bounds are on its value; its unit form is that value divided by the form's magnitude (`2x + 2y` is held
  // as `x + y`, a decimal's sum in units), so the bounds are divided alike.
  const limits = steps.map((s, i) => ({ max: bounds[i]!.max.div(s!.magnitude), min: bounds[i]!.min.div(s!.magnitude) }));
  const inRange = steps.map((s, i) => all([linear(s!, "le", limits[i]!.max), linear(s!, "ge", limits[i]!.min)]));
  const outOfRange = steps.map((s, i) => any([linear(s!, "gt", limits[i]!.max), linear(s!, "lt", limits[i]!.min)]));
  const absent = (vs: readonly Variable[]): Constraint =>
    any(vs.map((v) => ({ kind: "states", variable: v, allowed: absentOnly(v.universe.values) })));
  const allPresent = all(variables.map(presentIn));
  const fault = any(outOfRange);
  const noFault = all(steps.map((s, i) => any([absent(s!.terms.map((t) => t.variable)), inRange[i]!])));
  const holds = (cmp: CompareOp) => all([allPresent, ...inRange, linear(compared, cmp, Rational.ZERO)]);
  return [holds(comparison.cmp), holds(COMPARISON_OPERATORS[comparison.cmp].negation), all([noFault, absent(variables)]), fault];
}

/**
 * A linear form in the variables' units, scaled so its coefficients are ±1: `sum of sign * n + constant`, which is the
 * form's value divided by `magnitude` (positive).
 */
interface UnitForm {
  readonly terms: readonly LinearTerm[];
  readonly constant: Rational;
  readonly magnitude: Rational;
}

function inUnits(form: LinearForm, variableOf: (signal: string) => Variable): UnitForm | null {
  const scaled = [...form.coefficients].map(([name, c]) => {
    const variable = variableOf(name);
    return { variable, c: c.div(Rational.of(10n ** BigInt(variable.numbers.scale))) };
  });
  if (scaled.length > 2 || scaled.some((s) => !s.variable.numbers.whole)) return null;
  if (new Set(scaled.map((s) => s.variable)).size !== scaled.length) return null;
  const magnitude = scaled[0] ? (scaled[0].c.sign() < 0 ? scaled[0].c.neg() : scaled[0].c) : Rational.ONE;
  const terms: LinearTerm[] = [];
  for (const { variable, c } of scaled) {
    const unit = c.div(magnitude);
    if (unit.compare(Rational.ONE) !== 0 && unit.compare(Rational.ONE.neg()) !== 0) return null;
    terms.push({ variable, sign: unit.sign() > 0 ? 1 : -1 });
  }
  return { terms, constant: form.constant.div(magnitude), magnitude };
}

/**
 * `form cmp c` over whole numbers, as constraints `sum <= bound`: one term is a set of the variable's values, two a
 * linear constraint the search closes over.
 */
function linear(form: UnitForm, cmp: CompareOp, c: Rational): Constraint {
  // sum cmp c - constant, with the sum whole: `< r` is `<= ceil(r) - 1`, and so on.
  const r = c.sub(form.constant);
  // Terms that cancel (`b - b`): a comparison of constants.
  if (form.terms.length === 0) return COMPARISON_OPERATORS[cmp].test(0, r.sign()) ? TRUE : FALSE;
  if (form.terms.length === 1) {
    const [{ variable, sign }] = form.terms as [LinearTerm];
    const values = wholeCompare(sign > 0 ? cmp : COMPARISON_OPERATORS[cmp].converse, sign > 0 ? r : r.neg());
    return { kind: "states", variable, allowed: present(values) };
  }
  const le = (bound: bigint): Constraint => ({ kind: "linear", terms: form.terms, bound });
  const ge = (bound: bigint): Constraint => ({
    kind: "linear",
    terms: form.terms.map((t) => ({ ...t, sign: -t.sign as 1 | -1 })),
    bound: -bound,
  });
  switch (cmp) {
    case "le":
      return le(r.floor());
    case "lt":
      return le(r.ceil() - 1n);
    case "ge":
      return ge(r.ceil());
    case "gt":
      return ge(r.floor() + 1n);
    case "eq":
      return r.den === 1n ? all([le(r.num), ge(r.num)]) : FALSE;
    case "ne":
      // A whole sum is never a fraction: `!=` then holds for every present pair.
      return r.den === 1n ? any([le(r.num - 1n), ge(r.num + 1n)]) : all(form.terms.map((t) => presentIn(t.variable)));
  }
}

/** The variable present, with any value. */
function presentIn(v: Variable): Constraint {
  return { kind: "states", variable: v, allowed: present(everythingLike(v.universe.values)) };
}
