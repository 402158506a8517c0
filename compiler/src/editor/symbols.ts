import type { Span } from "../diagnostics/source.js";
import type { Symbols } from "../phases/resolve.js";
import type { ConstDecl, Ident, PolicyAst, RuleDecl, SignalDecl } from "../syntax/ast.js";

export type SymbolKind = "signal" | "constant" | "rule" | "function";

/** One place a name is written: a declaration, or a use resolved as the resolve phase resolves it. */
export interface Occurrence {
  readonly name: string;
  /** `unknown` for a use of a name nothing declares (the resolve phase reported it, E404 or E405). */
  readonly kind: SymbolKind | "unknown";
  readonly span: Span;
  readonly declaration: boolean;
}

export type Declaration =
  | { readonly kind: "signal"; readonly decl: SignalDecl }
  | { readonly kind: "constant"; readonly decl: ConstDecl }
  | { readonly kind: "rule"; readonly decl: RuleDecl };

/** Every name in a policy with its span: what go-to-definition, hover and rename read. */
export class SymbolIndex {
  /** In source order. */
  readonly occurrences: readonly Occurrence[];
  private readonly rules: ReadonlyMap<string, RuleDecl>;

  constructor(
    ast: PolicyAst,
    private readonly symbols: Symbols,
  ) {
    const rules = new Map<string, RuleDecl>();
    for (const r of ast.rules) if (!rules.has(r.name.name)) rules.set(r.name.name, r);
    this.rules = rules;
    const found: Occurrence[] = [];
    const declare = (kind: SymbolKind, id: Ident): void => {
      found.push({ name: id.name, kind, span: id.span, declaration: true });
    };
    for (const s of ast.signals) declare("signal", s.name);
    for (const c of ast.consts) declare("constant", c.name);
    for (const r of ast.rules) declare("rule", r.name);
    for (const b of ast.governs.binding) {
      found.push({ name: b.name, kind: symbols.signals.has(b.name) ? "signal" : "unknown", span: b.span, declaration: false });
    }
    for (const use of namesUsedIn([ast.consts.map((c) => c.value), ast.rules.map((r) => r.when)])) {
      found.push({ ...use, kind: use.kind === "function" ? "function" : this.valueKind(use.name), declaration: false });
    }
    this.occurrences = found.sort((a, b) => a.span.start.offset - b.span.start.offset);
  }

  /** The occurrence whose name covers `offset`, the end included (a cursor just after a name is on it). */
  at(offset: number): Occurrence | undefined {
    return this.occurrences.find((o) => o.span.start.offset <= offset && offset <= o.span.end.offset);
  }

  /** The declaration a name of this kind resolves to; for a name declared twice, the first, as resolve keeps it. */
  declaration(kind: SymbolKind | "unknown", name: string): Declaration | undefined {
    if (kind === "signal") {
      const decl = this.symbols.signals.get(name);
      return decl && { kind, decl };
    }
    if (kind === "constant") {
      const decl = this.symbols.consts.get(name);
      return decl && { kind, decl };
    }
    if (kind === "rule") {
      const decl = this.rules.get(name);
      return decl && { kind, decl };
    }
    return undefined;
  }

  /** Every occurrence of a name of this kind: its declarations and uses. */
  occurrencesOf(kind: SymbolKind, name: string): Occurrence[] {
    return this.occurrences.filter((o) => o.kind === kind && o.name === name);
  }

  /** A name in a condition or list is a signal when one is declared, else a constant (E402 keeps the two apart). */
  private valueKind(name: string): Occurrence["kind"] {
    if (this.symbols.signals.has(name)) return "signal";
    return this.symbols.consts.has(name) ? "constant" : "unknown";
  }
}

interface NameUse {
  readonly name: string;
  readonly kind: "value" | "function";
  readonly span: Span;
}

/**
 * Every name an expression or list uses: `ref` nodes (signals and constants) and the callee of each `call`.
 * It walks the nodes' fields rather than switching on expression kinds, so a new kind of expression whose
 * operands are expressions needs no change here.
 */
function namesUsedIn(node: unknown): NameUse[] {
  const out: NameUse[] = [];
  const visit = (n: unknown): void => {
    if (Array.isArray(n)) {
      n.forEach(visit);
      return;
    }
    if (n === null || typeof n !== "object") return;
    const node = n as { kind?: unknown; name?: unknown; span?: Span; fn?: Ident };
    if (node.kind === "ref" && typeof node.name === "string" && node.span) out.push({ name: node.name, kind: "value", span: node.span });
    if (node.kind === "call" && node.fn) out.push({ name: node.fn.name, kind: "function", span: node.fn.span });
    for (const [key, value] of Object.entries(node)) if (key !== "span" && key !== "fn") visit(value);
  };
  visit(node);
  return out;
}
