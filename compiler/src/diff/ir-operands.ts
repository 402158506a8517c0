import { irOperands, readsNow, type IrExpr } from "@writ/runtime";
import { NOW_VARIABLE } from "./signal-domain.js";

/** Every node of `e`, `e` first. */
export function irNodes(e: IrExpr): IrExpr[] {
  return [e, ...irOperands(e).flatMap(irNodes)];
}

/**
 * `e` with `now` read as the signal NOW_VARIABLE (signal-domain.ts), so the formulas relate the decision instant as they
 * relate a timestamp signal; the versions themselves are still evaluated with the instant (diff.ts).
 */
export function nowAsVariable(e: IrExpr): IrExpr {
  if (!readsNow(e)) return e;
  return e.op === "now" ? { op: "signal", name: NOW_VARIABLE } : mapOperands(e, nowAsVariable);
}

/** `e` with each of its operands replaced by `f` of it. */
export function mapOperands(e: IrExpr, f: (operand: IrExpr) => IrExpr): IrExpr {
  switch (e.op) {
    case "lit":
    case "signal":
    case "now":
    case "present":
      return e;
    case "and":
    case "or":
      return { ...e, args: e.args.map(f) };
    case "cmp":
    case "str":
    case "arith":
      return { ...e, left: f(e.left), right: f(e.right) };
    case "in":
    case "matches":
      return { ...e, value: f(e.value) };
    case "range":
      return { ...e, value: f(e.value), min: f(e.min), max: f(e.max) };
    default:
      return { ...e, arg: f(e.arg) };
  }
}
