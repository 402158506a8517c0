import { isFunctionName, type InfixOp } from "@writ/runtime";
import { operandsOf, type ConstDecl, type Expr, type Ident, type ListItem, type PolicyAst, type SignalDecl } from "../syntax/ast.js";
import { FUNCTION_NAMES } from "../syntax/operators.js";
import { suggest } from "../diagnostics/suggest.js";
import { unquotedString } from "../syntax/habits.js";
import type { PhaseContext } from "./context.js";

export interface Symbols {
  readonly signals: ReadonlyMap<string, SignalDecl>;
  readonly consts: ReadonlyMap<string, ConstDecl>;
}

/**
 * Phase resolve. Guarantees: names are declared once (signals, constants and rules each in their own
 * namespace; a constant may not reuse a signal's name); every name in a condition, list or binding refers
 * to a declaration; every call names a builtin. Warns about signals and constants nothing uses.
 */
export function resolve(ctx: PhaseContext, ast: PolicyAst): Symbols {
  const signals = declareOnce(ctx, ast.signals, "E401", "signal");
  const consts = new Map<string, ConstDecl>();
  for (const c of ast.consts) {
    const earlier = consts.get(c.name.name);
    if (earlier || signals.has(c.name.name)) {
      const what = earlier ? "a constant" : "a signal";
      ctx.sink.report("E402", c.name.span, `\`${c.name.name}\` is already declared as ${what}`);
    } else {
      consts.set(c.name.name, c);
    }
  }
  declareOnce(ctx, ast.rules, "E403", "rule");

  const used = new Set<string>();
  const known = [...signals.keys(), ...consts.keys()];
  /** `beside`: what the name is compared with, when that is a string (an unknown name there is most likely one unquoted). */
  const use = (name: string, span: Ident["span"], beside?: StringSide): void => {
    if (!signals.has(name) && !consts.has(name)) {
      const suggestion = suggest(name, known);
      const ofEnum = beside !== undefined && beside !== "string" && beside.values.includes(name) ? beside : null;
      // A name within two edits of a declared one is more likely misspelt (`curency == "USD"`), unless the enum has it.
      if (ofEnum !== null || (beside !== undefined && suggestion.length === 0)) {
        const habit = unquotedString(name, ofEnum);
        ctx.sink.report("E404", span, `unknown name \`${name}\`; ${habit.message}`, [habit.hint]);
      } else {
        ctx.sink.report("E404", span, `unknown name \`${name}\``, suggestion);
      }
    }
    used.add(name);
  };
  const stringSide = (e: Expr | ListItem | undefined): StringSide | undefined => {
    if (e === undefined) return undefined;
    if (e.kind === "literal" || e.kind === "scalar") return typeof e.value === "string" ? "string" : undefined;
    if (e.kind !== "ref") return undefined;
    const type = signals.get(e.name)?.type;
    if (type?.kind === "enum") return { signal: e.name, values: type.values.map((v) => v.value) };
    if (type?.kind === "string") return "string";
    const c = consts.get(e.name)?.value;
    return c?.kind === "scalar" && typeof c.value === "string" ? "string" : undefined;
  };
  const useItems = (items: readonly ListItem[], value?: Expr): void => {
    const beside = stringSide(value) ?? stringSide(items.find((i) => stringSide(i) !== undefined));
    for (const item of items) if (item.kind === "ref") use(item.name, item.span, beside);
  };
  const visit = (e: Expr, beside?: Expr): void => {
    if (e.kind === "ref") use(e.name, e.span, stringSide(beside));
    if (e.kind === "call" && !isFunctionName(e.fn.name)) {
      const names = FUNCTION_NAMES.map((f) => `\`${f}\``);
      ctx.sink.report("E407", e.fn.span, `unknown function \`${e.fn.name}\``, [
        `the functions are ${names.slice(0, -1).join(", ")} and ${names[names.length - 1]!}`,
      ]);
    }
    if ((e.kind === "in" || e.kind === "cidr") && e.set.kind === "list") useItems(e.set.items, e.value);
    if (e.kind === "binary" && COMPARED_AS_STRINGS.has(e.op)) {
      visit(e.left, e.right);
      visit(e.right, e.left);
    } else {
      operandsOf(e).forEach((o) => visit(o));
    }
  };
  for (const c of ast.consts) if (c.value.kind === "list") useItems(c.value.items);
  for (const r of ast.rules) visit(r.when);

  const bound = new Set<string>();
  for (const b of ast.governs.binding) {
    if (bound.has(b.name)) {
      ctx.sink.report("E406", b.span, `signal \`${b.name}\` is bound twice`);
    } else if (!signals.has(b.name)) {
      ctx.sink.report("E405", b.span, `binding names \`${b.name}\`, which is not a declared signal`, suggest(b.name, [...signals.keys()]));
    }
    bound.add(b.name);
    used.add(b.name);
  }
  for (const s of ast.signals) {
    if (!used.has(s.name.name) && signals.get(s.name.name) === s) {
      ctx.sink.report("W401", s.name.span, `signal \`${s.name.name}\` is declared but no rule or binding uses it`);
    }
  }
  for (const c of ast.consts) {
    if (!used.has(c.name.name) && consts.get(c.name.name) === c) {
      ctx.sink.report("W402", c.name.span, `constant \`${c.name.name}\` is declared but never used`);
    }
  }
  return { signals, consts };
}

/** What an unknown name is compared with: a string, or an enum signal and its values. */
type StringSide = "string" | { readonly signal: string; readonly values: readonly string[] };

/** Operators whose operands may be two strings: a name beside a string there may be a string left unquoted. */
const COMPARED_AS_STRINGS: ReadonlySet<InfixOp> = new Set(["eq", "ne", "starts_with", "ends_with", "contains"]);

function declareOnce<T extends { readonly name: Ident }>(
  ctx: PhaseContext,
  decls: readonly T[],
  code: "E401" | "E403",
  what: string,
): Map<string, T> {
  const map = new Map<string, T>();
  for (const d of decls) {
    if (map.has(d.name.name)) ctx.sink.report(code, d.name.span, `${what} \`${d.name.name}\` is declared twice`);
    else map.set(d.name.name, d);
  }
  return map;
}
