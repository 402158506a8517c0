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
  type Term,
} from "../analysis/domain.js";
import { DnfBuilder } from "../analysis/dnf.js";
import type { PolicyAst, SignalDecl } from "../syntax/ast.js";
import type { PhaseContext } from "./context.js";
import type { Symbols } from "./resolve.js";
import type { Typing } from "./type-check.js";

/**
 * Phase analyze. Guarantees: a warning names every rule the analysis proves can never decide (never true,
 * shadowed by an earlier rule, or after a rule that always decides), every condition that is always true,
 * and a missing catch-all. The analysis is sound, not complete: it never warns about a rule that can
 * decide, and it may miss some that cannot. It changes nothing.
 */
export function analyze(ctx: PhaseContext, ast: PolicyAst, symbols: Symbols, _typing: Typing): void {
  const builder = new DnfBuilder(symbols);
  const normalize = (terms: Term[]): Term[] => terms.map((t) => normalizeTerm(t, symbols)).filter((t): t is Term => t !== null);
  const earlier: { name: string; terms: Term[] }[] = [];
  let decidedBy: string | null = null;

  for (const rule of ast.rules) {
    const name = rule.name.name;
    if (decidedBy !== null) {
      ctx.sink.report("W602", rule.name.span, `rule \`${name}\` is unreachable: rule \`${decidedBy}\` always decides first`);
      continue;
    }
    const terms = normalize(builder.dnf(rule.when));
    if (terms.length === 0) {
      ctx.sink.report("W605", rule.when.span, `the condition of rule \`${name}\` is never true, so the rule never decides`);
      continue;
    }
    if (terms.some((t) => isUniversal(t, symbols))) {
      ctx.sink.report("W604", rule.when.span, `the condition of rule \`${name}\` is always true for valid signals`);
      decidedBy = name;
      continue;
    }
    const shadow = earlier.find((e) => terms.every((b) => e.terms.some((a) => implies(b, a, symbols))));
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

/**
 * Intersects a term with what the schema guarantees; null when the term cannot hold for any valid signals.
 * Required signals are always present; a value set that is empty, or a signal both present and absent,
 * or an atom beside its own negation, makes the term impossible.
 */
function normalizeTerm(t: Term, symbols: Symbols): Term | null {
  const intervals = new Map(t.intervals);
  for (const [name, i] of t.intervals) {
    const s = symbols.signals.get(name)!;
    const narrowed = tighten(intersectIntervals(i, declaredInterval(s)), s.type.kind === "integer");
    if (isEmptyInterval(narrowed)) return null;
    intervals.set(name, narrowed);
  }
  const sets = new Map(t.sets);
  for (const [name, v] of t.sets) {
    const narrowed = intersectSets(v, declaredSet(symbols.signals.get(name)!));
    if (isEmptySet(narrowed)) return null;
    sets.set(name, narrowed);
  }
  const present = new Set([...t.present].filter((n) => symbols.signals.get(n)?.optional));
  for (const name of t.absent) {
    if (present.has(name) || !symbols.signals.get(name)?.optional) return null;
  }
  for (const key of t.opaque) if (t.opaque.has(key.startsWith("!") ? key.slice(1) : `!${key}`)) return null;
  return { intervals, sets, present, absent: t.absent, opaque: t.opaque };
}

/** True when every valid set of signals satisfies the term. */
function isUniversal(t: Term, symbols: Symbols): boolean {
  if (t.opaque.size > 0 || t.absent.size > 0 || t.present.size > 0) return false;
  for (const [name, i] of t.intervals) if (!intervalWithin(declaredInterval(signal(symbols, name)), i)) return false;
  for (const [name, v] of t.sets) if (!setWithin(declaredSet(signal(symbols, name)), v)) return false;
  return true;
}

/** True when term `b` implies term `a`: whenever `b` holds, `a` holds. Both are normalized. */
function implies(b: Term, a: Term, symbols: Symbols): boolean {
  for (const key of a.opaque) if (!b.opaque.has(key)) return false;
  for (const name of a.absent) if (!b.absent.has(name)) return false;
  for (const name of a.present) if (!b.present.has(name)) return false;
  for (const [name, i] of a.intervals) {
    const s = signal(symbols, name);
    if (s.optional && !b.present.has(name)) return false;
    if (!intervalWithin(b.intervals.get(name) ?? declaredInterval(s), i)) return false;
  }
  for (const [name, v] of a.sets) {
    const s = signal(symbols, name);
    if (s.optional && !b.present.has(name)) return false;
    if (!setWithin(b.sets.get(name) ?? declaredSet(s), v)) return false;
  }
  return true;
}

function signal(symbols: Symbols, name: string): SignalDecl {
  return symbols.signals.get(name)!;
}
