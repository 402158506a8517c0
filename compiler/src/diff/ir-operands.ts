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
  switch (e.op) {
    case "now":
      return { op: "signal", name: NOW_VARIABLE };
    case "and":
    case "or":
      return { ...e, args: e.args.map(nowAsVariable) };
    case "cmp":
    case "str":
    case "arith":
      return { ...e, left: nowAsVariable(e.left), right: nowAsVariable(e.right) };
    case "in":
    case "matches":
      return { ...e, value: nowAsVariable(e.value) };
    case "range":
      return { ...e, value: nowAsVariable(e.value), min: nowAsVariable(e.min), max: nowAsVariable(e.max) };
    case "lit":
    case "signal":
    case "present":
      return e;
    default:
      return { ...e, arg: nowAsVariable(e.arg) };
  }
}
