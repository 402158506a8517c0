import type { SignalSet } from "../analysis/signal-set.js";
import type { OpaqueAtom } from "./opaque-atom.js";
import type { Variable } from "./space.js";
import type { Mask } from "./truth.js";

/**
 * What the search (search.ts) narrows boxes by: a tree of conjunctions and disjunctions of constraints on single
 * variables, on opaque atoms' truth values, and linear constraints relating two variables (relation.ts).
 */
export type Constraint =
  | { readonly kind: "true" }
  | { readonly kind: "false" }
  | { readonly kind: "states"; readonly variable: Variable; readonly allowed: SignalSet }
  | { readonly kind: "opaque"; readonly atom: OpaqueAtom; readonly allowed: Mask }
  /** `sum of sign * n <= bound` over two variables held as whole numbers (relation.ts), both present. */
  | { readonly kind: "linear"; readonly terms: readonly LinearTerm[]; readonly bound: bigint }
  | { readonly kind: "all" | "any"; readonly items: readonly Constraint[] };

export interface LinearTerm {
  readonly variable: Variable;
  readonly sign: 1 | -1;
}

export const TRUE: Constraint = { kind: "true" };
export const FALSE: Constraint = { kind: "false" };

export function all(items: readonly Constraint[]): Constraint {
  const out: Constraint[] = [];
  for (const c of items) {
    if (c.kind === "false") return FALSE;
    if (c.kind === "all") out.push(...c.items);
    else if (c.kind !== "true") out.push(c);
  }
  return out.length === 0 ? TRUE : out.length === 1 ? out[0]! : { kind: "all", items: out };
}

export function any(items: readonly Constraint[]): Constraint {
  const out: Constraint[] = [];
  for (const c of items) {
    if (c.kind === "true") return TRUE;
    if (c.kind === "any") out.push(...c.items);
    else if (c.kind !== "false") out.push(c);
  }
  return out.length === 0 ? FALSE : out.length === 1 ? out[0]! : { kind: "any", items: out };
}
