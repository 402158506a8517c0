/**
 * Evaluation faults (docs/language.md "Faults"): arithmetic whose result writ cannot state exactly is a fault, a value
 * only `and`'s false and `or`'s true absorb; a rule whose condition is a fault ends the evaluation with a coded
 * refusal instead of a verdict, so no fault can approve.
 */
import type { FaultCode } from "./fault-codes.js";
import type { IrExpr } from "./types.js";

export { FAULTS, FAULT_CODES, type FaultCode } from "./fault-codes.js";

/** Thrown by an operand while a condition is computed; the evaluator catches it at the rule. */
export class EvaluationFaultSignal {
  constructor(
    readonly code: FaultCode,
    /** The IR node that faulted. */
    readonly at: IrExpr,
  ) {}
}

/** A rule whose condition faulted: what the decision reports, and what a server answers with (422). */
export interface EvaluationFault {
  readonly code: FaultCode;
  readonly ruleId: string;
  /** The node that faulted, as the IR writes it (constants inlined). */
  readonly expr: string;
  /** `division by zero in `amount / balance``: for people and logs. */
  readonly message: string;
}

/** Whether computing `e` can fault (faults.ts): it holds arithmetic. */
export function canFault(e: IrExpr): boolean {
  switch (e.op) {
    case "arith":
    case "calendar":
      return true;
    case "lit":
    case "signal":
    case "now":
    case "present":
    case "matches":
      return false;
    case "and":
    case "or":
      return e.args.some(canFault);
    case "cmp":
    case "str":
      return canFault(e.left) || canFault(e.right);
    case "in":
      return canFault(e.value);
    case "range":
      return canFault(e.value) || canFault(e.min) || canFault(e.max);
    default:
      return canFault(e.arg);
  }
}
