import { complement, type SignalSet } from "../analysis/signal-set.js";
import { F, T, U, type Formula, type Mask, type OpaqueAtom } from "./formula.js";
import type { Variable } from "./space.js";

/**
 * "Formula f has a value in `want`", unfolded into a tree of conjunctions and disjunctions of constraints on single
 * variables and opaque atoms, following Kleene's tables: `a and b` is false when either is false, unknown when
 * neither is false and one is unknown, true when both are true.
 */
export type Constraint =
  | { readonly kind: "true" }
  | { readonly kind: "false" }
  | { readonly kind: "states"; readonly variable: Variable; readonly allowed: SignalSet }
  | { readonly kind: "opaque"; readonly atom: OpaqueAtom; readonly allowed: Mask }
  | { readonly kind: "all" | "any"; readonly items: readonly Constraint[] };

const TRUE: Constraint = { kind: "true" };
const FALSE: Constraint = { kind: "false" };
const EACH = [T, F, U] as const;

export function constraint(f: Formula, want: Mask): Constraint {
  if (want === 0) return FALSE;
  if (want === (T | F | U)) return TRUE;
  switch (f.kind) {
    case "const":
      return f.truth & want ? TRUE : FALSE;
    case "leaf":
      return { kind: "states", variable: f.variable, allowed: statesOf(f.sets, want) };
    case "opaque":
      return { kind: "opaque", atom: f.atom, allowed: want };
    case "relabel": {
      let inner = 0;
      EACH.forEach((v, i) => {
        if (f.map[i]! & want) inner |= v;
      });
      return constraint(f.arg, inner);
    }
    case "and":
    case "or":
      return logical(f.kind, f.args, want);
    case "table":
      return any(
        f.rows
          .filter((r) => r.truth & want)
          .map((r) => all(r.cells.map((c) => ({ kind: "states", variable: c.variable, allowed: c.state })))),
      );
    case "iff":
      return any(
        EACH.filter((v) => v & want).map((v) => {
          if (v === U) return any([constraint(f.left, U), constraint(f.right, U)]);
          const agree = v === T;
          return any([
            all([constraint(f.left, T), constraint(f.right, agree ? T : F)]),
            all([constraint(f.left, F), constraint(f.right, agree ? F : T)]),
          ]);
        }),
      );
  }
}

/** `and` (absorbing false) or `or` (absorbing true) having a value in `want`. */
function logical(op: "and" | "or", args: readonly Formula[], want: Mask): Constraint {
  const [absorbing, other] = op === "and" ? [F, T] : [T, F];
  // "Not absorbing" (the other value or unknown) is one conjunction, cheaper than the disjunction of the two.
  if (want === (other | U)) return all(args.map((a) => constraint(a, other | U)));
  const parts: Constraint[] = [];
  if (want & absorbing) parts.push(any(args.map((a) => constraint(a, absorbing))));
  if (want & other) parts.push(all(args.map((a) => constraint(a, other))));
  if (want & U) parts.push(all([all(args.map((a) => constraint(a, other | U))), any(args.map((a) => constraint(a, U)))]));
  return any(parts);
}

/** The states in which the leaf's value is in `want`: one of its sets, or the complement of the one not wanted. */
function statesOf(sets: readonly [SignalSet, SignalSet, SignalSet], want: Mask): SignalSet {
  const wanted = EACH.map((v, i) => (v & want ? i : -1)).filter((i) => i >= 0);
  if (wanted.length === 1) return sets[wanted[0]!]!;
  const missing = EACH.findIndex((v) => !(v & want));
  return complement(sets[missing]!);
}

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
