import type { IrExpr } from "./types.js";

/** The operands of an IR node, in order (none for a literal, a signal, `now` and `present`). */
export function irOperands(e: IrExpr): readonly IrExpr[] {
  switch (e.op) {
    case "lit":
    case "signal":
    case "now":
    case "present":
      return [];
    case "and":
    case "or":
      return e.args;
    case "cmp":
    case "str":
    case "arith":
      return [e.left, e.right];
    case "in":
    case "matches":
      return [e.value];
    case "range":
      return [e.value, e.min, e.max];
    default:
      return [e.arg];
  }
}
