import {
  declaredInterval,
  declaredSet,
  intersectIntervals,
  intersectSets,
  intervalWithin,
  isEmptyInterval,
  isEmptySet,
  setWithin,
  tighten,
  TRUE_TERM,
  type Term,
} from "../analysis/domain.js";
import { DnfBuilder } from "../analysis/dnf.js";
import { faultWarnings } from "../analysis/faults.js";
import type { PolicyAst } from "../syntax/ast.js";
import type { PhaseContext } from "./context.js";
import { lowerCondition } from "./lower.js";
import type { Symbols } from "./resolve.js";
import type { Typing } from "./expression-types.js";

/**
 * Phase analyze. Guarantees: a warning names every rule the analysis proves can never decide (never true,
 * shadowed by an earlier rule, or after a rule that always decides), every condition that is always true,
 * and a missing catch-all. The analysis is sound, not complete: it never warns about a rule that can
 * decide, and it may miss some that cannot. It also names arithmetic that can fault for valid signals (W606).
 * It changes nothing.
 */
export function analyze(ctx: PhaseContext, ast: PolicyAst, symbols: Symbols, typing: Typing): void {
  const scope = {
    signal: (name: string) => symbols.signals.get(name),
    constant: (name: string) => {
      const c = symbols.consts.get(name);
      return c?.value.kind === "scalar" && typeof c.value.value === "number" ? c.value.value : undefined;
    },
  };
  for (const rule of ast.rules) {
    for (const w of faultWarnings(rule.when, scope)) ctx.sink.report("W606", w.span, w.message);
  }
  const builder = new DnfBuilder(symbols);
  const normalize = (terms: Term[]): Keyed[] =>
    terms
      .map((t) => normalizeTerm(t, symbols))
      .filter((t): t is Term => t !== null)
      .map((term) => ({ term, keys: keysOf(term) }));
  const earlier: { name: string; terms: Keyed[] }[] = [];
  let decidedBy: string | null = null;

  for (const rule of ast.rules) {
    const name = rule.name.name;
    if (decidedBy !== null) {
      ctx.sink.report("W602", rule.name.span, `rule \`${name}\` is unreachable: rule \`${decidedBy}\` always decides first`);
      continue;
    }
    // What lowering folds to a constant is decided here the same way, so no rule is dropped unwarned.
    const lowered = lowerCondition(rule.when, symbols, typing);
    const constant = lowered.op === "lit" ? lowered.value : null;
    const terms = constant === false ? [] : normalize(constant === true ? [TRUE_TERM] : builder.dnf(rule.when));
    if (terms.length === 0) {
      ctx.sink.report("W605", rule.when.span, `the condition of rule \`${name}\` is never true, so the rule never decides`);
      continue;
    }
    if (terms.some((t) => t.keys.size === 0)) {
      ctx.sink.report("W604", rule.when.span, `the condition of rule \`${name}\` is always true for valid signals`);
      decidedBy = name;
      continue;
    }
    const shadow = earlier.find((e) => terms.every((b) => e.terms.some((a) => implies(b, a))));
    if (shadow) {
      ctx.sink.report("W603", rule.name.span, `rule \`${name}\` is shadowed: whenever it matches, rule \`${shadow.name}\` matches first`);
    }
    earlier.push({ name, terms });
  }
  if (ast.otherwise && decidedBy !== null) {
    ctx.sink.report("W602", ast.otherwise.span, `\`otherwise\` is unreachable: rule \`${decidedBy}\` always decides first`);
  }
  if (!ast.otherwise && decidedBy === null) {
    const at = ast.rules[ast.rules.length - 1]?.span ?? ast.governs.span;
    ctx.sink.report(
      "W601",
      { start: at.end, end: at.end },
      "the policy has no `otherwise`: when no rule matches, the runtime answers SYS-006 (undecided)",
    );
  }
}

/** A normalized term and the names of what it constrains (`i:x`, `s:x`, `p:x`, `a:x`, `o:key`). */
interface Keyed {
  readonly term: Term;
  readonly keys: ReadonlySet<string>;
}

function keysOf(t: Term): Set<string> {
  return new Set([
    ...[...t.intervals.keys()].map((n) => `i:${n}`),
    ...[...t.sets.keys()].map((n) => `s:${n}`),
    ...[...t.present].map((n) => `p:${n}`),
    ...[...t.absent].map((n) => `a:${n}`),
    ...[...t.opaque].map((k) => `o:${k}`),
  ]);
}

/**
 * Intersects a term with what the schema guarantees; null when the term cannot hold for any valid signals.
 * Required signals are always present; a value set that is empty, or a signal both present and absent,
 * or an atom beside its own negation, makes the term impossible. A constraint the schema already
 * guarantees is dropped, so what remains in a term always narrows it: a term with nothing left holds for
 * all valid signals, and a term can only imply another that constrains a subset of what it constrains.
 */
function normalizeTerm(t: Term, symbols: Symbols): Term | null {
  const intervals = new Map(t.intervals);
  for (const [name, i] of t.intervals) {
    const s = symbols.signals.get(name)!;
    const declared = declaredInterval(s);
    const narrowed = tighten(intersectIntervals(i, declared), s.type.kind === "integer");
    if (isEmptyInterval(narrowed)) return null;
    if (intervalWithin(declared, narrowed)) intervals.delete(name);
    else intervals.set(name, narrowed);
  }
  const sets = new Map(t.sets);
  for (const [name, v] of t.sets) {
    const declared = declaredSet(symbols.signals.get(name)!);
    const narrowed = intersectSets(v, declared);
    if (isEmptySet(narrowed)) return null;
    if (setWithin(declared, narrowed)) sets.delete(name);
    else sets.set(name, narrowed);
  }
  const present = new Set([...t.present].filter((n) => symbols.signals.get(n)?.optional));
  for (const name of t.absent) {
    if (present.has(name) || !symbols.signals.get(name)?.optional) return null;
  }
  for (const key of t.opaque) if (t.opaque.has(key.startsWith("!") ? key.slice(1) : `!${key}`)) return null;
  return { intervals, sets, present, absent: t.absent, opaque: t.opaque };
}

/**
 * True when term `b` implies term `a`: whenever `b` holds, `a` holds. Both are normalized, so `a` can only be
 * implied when `b` constrains everything `a` does (the key check, which rejects most pairs cheaply).
 */
function implies(b: Keyed, a: Keyed): boolean {
  if (a.keys.size > b.keys.size) return false;
  for (const k of a.keys) if (!b.keys.has(k)) return false;
  for (const [name, i] of a.term.intervals) {
    if (!intervalWithin(b.term.intervals.get(name)!, i)) return false;
  }
  for (const [name, v] of a.term.sets) {
    if (!setWithin(b.term.sets.get(name)!, v)) return false;
  }
  return true;
}
