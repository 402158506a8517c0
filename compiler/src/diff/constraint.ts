import { complement, intersect, isEmpty, type SignalSet } from "../analysis/signal-set.js";
import { FALSE, TRUE, all, any, type Constraint } from "./constraint-tree.js";
import type { Formula, LeafSets } from "./formula.js";
import { E, EACH, EVERY, F, T, U, type Mask } from "./truth.js";

/**
 * "Formula f has a value in `want`", unfolded into a constraint tree, following Kleene's tables with faults
 * (docs/language.md "Faults"): `a and b` is false when either is false, else a fault when either is, else unknown
 * when either is, else true.
 */
export function constraint(f: Formula, want: Mask): Constraint {
  if (want === 0) return FALSE;
  if (want === EVERY) return TRUE;
  switch (f.kind) {
    case "const":
      return f.truth & want ? TRUE : FALSE;
    case "leaf":
      return { kind: "states", variable: f.variable, allowed: statesOf(f.sets, want) };
    case "opaque": {
      // Its value other than a fault where its arithmetic does not fault; a fault where it does.
      const known = want & ~E;
      const value: Constraint = known === 0 ? FALSE : { kind: "opaque", atom: f.atom, allowed: known };
      const faults = f.atom.faults;
      if (faults === null) return value;
      const fault: Constraint = want & E ? { kind: "opaque", atom: faults, allowed: T } : FALSE;
      return any([fault, all([{ kind: "opaque", atom: faults, allowed: F }, value])]);
    }
    case "guarded": {
      const fault: Constraint = want & E ? { kind: "opaque", atom: f.faults, allowed: T } : FALSE;
      return any([fault, all([{ kind: "opaque", atom: f.faults, allowed: F }, constraint(f.arg, want & ~E)])]);
    }
    case "relation":
      return any(EACH.flatMap((v, i) => (v & want ? [f.cases[i]!] : [])));
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
          if (v === E) return any([constraint(f.left, E), constraint(f.right, E)]);
          const known = T | F | U;
          if (v === U)
            return all([constraint(f.left, known), constraint(f.right, known), any([constraint(f.left, U), constraint(f.right, U)])]);
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
  // "Not absorbing" (any other value) is one conjunction, cheaper than the disjunction of the three.
  const not = EVERY & ~absorbing;
  if (want === not) return all(args.map((a) => constraint(a, not)));
  // Neither absorbing nor a fault: the other value or unknown, a conjunction too.
  if (want === (other | U)) return all(args.map((a) => constraint(a, other | U)));
  const parts: Constraint[] = [];
  if (want & absorbing) parts.push(any(args.map((a) => constraint(a, absorbing))));
  if (want & other) parts.push(all(args.map((a) => constraint(a, other))));
  if (want & U) parts.push(all([all(args.map((a) => constraint(a, other | U))), any(args.map((a) => constraint(a, U)))]));
  if (want & E) parts.push(all([all(args.map((a) => constraint(a, not))), any(args.map((a) => constraint(a, E)))]));
  return any(parts);
}

/** The states in which the leaf's value is in `want`: those in none of the sets of the values not wanted. */
function statesOf(sets: LeafSets, want: Mask): SignalSet {
  const wanted = EACH.map((v, i) => (v & want ? i : -1)).filter((i) => i >= 0);
  if (wanted.length === 1) return sets[wanted[0]!]!;
  const unwanted = EACH.map((_, i) => i).filter((i) => !wanted.includes(i));
  // An empty set's complement is every state: the first one stands for all when every set not wanted is empty.
  const nonEmpty = unwanted.filter((i) => !isEmpty(sets[i]!));
  return (nonEmpty.length > 0 ? nonEmpty : unwanted.slice(0, 1)).map((i) => complement(sets[i]!)).reduce((a, b) => intersect(a, b));
}
