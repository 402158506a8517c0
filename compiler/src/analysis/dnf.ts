import { COMPARISON_OPERATORS, LOGICAL_OPERATORS, isComparison, type CompareOp } from "@writ/runtime";
import type { Expr, ScalarValue, SignalDecl } from "../syntax/ast.js";
import type { Symbols } from "../phases/resolve.js";
import { FULL, TRUE_TERM, intersectIntervals, intersectSets, type Interval, type Term, type ValueSet } from "./domain.js";

/** Past this many terms a condition is kept whole as one opaque atom: the analysis stays linear. */
const MAX_TERMS = 64;

/**
 * A condition as a disjunction of terms, negations pushed to the atoms (De Morgan holds in Kleene logic).
 * `[]` is false; `[TRUE_TERM]` is true.
 */
export class DnfBuilder {
  constructor(private readonly symbols: Symbols) {}

  dnf(e: Expr, negated = false): Term[] {
    const terms = this.build(e, negated);
    return terms.length > MAX_TERMS ? [opaque(this.key(e, negated))] : terms;
  }

  private build(e: Expr, negated: boolean): Term[] {
    switch (e.kind) {
      case "unary":
        if (e.op === "not") return this.dnf(e.arg, !negated);
        break;
      case "logical": {
        // `and` (absorbing false) is a conjunction, and so is a negated `or`.
        const conjunctive = LOGICAL_OPERATORS[e.op].absorbing === negated;
        const parts = e.args.map((a) => this.dnf(a, negated));
        if (!conjunctive) return parts.flat();
        let acc: Term[] = [TRUE_TERM];
        for (const p of parts) {
          acc = acc.flatMap((a) => p.map((b) => conjoin(a, b)));
          if (acc.length > MAX_TERMS) return [opaque(this.key(e, negated))];
        }
        return acc;
      }
      case "literal":
        if (typeof e.value === "boolean") return e.value !== negated ? [TRUE_TERM] : [];
        break;
      case "ref": {
        const value = this.constant(e);
        if (typeof value === "boolean") return value !== negated ? [TRUE_TERM] : [];
        const s = this.signal(e);
        if (s?.type.kind === "boolean") return [setTerm(s, { allowed: new Set([!negated]), excluded: new Set() })];
        break;
      }
      case "call":
        if (e.fn.name === "present" && e.args[0]?.kind === "ref") {
          const s = this.symbols.signals.get(e.args[0].name);
          if (s && !s.optional) return negated ? [] : [TRUE_TERM];
          if (s) return [negated ? { ...TRUE_TERM, absent: new Set([s.name.name]) } : { ...TRUE_TERM, present: new Set([s.name.name]) }];
        }
        break;
      case "binary": {
        const op = e.op;
        if (!isComparison(op)) break;
        const folded = this.fold(op, e.left, e.right);
        if (folded !== null) return folded !== negated ? [TRUE_TERM] : [];
        const term =
          this.comparison(op, e.left, e.right, negated) ?? this.comparison(COMPARISON_OPERATORS[op].converse, e.right, e.left, negated);
        if (term) return [term];
        break;
      }
      case "in": {
        const s = this.signal(e.value);
        const values = this.listValues(e.set);
        if (s && values && (s.type.kind === "enum" || s.type.kind === "string" || s.type.kind === "boolean")) {
          const set = new Set(values);
          const outside = e.negated !== negated;
          return [setTerm(s, outside ? { allowed: null, excluded: set } : { allowed: set, excluded: new Set() })];
        }
        break;
      }
      case "range": {
        const s = this.signal(e.value);
        const lo = this.constant(e.min);
        const hi = this.constant(e.max);
        if (s && typeof lo === "number" && typeof hi === "number" && this.numeric(s)) {
          if (e.negated === negated) return [intervalTerm(s, { lo, loIncl: true, hi, hiIncl: true })];
          return [intervalTerm(s, { ...FULL, hi: lo, hiIncl: false }), intervalTerm(s, { ...FULL, lo: hi, loIncl: false })];
        }
        break;
      }
      case "matches":
        break;
    }
    // Everything the domains do not model is an opaque atom: sound, as the analysis claims nothing about it.
    return [opaque(this.key(e, negated))];
  }

  /** `signal op constant` as a term, or null when the left side is not a signal and the right not a constant. */
  private comparison(op: CompareOp, left: Expr, right: Expr, negated: boolean): Term | null {
    const s = this.signal(left);
    const v = this.constant(right);
    if (!s || v === undefined) return null;
    // In Kleene logic `not (x < 5)` is `x >= 5`: both are unknown when x is absent.
    const o = negated ? COMPARISON_OPERATORS[op].negation : op;
    if (this.numeric(s) && typeof v === "number") {
      switch (o) {
        case "eq":
          return intervalTerm(s, { lo: v, loIncl: true, hi: v, hiIncl: true });
        case "ne":
          return setTerm(s, { allowed: null, excluded: new Set([v]) });
        case "lt":
        case "le":
          return intervalTerm(s, { ...FULL, hi: v, hiIncl: o === "le" });
        case "gt":
        case "ge":
          return intervalTerm(s, { ...FULL, lo: v, loIncl: o === "ge" });
      }
    }
    // Instants, versions and addresses are equal by value, not by text (`"1.0.0" == "1.0.0+b"`): opaque here.
    if (s.type.kind === "timestamp" || s.type.kind === "semver" || s.type.kind === "ip" || this.numeric(s)) return null;
    if (o === "eq") return setTerm(s, { allowed: new Set([v]), excluded: new Set() });
    if (o === "ne") return setTerm(s, { allowed: null, excluded: new Set([v]) });
    return null;
  }

  private fold(op: CompareOp, l: Expr, r: Expr): boolean | null {
    const a = this.constant(l);
    const b = this.constant(r);
    if (a === undefined || b === undefined || typeof a !== typeof b) return null;
    return COMPARISON_OPERATORS[op].test(a, b);
  }

  private numeric(s: SignalDecl): boolean {
    return s.type.kind === "number" || s.type.kind === "integer";
  }

  private signal(e: Expr): SignalDecl | undefined {
    return e.kind === "ref" ? this.symbols.signals.get(e.name) : undefined;
  }

  /** The value of a literal, a scalar constant or a negated number literal; undefined otherwise. */
  private constant(e: Expr): ScalarValue | undefined {
    if (e.kind === "literal") return e.value;
    if (e.kind === "unary" && e.op === "neg") {
      const v = this.constant(e.arg);
      return typeof v === "number" ? -v : undefined;
    }
    if (e.kind === "ref") {
      const c = this.symbols.consts.get(e.name);
      return c?.value.kind === "scalar" ? c.value.value : undefined;
    }
    return undefined;
  }

  private listValues(set: Extract<Expr, { kind: "in" }>["set"]): ScalarValue[] | null {
    const items = set.kind === "list" ? set.items : set.kind === "ref" ? this.listItems(set.name) : null;
    if (!items) return null;
    const values: ScalarValue[] = [];
    for (const i of items) {
      if (i.kind === "scalar") values.push(i.value);
      else {
        const c = this.symbols.consts.get(i.name);
        if (c?.value.kind !== "scalar") return null;
        values.push(c.value.value);
      }
    }
    return values;
  }

  private listItems(name: string) {
    const c = this.symbols.consts.get(name);
    return c?.value.kind === "list" ? c.value.items : null;
  }

  /** A structural key: equal for conditions written the same way up to spacing, constants resolved. */
  key(e: Expr, negated: boolean): string {
    return (
      (negated ? "!" : "") +
      JSON.stringify(e, (k, v: unknown) => {
        if (k === "span") return undefined;
        if (v && typeof v === "object" && (v as Expr).kind === "ref") {
          const c = this.constant(v as Expr);
          if (c !== undefined) return { kind: "literal", value: c };
        }
        return v;
      })
    );
  }
}

function opaque(key: string): Term {
  return { ...TRUE_TERM, opaque: new Set([key]) };
}

function intervalTerm(s: SignalDecl, i: Interval): Term {
  return { ...TRUE_TERM, intervals: new Map([[s.name.name, i]]), present: new Set([s.name.name]) };
}

function setTerm(s: SignalDecl, v: ValueSet): Term {
  return { ...TRUE_TERM, sets: new Map([[s.name.name, v]]), present: new Set([s.name.name]) };
}

export function conjoin(a: Term, b: Term): Term {
  const intervals = new Map(a.intervals);
  for (const [k, v] of b.intervals) intervals.set(k, intervals.has(k) ? intersectIntervals(intervals.get(k)!, v) : v);
  const sets = new Map(a.sets);
  for (const [k, v] of b.sets) sets.set(k, sets.has(k) ? intersectSets(sets.get(k)!, v) : v);
  return {
    intervals,
    sets,
    present: new Set([...a.present, ...b.present]),
    absent: new Set([...a.absent, ...b.absent]),
    opaque: new Set([...a.opaque, ...b.opaque]),
  };
}
