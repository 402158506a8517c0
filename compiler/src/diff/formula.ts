import {
  COMPARISON_DOMAINS,
  COMPARISON_OPERATORS,
  UNKNOWN,
  expressionText,
  irOperands,
  isScalar,
  prepareExpression,
  type CompareOp,
  type IrExpr,
  type IrNode,
  type Scalar,
  type Value,
} from "@writ/runtime";
import { ChoiceSet } from "../analysis/choice-set.js";
import { Language } from "../analysis/language.js";
import { NumberSet } from "../analysis/number-set.js";
import { absentOnly, everythingLike, nothingLike, present, type SignalSet, type Values } from "../analysis/signal-set.js";
import { StringSet } from "../analysis/string-set.js";
import { BEYOND, fieldRange, isCalendarNode, weekMinutesWhere, WEEK_MINUTES } from "./calendar.js";
import { irNodes } from "./ir-operands.js";
import { canFaultOver } from "./fault-free.js";
import { monotoneSets, monotoneView } from "./monotone.js";
import type { OpaqueAtom } from "./opaque-atom.js";
import { isOrdered, orderedUnmodelled } from "./ordered-domain.js";
import { piecewise, rangeAsComparisons } from "./piecewise.js";
import { relationCases, type RelationCases } from "./relation.js";
import { inUnits, type NumberDomain } from "./number-domain.js";
import type { Side, SignalSpace, Variable } from "./space.js";
import { E, EACH, F, T, U, truthAt, valueAt, type Mask } from "./truth.js";

export { E, F, T, U, type Mask } from "./truth.js";
export type { OpaqueAtom } from "./opaque-atom.js";

/**
 * A rule's condition as `writ diff` reasons about it. A `leaf` is a condition on one variable, given exactly as the
 * states where it is true, false and unknown; an `opaque` atom is one the domains do not model (arithmetic between
 * signals, a comparison of two signals, a pattern that is not a regular language refa models), kept whole as a
 * three-valued unknown of its own, the same atom wherever it is written the same way on the same variables.
 */
export type Formula =
  | { readonly kind: "const"; readonly truth: Mask }
  /** The states where it is true, false, unknown and a fault. */
  | { readonly kind: "leaf"; readonly variable: Variable; readonly sets: LeafSets }
  | { readonly kind: "opaque"; readonly atom: OpaqueAtom }
  /** A fault where the atom `faults` is true (its arithmetic faults), else the value of `arg`. */
  | { readonly kind: "guarded"; readonly faults: OpaqueAtom; readonly arg: Formula }
  /** A condition relating two signals by sums and differences: where it is true, false, unknown and a fault (relation.ts). */
  | { readonly kind: "relation"; readonly cases: RelationCases }
  | { readonly kind: "and" | "or"; readonly args: readonly Formula[] }
  /** The value of `arg` mapped through `map` (indexed T, F, U, E): `not`, or a comparison of a condition with a constant. */
  | { readonly kind: "relabel"; readonly arg: Formula; readonly map: Relabelling }
  /** `a == b` for two conditions: a fault if either is, unknown if either is, else whether they agree. */
  | { readonly kind: "iff"; readonly left: Formula; readonly right: Formula }
  /** A condition on several finite-choice variables, by its value for every combination of their states. */
  | { readonly kind: "table"; readonly rows: readonly TableRow[] };

export type LeafSets = readonly [SignalSet, SignalSet, SignalSet, SignalSet];
export type Relabelling = readonly [Mask, Mask, Mask, Mask];

export interface TableRow {
  readonly cells: readonly { readonly variable: Variable; readonly state: SignalSet }[];
  readonly truth: Mask;
}

/** Combinations a table may list: past it, a condition on several choices is kept opaque. */
const MAX_TABLE_ROWS = 256;

const NOT: Relabelling = [F, T, U, E];

/** The condition `e` of the `side` version over the variables of `space`. */
export function formulaOf(e: IrExpr, side: Side, space: SignalSpace): Formula {
  return new Classifier(side, space).formula(e);
}

class Classifier {
  constructor(
    private readonly side: Side,
    private readonly space: SignalSpace,
  ) {}

  formula(e: IrExpr): Formula {
    const signals = signalsOf(e);
    if (signals.size === 0) return { kind: "const", truth: truthAt(prepareExpression(e), {}) };
    switch (e.op) {
      case "and":
      case "or":
        return { kind: e.op, args: e.args.map((a) => this.formula(a)) };
      case "not":
        return { kind: "relabel", arg: this.formula(e.arg), map: NOT };
      case "cmp":
        // Operands of a boolean comparison are conditions: literals, boolean signals or comparisons.
        if (e.kind === "boolean") return this.booleanComparison(e);
        break;
      case "in":
        if (e.kind === "boolean") {
          const members = new Set(e.set);
          const map = (v: boolean): Mask => (members.has(v) ? T : F);
          return { kind: "relabel", arg: this.formula(e.value), map: [map(true), map(false), U, E] };
        }
        break;
    }
    const pieces = piecewise(e);
    if (pieces !== null) return this.formula(pieces);
    if (irNodes(e).some(isCalendarNode)) return this.calendar(e, signals);
    if (signals.size === 1) {
      const variable = this.space.variableOf(this.side, [...signals][0]!);
      const sets = leafSets(e, variable);
      if (!("unsupported" in sets)) return { kind: "leaf", variable, sets };
      // Sums that read the signal more than once, or time (`x + x > 4`, `b - b > 6`, `requested_at - 1h > T`): a
      // linear form of one signal where the runtime computes exactly (relation.ts).
      const cases = relationCases(e, () => variable);
      return cases !== null ? { kind: "relation", cases } : this.opaque(e, signals, sets.unsupported);
    }
    const comparisons = rangeAsComparisons(e);
    if (comparisons !== null) return this.formula(comparisons);
    const cases = relationCases(e, (name) => this.space.variableOf(this.side, name));
    if (cases !== null) return { kind: "relation", cases };
    const term = this.termComparison(e, signals);
    if (term !== null) return term;
    return this.table(e, signals) ?? this.opaque(e, signals, "it relates two or more signals");
  }

  /**
   * A condition with calendar fields (calendar.ts): a comparison, `in` or range of one field with constants, on a
   * signal the fields alone read, is a leaf on the signal's minute-of-the-week variable; anything else is opaque.
   */
  private calendar(e: IrExpr, signals: ReadonlySet<string>): Formula {
    const name = [...signals][0]!;
    const field = calendarTest(e);
    const reading =
      signals.size > 1 ? "it relates two or more signals" : field === null ? undefined : this.space.calendarReading(name, field.node);
    if (typeof reading === "object" && field !== null) {
      const variable = this.space.calendarVariable(reading, this.space.variableOf(this.side, name));
      const week = NumberSet.span(true, 0, WEEK_MINUTES - 1);
      const t = weekMinutesWhere(field.fn, field.values);
      const nothing = NumberSet.empty(true);
      return {
        kind: "leaf",
        variable,
        sets: [
          { absent: false, values: t },
          { absent: false, values: t.complement().intersect(week) },
          { absent: true, values: nothing },
          { absent: false, values: NumberSet.points(true, [BEYOND]) },
        ],
      };
    }
    const why = typeof reading === "string" ? reading : "this form of condition on a calendar field is not modelled";
    // Fields of a zone whose table changed are not the same function in both versions: their atoms are not shared.
    const changed = irNodes(e).some((n) => n.op === "calendar" && this.space.tableDiffers(n.zone));
    return this.opaque(e, signals, `a calendar field read so is not modelled: ${why}`, changed ? this.side : "");
  }

  /** `e` over enums and booleans only (`data_region != destination_region`): every combination evaluated. */
  private table(e: IrExpr, signals: ReadonlySet<string>): Formula | null {
    const columns = [...signals].map((name) => ({ name, variable: this.space.variableOf(this.side, name) }));
    let combinations: { cells: TableRow["cells"]; signals: Record<string, Scalar> }[] = [{ cells: [], signals: {} }];
    for (const { name, variable } of columns) {
      const values = variable.universe.values;
      // Addresses and versions are pieces of an ordered domain: two in one piece need not be equal.
      if (!(values instanceof ChoiceSet) || variable.kind !== "choice") return null;
      const states: { state: SignalSet; value?: Scalar }[] = values
        .members()
        .map((v) => ({ state: present(new ChoiceSet(values.universe, new Set([v]))), value: v }));
      if (variable.universe.absent) states.push({ state: absentOnly(values) });
      combinations = combinations.flatMap((c) =>
        states.map((s) => ({
          cells: [...c.cells, { variable, state: s.state }],
          signals: s.value === undefined ? c.signals : { ...c.signals, [name]: s.value },
        })),
      );
      if (combinations.length > MAX_TABLE_ROWS) return null;
    }
    const evaluate = prepareExpression(e);
    return { kind: "table", rows: combinations.map((c) => ({ cells: c.cells, truth: truthAt(evaluate, c.signals) })) };
  }

  /** `a == b` or `a != b` between conditions (a boolean signal is one). */
  private booleanComparison(e: IrNode<"cmp">): Formula {
    const [left, right] = [this.formula(e.left), this.formula(e.right)];
    const eq: Formula =
      left.kind === "const"
        ? byConstant(right, left.truth)
        : right.kind === "const"
          ? byConstant(left, right.truth)
          : { kind: "iff", left, right };
    if (e.cmp === "eq") return eq;
    if (e.cmp === "ne") return { kind: "relabel", arg: eq, map: NOT };
    return this.opaque(e, signalsOf(e), "it orders booleans");
  }

  /** `salt`: what else tells the atom apart (the side, for fields of a zone whose table changed). */
  private opaque(e: IrExpr, signals: ReadonlySet<string>, why: string, salt = ""): Formula {
    const variables = [...signals].map((s) => this.space.variableOf(this.side, s));
    const key = `${JSON.stringify(e)}|${variables.map((v) => v.id).join(",")}${salt}`;
    const reason = `\`${expressionText(e)}\`: ${why}`;
    return { kind: "opaque", atom: { key, expr: e, side: this.side, variables, reason, faults: this.faultAtom(e, variables, why) } };
  }

  /**
   * Arithmetic on several `number` signals compared with a constant, `daily_total + amount > LIMIT`: a condition on a
   * variable for the arithmetic's value (SignalSpace.termVariable), shared by every condition on the same term, so
   * `> LIMIT` and `>= LIMIT` of it are related exactly; a fault where its arithmetic faults. Null for other forms.
   */
  private termComparison(e: IrExpr, signals: ReadonlySet<string>): Formula | null {
    if (e.op !== "cmp" || e.kind !== "number") return null;
    const leftReads = signalsOf(e.left).size > 0;
    if (leftReads === signalsOf(e.right).size > 0) return null;
    const [subject, other] = leftReads ? [e.left, e.right] : [e.right, e.left];
    if (subject.op !== "arith") return null;
    const c = valueAt(prepareExpression(other), {});
    const variables = [...signals].map((name) => this.space.variableOf(this.side, name));
    if (typeof c !== "number" || variables.some((v) => v.kind !== "number")) return null;
    const op: CompareOp = leftReads ? e.cmp : COMPARISON_OPERATORS[e.cmp].converse;
    const variable = this.space.termVariable(subject, variables);
    const values = variable.universe.values;
    const leaf: Formula = {
      kind: "leaf",
      variable,
      sets: [
        present(NumberSet.compare(false, op, c)),
        present(NumberSet.compare(false, COMPARISON_OPERATORS[op].negation, c)),
        absentOnly(values),
        present(nothingLike(values)),
      ],
    };
    const faults = this.faultAtom(e, variables, "its value is rounded arithmetic on several signals");
    return faults === null ? leaf : { kind: "guarded", faults, arg: leaf };
  }

  /** The atom true where `e`'s arithmetic faults (see OpaqueAtom.faults), or null when it cannot. */
  private faultAtom(e: IrExpr, variables: readonly Variable[], why: string): OpaqueAtom | null {
    if (!canFaultOver(e, (name) => this.space.variableOf(this.side, name))) return null;
    const terms = outermostArithmetic(e);
    const expr: IrExpr = terms.length === 1 ? terms[0]! : { op: "and", args: terms };
    const key = `faults ${JSON.stringify(terms)}|${variables.map((v) => v.id).join(",")}`;
    const reason = `whether \`${terms.map((t) => expressionText(t)).join("`, `")}\` faults: ${why}`;
    return { key, expr, side: this.side, variables, reason, faults: null };
  }
}

/** The `+ - * /` terms and calendar fields of `e` not inside another, in order: what `e`'s faults are. */
function outermostArithmetic(e: IrExpr): IrExpr[] {
  return e.op === "arith" || e.op === "calendar" ? [e] : irOperands(e).flatMap(outermostArithmetic);
}

/** `field op c`, `field in [..]` or `field in lo..hi` of one calendar field and constants: the field and the values that hold. */
function calendarTest(e: IrExpr): { fn: IrNode<"calendar">["fn"]; values: NumberSet; node: IrNode<"calendar"> } | null {
  const of = (subject: IrExpr, values: NumberSet | null) =>
    isCalendarNode(subject) && values !== null ? { fn: subject.fn, values: values.intersect(fieldRange(subject.fn)), node: subject } : null;
  const number = (x: IrExpr): number | null => {
    if (signalsOf(x).size > 0) return null;
    const v = constant(x);
    return typeof v === "number" ? v : null;
  };
  switch (e.op) {
    case "cmp": {
      if (e.kind !== "number") return null;
      const [l, r] = [number(e.left), number(e.right)];
      if (r !== null) return of(e.left, NumberSet.compare(true, e.cmp, r));
      if (l !== null) return of(e.right, NumberSet.compare(true, COMPARISON_OPERATORS[e.cmp].converse, l));
      return null;
    }
    case "in":
      return e.kind === "number"
        ? of(
            e.value,
            NumberSet.points(
              true,
              e.set.filter((v): v is number => typeof v === "number"),
            ),
          )
        : null;
    case "range": {
      const [lo, hi] = [number(e.min), number(e.max)];
      return lo !== null && hi !== null ? of(e.value, NumberSet.span(true, lo, hi)) : null;
    }
    default:
      return null;
  }
}

/** `x == c` for a condition x and a constant truth c: true where x has c's value, unknown where either is, a fault where x is. */
function byConstant(x: Formula, c: Mask): Formula {
  if (c === U) return { kind: "relabel", arg: x, map: [U, U, U, E] };
  if (c === E) return { kind: "const", truth: E };
  return { kind: "relabel", arg: x, map: c === T ? [T, F, U, E] : [F, T, U, E] };
}

export function signalsOf(e: IrExpr): Set<string> {
  return new Set(irNodes(e).flatMap((n) => (n.op === "signal" || n.op === "present" ? [n.name] : [])));
}

type Sets = LeafSets | { readonly unsupported: string };

/**
 * The states of `variable` where `e` (which reads only that variable's signal) is true, false, unknown and a fault.
 * Over a finite choice every value is evaluated; otherwise the forms listed in docs/compiler.md are modelled exactly.
 */
function leafSets(e: IrExpr, variable: Variable): Sets {
  const universe = variable.universe.values;
  // Every operand of a condition on one signal is computed (only `and` and `or` skip one): a constant that faults
  // makes the whole a fault, whatever the signal's state.
  if (irNodes(e).some((n) => signalsOf(n).size === 0 && valueAt(prepareExpression(n), {}) === "fault")) {
    const none = { absent: false, values: nothingLike(universe) };
    return [none, none, none, { absent: true, values: everythingLike(universe) }];
  }
  const whenAbsent = truthAt(prepareExpression(e), {});
  const ordered = isOrdered(variable.kind) ? orderedUnmodelled(e) : null;
  if (ordered !== null) return { unsupported: ordered };
  if (universe instanceof ChoiceSet) return choiceSets(e, variable, universe, whenAbsent);
  const present = presentSets(e, universe, variable.numbers);
  if (present !== null && "unsupported" in present) return present;
  // null: unknown for every present value too (a constant operand that is not a value of the comparison's domain).
  const [t, f, u, x] = present ?? [nothingLike(universe), nothingLike(universe), everythingLike(universe)];
  const absentIn = (m: Mask): boolean => whenAbsent === m;
  return [
    { absent: absentIn(T), values: t },
    { absent: absentIn(F), values: f },
    { absent: absentIn(U), values: u ?? nothingLike(universe) },
    { absent: absentIn(E), values: x ?? nothingLike(universe) },
  ];
}

function choiceSets(e: IrExpr, variable: Variable, universe: ChoiceSet, whenAbsent: Mask): Sets {
  const name = signalName(variable, e);
  const evaluate = prepareExpression(e);
  const by = new Map<Mask, Set<(typeof universe.universe)[number]>>(EACH.map((m) => [m, new Set()]));
  for (const v of universe.universe) by.get(truthAt(evaluate, { [name]: v }))!.add(v);
  const set = (m: Mask): SignalSet => ({ absent: whenAbsent === m, values: new ChoiceSet(universe.universe, by.get(m)!) });
  return [set(T), set(F), set(U), set(E)];
}

/** The signal `e` reads (the variable's name on the side the expression comes from). */
function signalName(variable: Variable, e: IrExpr): string {
  return [...signalsOf(e)][0] ?? variable.names.new ?? variable.names.old!;
}

/**
 * For a present value: where `e` is true, false, and (for arithmetic) a fault; never unknown for the forms modelled.
 * Null when it is unknown for every value. `domain`: how the variable's numbers are held, when it has numbers.
 */
function presentSets(
  e: IrExpr,
  universe: Values,
  domain: NumberDomain,
): readonly [Values, Values, Values?, Values?] | null | { readonly unsupported: string } {
  const whole = universe instanceof NumberSet && universe.whole;
  // Numbers held as they are compared: doubles, or whole numbers at scale 0 (integers, instants).
  const direct = universe instanceof NumberSet && !inUnits(domain);
  const both = (t: Values): readonly [Values, Values] => [t, t.complement()];
  switch (e.op) {
    case "signal":
      break;
    case "present":
      return [everythingLike(universe), nothingLike(universe)];
    case "cmp": {
      // A value compared with itself (`x <= x`): the same for every present value.
      if (isPlain(e.left) && JSON.stringify(e.left) === JSON.stringify(e.right)) {
        const t = COMPARISON_OPERATORS[e.cmp].test(0, 0) ? everythingLike(universe) : nothingLike(universe);
        return [t, t.complement()];
      }
      const [leftReads, rightReads] = [signalsOf(e.left).size > 0, signalsOf(e.right).size > 0];
      if (leftReads === rightReads) break;
      const [subject, other] = leftReads ? [e.left, e.right] : [e.right, e.left];
      const op: CompareOp = leftReads ? e.cmp : COMPARISON_OPERATORS[e.cmp].converse;
      const c = COMPARISON_DOMAINS[e.kind](constant(other));
      if (c === UNKNOWN) return null;
      if (subject.op === "signal" && direct && typeof c === "number") {
        return [NumberSet.compare(whole, op, c), NumberSet.compare(whole, COMPARISON_OPERATORS[op].negation, c)];
      }
      if (subject.op === "signal" && universe instanceof StringSet && typeof c === "string" && (op === "eq" || op === "ne")) {
        const is = new StringSet(Language.words([c]), null);
        return op === "eq" ? both(is) : [is.complement(), is];
      }
      if (isLength(subject) && universe instanceof StringSet && typeof c === "number") {
        return [
          StringSet.ofLengths(NumberSet.compare(true, op, c)),
          StringSet.ofLengths(NumberSet.compare(true, COMPARISON_OPERATORS[op].negation, c)),
        ];
      }
      if ((e.kind === "number" || e.kind === "decimal") && typeof c === "number")
        return chainSets(subject, universe, domain, e.kind, op, [c]) ?? { unsupported: unmodelled(e) };
      break;
    }
    case "in": {
      // Versions and addresses compare by their keys (precedence, the 128-bit address): their own domain decides them.
      if (isOrdered(e.kind)) break;
      const toDomain = COMPARISON_DOMAINS[e.kind];
      const members = e.set.map(toDomain).filter((v): v is Exclude<Value, typeof UNKNOWN> => v !== UNKNOWN);
      const numbers = members.filter((v) => typeof v === "number");
      if (e.value.op === "signal" && direct) return both(NumberSet.points(whole, numbers));
      if (e.value.op === "signal" && universe instanceof StringSet)
        return both(new StringSet(Language.words(members.filter((v) => typeof v === "string")), null));
      if (isLength(e.value) && universe instanceof StringSet) return both(StringSet.ofLengths(NumberSet.points(true, numbers)));
      if (e.kind === "number" || e.kind === "decimal")
        return chainSets(e.value, universe, domain, e.kind, "in", numbers) ?? { unsupported: unmodelled(e) };
      break;
    }
    case "range": {
      if (isPlain(e.value) && [e.min, e.max].every((m) => JSON.stringify(m) === JSON.stringify(e.value)))
        return [everythingLike(universe), nothingLike(universe)];
      if (signalsOf(e.min).size > 0 || signalsOf(e.max).size > 0) break;
      const [lo, hi] = [constant(e.min), constant(e.max)];
      if (typeof lo !== "number" || typeof hi !== "number") return null;
      if (e.value.op === "signal" && direct) return both(NumberSet.span(whole, lo, hi));
      if (isLength(e.value) && universe instanceof StringSet) return both(StringSet.ofLengths(NumberSet.span(true, lo, hi)));
      return chainSets(e.value, universe, domain, e.kind ?? "number", "range", [lo, hi]) ?? { unsupported: unmodelled(e) };
    }
    case "str": {
      if (!(universe instanceof StringSet)) break;
      const where = { starts_with: "prefix", ends_with: "suffix", contains: "infix" } as const;
      const parts = { starts_with: "prefixes", ends_with: "suffixes", contains: "infixes" } as const;
      if (e.left.op === "signal" && signalsOf(e.right).size === 0) {
        const c = constant(e.right);
        if (typeof c === "string") return both(new StringSet(Language.around(c, where[e.fn]), null));
      }
      if (e.right.op === "signal" && signalsOf(e.left).size === 0) {
        const c = constant(e.left);
        if (typeof c === "string") return both(new StringSet(Language.partsOf(c, parts[e.fn]), null));
      }
      break;
    }
    case "matches": {
      if (e.value.op !== "signal" || !(universe instanceof StringSet)) break;
      const language = Language.search(e.pattern);
      if (!(language instanceof Language)) return { unsupported: `the pattern /${e.pattern}/: ${language.unsupported}` };
      return both(new StringSet(language, null));
    }
  }
  return { unsupported: unmodelled(e) };
}

/** Why a condition on one signal is not modelled, in the report's words. */
function unmodelled(e: IrExpr): string {
  if (irNodes(e).some((n) => n.op === "arith" || n.op === "neg"))
    return "arithmetic that reads a signal twice, or divides by it, is not modelled";
  return "this form of condition is not modelled";
}

/** Where arithmetic on the variable's value (or length) compares true, false, unknown or faults: see monotone.ts. */
function chainSets(
  subject: IrExpr,
  universe: Values,
  domain: NumberDomain,
  kind: "number" | "decimal",
  op: CompareOp | "in" | "range",
  constants: readonly number[],
): readonly [Values, Values, Values, Values] | null {
  if (universe instanceof ChoiceSet) return null;
  const view = monotoneView(subject, domain, kind);
  if (view === null || (view.of === "length") !== universe instanceof StringSet) return null;
  const sets = monotoneSets(view, op, constants);
  if (!(universe instanceof StringSet)) return sets;
  const [t, f, u, x] = sets.map((s) => StringSet.ofLengths(s));
  return [t!, f!, u!, x!];
}

/** A signal, or a string signal's length: known whenever the signal is present. */
function isPlain(e: IrExpr): boolean {
  return e.op === "signal" || isLength(e);
}

function isLength(e: IrExpr): boolean {
  return e.op === "len" && e.arg.op === "signal";
}

/** The value of an expression that reads no signal. */
function constant(e: IrExpr): Value {
  const v = prepareExpression(e)({});
  return v !== UNKNOWN && isScalar(v) ? v : UNKNOWN;
}
