import { IrUnsupportedError } from "../errors.js";
import {
  arithmetic,
  calendar,
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
  timeArithmetic,
  unary,
  zoneTableOf,
  type DecimalOperand,
  type Operand,
  type Signals,
} from "./apply.js";
import { placesOf } from "./exact.js";
import { canFault, EvaluationFaultSignal, FAULTS, type EvaluationFault } from "./faults.js";
import { isUnaryOp } from "./operators.js";
import { decimalPlaces } from "./scale.js";
import { readsNow } from "./reads-now.js";
import { decisionMs } from "./time.js";
import { Instant } from "./values.js";
import { written } from "./written.js";
import { IR_VERSIONS, OTHERWISE_RULE_ID, type IrExpr, type IrSignal, type IrZones, type PolicyIr, type Verdict } from "./types.js";
import { prepareZones, type ZoneTable } from "./zones.js";

/**
 * What a policy decides for one set of signals: a verdict by a rule; undecided (no rule true and no catch-all,
 * `fault: null`); or a fault in the condition of a rule that was tried (faults.ts), which decides nothing.
 */
export type Decision =
  | { readonly decided: true; readonly verdict: Verdict; readonly ruleId: string; readonly reason: string }
  | { readonly decided: false; readonly fault: EvaluationFault | null };

export interface PreparedPolicy {
  readonly ir: PolicyIr;
  /** Whether a condition reads `now`, so that evaluating it needs the decision instant. */
  readonly readsNow: boolean;
  /**
   * Signals must already be validated against the bundle's schema. `now`: the decision instant, which `now` reads
   * (time.ts `decisionInstant`); it may be left out only for a policy that does not read it (TypeError otherwise, as
   * for a Date that holds no instant: the caller's error). Deterministic, and otherwise never throws.
   */
  evaluate(signals: Signals, now?: Date): Decision;
}

export const UNDECIDED: Decision = { decided: false, fault: null };

/**
 * Compiles the IR to closures once, so a request pays for evaluation only.
 * Throws IrUnsupportedError for an IR this runtime does not understand (newer format, unknown operator).
 */
export function preparePolicy(ir: PolicyIr): PreparedPolicy {
  if (!IR_VERSIONS.includes(ir.irVersion)) {
    throw new IrUnsupportedError(
      `IR version \`${String(ir.irVersion)}\` is not supported (this runtime reads ${IR_VERSIONS.join(" and ")})`,
    );
  }
  const compiler = new Compiler(ir.signals, prepareZones(ir.zones));
  const rules = ir.rules.map((rule) => ({ rule, test: compiler.compile(rule.when) }));
  const otherwise = ir.otherwise;
  const needsNow = ir.rules.some((rule) => readsNow(rule.when));
  return {
    ir,
    readsNow: needsNow,
    evaluate(signals, now) {
      // Written once per evaluation, only for a policy that reads it: every `now` of one decision is this instant.
      const instant = needsNow ? decisionNowValue(now) : undefined;
      for (const { rule, test } of rules) {
        let value;
        try {
          value = test(signals, instant);
        } catch (e) {
          if (e instanceof EvaluationFaultSignal) return { decided: false, fault: faultOf(rule.id, e) };
          throw e;
        }
        // INVARIANT (first match wins): a rule decides only when its condition is exactly true.
        if (value === true) return { decided: true, verdict: rule.verdict, ruleId: rule.id, reason: rule.reason };
      }
      if (otherwise === null) return UNDECIDED;
      return { decided: true, verdict: otherwise.verdict, ruleId: OTHERWISE_RULE_ID, reason: otherwise.reason };
    },
  };
}

/** `now` of a decision at `now`, as every operand reads it (time.ts decisionMs refuses a Date of no instant). */
export function decisionNowValue(now: Date | undefined): Instant {
  return new Instant(decisionMs(requiredNow(now)), true);
}

/** The instant of a policy that reads `now`: refused (TypeError) when the caller gave none. */
export function requiredNow(now: Date | undefined): Date {
  if (now === undefined) throw new TypeError("the policy reads `now`, but no decision instant was given");
  return now;
}

/** The fault of rule `ruleId` as reported: its code, where, and a sentence for people. */
export function faultOf(ruleId: string, signal: EvaluationFaultSignal): EvaluationFault {
  const expr = written(signal.at);
  return { code: signal.code, ruleId, expr, message: `${FAULTS[signal.code]} in \`${expr}\`` };
}

/**
 * One condition or operand compiled as the evaluator compiles it: its value for a set of signals, `UNKNOWN` included.
 * For tools that reason about conditions (`writ diff`); throws IrUnsupportedError for an operator this runtime lacks,
 * and EvaluationFaultSignal when computing it faults.
 */
export function prepareExpression(expr: IrExpr, signals: Readonly<Record<string, IrSignal>> = {}, zones?: IrZones): Operand {
  return new Compiler(signals, prepareZones(zones)).compile(expr);
}

class Compiler {
  constructor(
    private readonly signals: Readonly<Record<string, IrSignal>>,
    private readonly zones: ReadonlyMap<string, ZoneTable>,
  ) {}

  compile(expr: IrExpr): Operand {
    switch (expr.op) {
      case "lit": {
        const value = expr.value;
        return () => value;
      }
      case "signal":
        return signal(expr.name);
      case "now":
        return decisionNow();
      case "present":
        return present(expr);
      case "and":
      case "or":
        return logical(
          expr,
          expr.args.map((a) => this.compile(a)),
          expr.args.some(canFault),
        );
      case "cmp":
        if (expr.kind === "decimal") return exactComparison(expr, this.decimal(expr.left), this.decimal(expr.right));
        return comparison(expr, this.compile(expr.left), this.compile(expr.right));
      case "str":
        return stringTest(expr, this.compile(expr.left), this.compile(expr.right));
      case "arith":
        if (expr.kind === "decimal") return exactArithmetic(expr, this.decimal(expr.left), this.decimal(expr.right));
        if (expr.kind === "time") return timeArithmetic(expr, this.compile(expr.left), this.compile(expr.right));
        if (expr.kind !== undefined) throw new IrUnsupportedError(`arithmetic kind \`${String(expr.kind)}\` is not supported`);
        return arithmetic(expr, this.compile(expr.left), this.compile(expr.right));
      case "in":
        if (expr.kind === "decimal") {
          const itemPlaces = Math.max(0, ...expr.set.map((v) => (typeof v === "number" ? placesOf(v) : 0)));
          return exactMembership(expr, this.decimal(expr.value), itemPlaces);
        }
        return membership(expr, this.compile(expr.value));
      case "range":
        if (expr.kind === "decimal") return exactRange(this.decimal(expr.value), this.decimal(expr.min), this.decimal(expr.max));
        if (expr.kind !== undefined) throw new IrUnsupportedError(`range kind \`${String(expr.kind)}\` is not supported`);
        return range(this.compile(expr.value), this.compile(expr.min), this.compile(expr.max));
      case "matches":
        return matches(expr, this.compile(expr.value));
      case "in_cidr":
        return inCidr(expr, this.compile(expr.arg));
      case "calendar":
        return calendar(expr, this.compile(expr.arg), zoneTableOf(expr, this.zones));
      default:
        // Every other node is a unary operator's (`{op, arg}`): an op the table does not declare is refused first.
        if (!isUnaryOp(expr.op)) throw new IrUnsupportedError(`IR operator \`${String(expr.op)}\` is not supported`);
        return unary(expr, this.compile(expr.arg));
    }
  }

  private decimal(expr: IrExpr): DecimalOperand {
    return { value: this.compile(expr), places: decimalPlaces(expr, this.signals) };
  }
}
