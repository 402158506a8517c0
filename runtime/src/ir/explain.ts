import { IrUnsupportedError } from "../errors.js";
import {
  arithmetic,
  calendar,
  timeArithmetic,
  comparison,
  decisionNow,
  exactArithmetic,
  exactComparison,
  exactMembership,
  exactRange,
  inCidr,
  logical,
  matches,
  membership,
  present,
  range,
  signal,
  stringTest,
  unary,
  zoneTableOf,
  type DecimalOperand,
  type Operand,
  type Signals,
} from "./apply.js";
import { decisionNowValue, faultOf, type Decision } from "./evaluate.js";
import { decimalText, nearestNumber, placesOf, unitsOf } from "./exact.js";
import { canFault, EvaluationFaultSignal, type FaultCode } from "./faults.js";
import { isUnaryOp } from "./operators.js";
import { decimalPlaces, isDecimalNode } from "./scale.js";
import { readsNow } from "./reads-now.js";
import { durationText } from "./time.js";
import { OTHERWISE_RULE_ID, type IrExpr, type IrOutcome, type IrSignal, type PolicyIr, type Scalar, type Verdict } from "./types.js";
import { COMPARISON_DOMAINS, Instant, UNKNOWN, type Value } from "./values.js";
import { offsetAt, offsetText, prepareZones, type ZoneTable } from "./zones.js";
import { isDurationNode, written } from "./written.js";

export { written } from "./written.js";

/** The value of a condition in Kleene's logic: only a rule whose condition is `true` decides. */
export type Truth = "true" | "false" | "unknown";

export interface ExplainedExpr {
  /**
   * The expression as the IR has it (constants inlined, `not in` as `not (... in ...)`), written with the operators'
   * symbols, every compound operand in parentheses.
   */
  readonly expr: string;
  /**
   * Its value for these signals; null when unknown (an absent optional signal, ...) or when computing it faulted. A
   * decimal's is the nearest number, and `exact` its exact value.
   */
  readonly value: Scalar | null;
  /** A decimal's exact value, with the places of its type: `1000.30`; a duration's (`value` its milliseconds): `30d`. */
  readonly exact?: string;
  /** A calendar field's: the UTC offset of the local time it was read from (`UTC+01:00`). */
  readonly offset?: string;
  /** The fault computing this node was (faults.ts); only on the node that faulted, not on the nodes above it. */
  readonly fault?: FaultCode;
  /** What it was computed from, explained alike; absent for a literal, a signal, `now` and `present(...)`. */
  readonly operands?: readonly ExplainedExpr[];
}

export interface ExplainedRule {
  readonly rule: string;
  readonly verdict: Verdict;
  readonly reason: string;
  /** `fault`: computing the condition faulted; the rule decides nothing, and if it is tried the evaluation ends. */
  readonly result: Truth | "fault";
  readonly condition: ExplainedExpr;
}

/** Why a policy decides as it does for one set of signals: every rule's condition, evaluated down to its signals. */
export interface Explanation {
  /** Every rule of the IR in order, including those after the one that decides. */
  readonly rules: readonly ExplainedRule[];
  /** What decides when no rule's condition is true; null when the policy has no catch-all. */
  readonly otherwise: IrOutcome | null;
}

export interface Explained {
  /** The first rule whose condition is true or faults, else the catch-all: what the evaluator decides. */
  readonly decision: Decision;
  readonly explanation: Explanation;
}

interface Node {
  readonly explained: ExplainedExpr;
  readonly value: Value;
  /** The fault below or at this node, if any: a node whose operand faulted has faulted too. */
  readonly fault: EvaluationFaultSignal | null;
}

/**
 * Explains `ir` for `signals`, which must already be valid for the policy's signals schema. Every operator is applied
 * by the same functions the evaluator compiles to (apply.ts), so the explanation decides as `preparePolicy(ir)` does;
 * a property test checks it on generated policies. `now`: the decision instant, as `PreparedPolicy.evaluate` takes it.
 */
export function explain(ir: PolicyIr, signals: Signals, now?: Date): Explained {
  const reads = ir.rules.some((rule) => readsNow(rule.when));
  const explainer = new Explainer(ir.signals, signals, reads ? decisionNowValue(now) : undefined, prepareZones(ir.zones));
  let decision: Decision | null = null;
  const rules = ir.rules.map((rule): ExplainedRule => {
    const { explained, value, fault } = explainer.node(rule.when);
    const result = fault ? "fault" : truthOf(value);
    // INVARIANT (first match wins): the rules are tried in order, and the first that is true or faults ends it.
    if (decision === null && fault) decision = { decided: false, fault: faultOf(rule.id, fault) };
    if (decision === null && result === "true") decision = { decided: true, verdict: rule.verdict, ruleId: rule.id, reason: rule.reason };
    return { rule: rule.id, verdict: rule.verdict, reason: rule.reason, result, condition: explained };
  });
  decision ??= ir.otherwise
    ? { decided: true, verdict: ir.otherwise.verdict, ruleId: OTHERWISE_RULE_ID, reason: ir.otherwise.reason }
    : { decided: false, fault: null };
  return { decision, explanation: { rules, otherwise: ir.otherwise } };
}

function truthOf(v: Value): Truth {
  // INVARIANT (first match wins): exactly true decides, as in the evaluator; any other value does not.
  return v === true ? "true" : v === UNKNOWN ? "unknown" : "false";
}

const known =
  (n: Node): Operand =>
  () =>
    n.value;

class Explainer {
  constructor(
    private readonly declared: Readonly<Record<string, IrSignal>>,
    private readonly signals: Signals,
    /** The decision instant, as the evaluator passes it (evaluate.ts); only when the policy reads `now`. */
    private readonly now: Instant | undefined,
    private readonly zones: ReadonlyMap<string, ZoneTable>,
  ) {}

  /** A node's value: its operator applied, by the evaluator's own functions (apply.ts), to its operands' values. */
  node(e: IrExpr): Node {
    const s = this.signals;
    switch (e.op) {
      case "lit":
        return this.shown(e, e.value, null);
      case "signal":
        return this.shown(e, signal(e.name)(s), null);
      case "now":
        return this.shown(e, decisionNow()(s, this.now), null);
      case "present":
        return this.shown(e, present(e)(s), null);
      case "and":
      case "or": {
        const args = e.args.map((a) => this.node(a));
        // The absorbing value beats a fault (apply.ts `logical`): the node has not faulted then.
        const absorbing = e.op === "or";
        if (args.some((a) => a.value === absorbing)) return this.shown(e, absorbing, null, args);
        return this.compound(e, args, () => logical(e, args.map(known), e.args.some(canFault)));
      }
      case "cmp": {
        const [left, right] = [this.node(e.left), this.node(e.right)];
        if (e.kind === "decimal")
          return this.compound(e, [left, right], () => exactComparison(e, this.decimal(e.left, left), this.decimal(e.right, right)));
        return this.compound(e, [left, right], () => comparison(e, known(left), known(right)));
      }
      case "str": {
        const [left, right] = [this.node(e.left), this.node(e.right)];
        return this.compound(e, [left, right], () => stringTest(e, known(left), known(right)));
      }
      case "arith": {
        const [left, right] = [this.node(e.left), this.node(e.right)];
        if (e.kind === "decimal")
          return this.compound(e, [left, right], () => exactArithmetic(e, this.decimal(e.left, left), this.decimal(e.right, right)));
        if (e.kind === "time") return this.compound(e, [left, right], () => timeArithmetic(e, known(left), known(right)));
        return this.compound(e, [left, right], () => arithmetic(e, known(left), known(right)));
      }
      case "in": {
        const value = this.node(e.value);
        if (e.kind === "decimal") {
          const itemPlaces = Math.max(0, ...e.set.map((v) => (typeof v === "number" ? placesOf(v) : 0)));
          return this.compound(e, [value], () => exactMembership(e, this.decimal(e.value, value), itemPlaces));
        }
        return this.compound(e, [value], () => membership(e, known(value)));
      }
      case "range": {
        const [value, min, max] = [this.node(e.value), this.node(e.min), this.node(e.max)];
        if (e.kind === "decimal")
          return this.compound(e, [value, min, max], () =>
            exactRange(this.decimal(e.value, value), this.decimal(e.min, min), this.decimal(e.max, max)),
          );
        return this.compound(e, [value, min, max], () => range(known(value), known(min), known(max)));
      }
      case "matches": {
        const value = this.node(e.value);
        return this.compound(e, [value], () => matches(e, known(value)));
      }
      case "in_cidr": {
        const address = this.node(e.arg);
        return this.compound(e, [address], () => inCidr(e, known(address)));
      }
      case "calendar": {
        const arg = this.node(e.arg);
        const table = zoneTableOf(e, this.zones);
        const field = this.compound(e, [arg], () => calendar(e, known(arg), table));
        const instant = COMPARISON_DOMAINS.timestamp(arg.value);
        const offset = field.fault === null && typeof instant === "number" ? offsetAt(table, instant) : null;
        if (offset === null) return field;
        const { operands, ...own } = field.explained;
        return { ...field, explained: { ...own, offset: offsetText(offset), ...(operands ? { operands } : {}) } };
      }
      default: {
        if (!isUnaryOp(e.op)) throw new IrUnsupportedError(`IR operator \`${String(e.op)}\` is not supported`);
        const arg = this.node(e.arg);
        return this.compound(e, [arg], () => unary(e, known(arg)));
      }
    }
  }

  private decimal(e: IrExpr, n: Node): DecimalOperand {
    return { value: known(n), places: decimalPlaces(e, this.declared) };
  }

  /** The operator applied to its operands' values, unless one of them faulted: then this node has faulted too. */
  private compound(e: IrExpr, operands: readonly Node[], apply: () => Operand): Node {
    const below = operands.find((o) => o.fault !== null)?.fault ?? null;
    if (below) return this.shown(e, UNKNOWN, below, operands);
    try {
      return this.shown(e, apply()(this.signals, this.now), null, operands);
    } catch (err) {
      if (!(err instanceof EvaluationFaultSignal)) throw err;
      return this.shown(e, UNKNOWN, err, operands);
    }
  }

  private shown(e: IrExpr, value: Value, fault: EvaluationFaultSignal | null, operands?: readonly Node[]): Node {
    const explained: { -readonly [K in keyof ExplainedExpr]: ExplainedExpr[K] } = { expr: written(e), value: null };
    if (typeof value === "bigint" || (typeof value === "number" && isDecimalNode(e, this.declared))) {
      const places = decimalPlaces(e, this.declared);
      const units = typeof value === "bigint" ? value : unitsOf(value, places);
      explained.value = typeof value === "bigint" ? nearestNumber(value, places) : value;
      if (units !== null) explained.exact = decimalText(units, places);
    } else if (value instanceof Instant) explained.value = value.text;
    else if (value !== UNKNOWN) explained.value = value;
    if (typeof value === "number" && isDurationNode(e)) explained.exact = durationText(value);
    if (fault !== null && fault.at === e) explained.fault = fault.code;
    if (operands) explained.operands = operands.map((o) => o.explained);
    return { explained, value, fault };
  }
}
