import type { IrExpr } from "./types.js";

/** Whether computing `e` reads `now`, so that evaluating it needs the decision instant. */
export function readsNow(e: IrExpr): boolean {
  switch (e.op) {
    case "now":
      return true;
    case "lit":
    case "signal":
    case "present":
      return false;
    case "and":
    case "or":
      return e.args.some(readsNow);
    case "cmp":
    case "str":
    case "arith":
      return readsNow(e.left) || readsNow(e.right);
    case "in":
    case "matches":
      return readsNow(e.value);
    case "range":
      return readsNow(e.value) || readsNow(e.min) || readsNow(e.max);
    default:
      return readsNow(e.arg);
  }
}
