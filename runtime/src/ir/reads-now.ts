import { irOperands } from "./operands.js";
import type { IrExpr } from "./types.js";

/** Whether computing `e` reads `now`, so that evaluating it needs the decision instant. */
export function readsNow(e: IrExpr): boolean {
  return e.op === "now" || irOperands(e).some(readsNow);
}
