import { placesOf } from "./exact.js";
import { ARITHMETIC_OPERATORS, type ArithmeticOperator } from "./operators.js";
import type { IrExpr, IrSignal } from "./types.js";

/**
 * The places at which a node of a decimal computation holds its value, fixed by the IR alone: a decimal signal's S,
 * 0 for an integer, a literal's own, and for arithmetic what its operator gives (`+`: the larger, `*`: the sum).
 * The evaluator computes at these places and the explanation shows values with them (`1000.30`).
 */
export function decimalPlaces(e: IrExpr, signals: Readonly<Record<string, IrSignal>>): number {
  switch (e.op) {
    case "lit":
      return typeof e.value === "number" ? placesOf(e.value) : 0;
    case "signal": {
      const s = signals[e.name];
      return s?.type === "decimal" ? (s.scale ?? 0) : 0;
    }
    case "neg":
    case "abs":
      return decimalPlaces(e.arg, signals);
    case "arith": {
      const exact = (ARITHMETIC_OPERATORS[e.fn] as ArithmeticOperator | undefined)?.exact;
      const left = decimalPlaces(e.left, signals);
      const right = decimalPlaces(e.right, signals);
      return exact ? exact.places(left, right) : Math.max(left, right);
    }
    default:
      return 0;
  }
}

/** Whether a node's value is a decimal, shown with its places: a decimal signal, exact arithmetic, its negation or magnitude. */
export function isDecimalNode(e: IrExpr, signals: Readonly<Record<string, IrSignal>>): boolean {
  switch (e.op) {
    case "signal":
      return signals[e.name]?.type === "decimal";
    case "arith":
      return e.kind === "decimal";
    case "neg":
    case "abs":
      return isDecimalNode(e.arg, signals);
    default:
      return false;
  }
}
