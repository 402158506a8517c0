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
  /** Whether computing it can fault for some values of its variables (fault-free.ts); when not, it is never a fault. */
  readonly canFault: boolean;
}
