import type { IrExpr } from "@writ/runtime";
import type { Side, Variable } from "./space.js";

/**
 * A condition the domains do not model (formula.ts), kept whole as a truth value of its own: the same atom wherever it
 * is written the same way on the same variables.
 */
export interface OpaqueAtom {
  readonly key: string;
  readonly expr: IrExpr;
  readonly side: Side;
  readonly variables: readonly Variable[];
  /** Why the domains do not model it, for the report. */
  readonly reason: string;
  /**
   * Where computing it faults, as an atom of its own that is true there and false elsewhere: shared by every atom
   * whose arithmetic (its outermost `+ - * /` terms) is the same, since those fault together, so the old and the new
   * version of a condition that kept its arithmetic fault alike. Null when it cannot fault for its variables' values
   * (fault-free.ts): it is then never a fault.
   */
  readonly faults: OpaqueAtom | null;
}
