import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { buildAst } from "../phases/build-ast.js";
import { createContext } from "../phases/context.js";
import { lex } from "../phases/lex.js";
import { parse } from "../phases/parse.js";
import type { Comment, PolicyAst } from "../syntax/ast.js";
import { printConstValue, printExpr, printList, printSignal } from "./print-expr.js";

export type FormatResult = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly errors: readonly Diagnostic[] };

/** Rules and lists longer than this break over several lines. */
const WIDTH = 100;

/**
 * `writ fmt`: the canonical layout of a policy. It prints the syntax tree, so it is meaning-preserving by
 * construction (the IR of the output equals the IR of the input; a test checks it) and idempotent.
 * Comments are kept: a comment is printed on its own line before the item that follows it, or at the end
 * of the line it ended on. A policy with syntax errors is not formatted.
 */
export function formatSource(path: string, text: string): FormatResult {
  const ctx = createContext(path, text);
  const { tokens, comments } = lex(ctx);
  const cst = ctx.sink.errorCount === 0 ? parse(ctx, tokens) : null;
  const ast = cst !== null && cst !== undefined && ctx.sink.errorCount === 0 ? buildAst(ctx, cst, comments) : null;
  const errors = ctx.sink.all().filter((d) => d.severity === "error");
  if (!ast || errors.length > 0) return { ok: false, errors };
  return { ok: true, text: new Printer(ast, text).print() };
}

interface Item {
  /** Offsets of the item in the source, for placing comments and keeping blank lines. */
  readonly start: number;
  readonly end: number;
  readonly lines: readonly string[];
  readonly indent: string;
}

class Printer {
  private readonly comments: Comment[];
  private readonly out: string[] = [];

  constructor(
    private readonly ast: PolicyAst,
    private readonly source: string,
  ) {
    this.comments = [...ast.comments];
  }

  print(): string {
    const a = this.ast;
    this.section([
      this.item(a.policyId.span.start.offset, a.version.span, [
        `policy ${JSON.stringify(a.policyId.value)} version ${JSON.stringify(a.version.value)}`,
      ]),
      this.item(a.governs.span.start.offset, a.governs.span, [printGoverns(a)]),
    ]);
    this.blank();
    this.section([this.item(a.signalsBlock.start.offset, a.signalsBlock.start, ["signals {"])]);
    this.section(a.signals.map((s) => this.item(s.span.start.offset, s.span, [printSignal(s)], "  ")));
    this.leadingComments(a.signalsBlock.end.offset, "  ", a.signals[a.signals.length - 1]?.span.end.offset ?? -1);
    this.out.push("}");
    if (a.consts.length > 0) {
      this.blank();
      this.section(a.consts.map((c) => this.item(c.span.start.offset, c.span, printConst(c.name.name, c.value))));
    }
    const decisions = [
      ...a.rules.map((r) =>
        this.item(
          r.span.start.offset,
          r.span,
          printDecision(`rule ${r.name.name}`, `when ${printExpr(r.when)}`, r.verdict, r.reason.value),
        ),
      ),
      ...(a.otherwise
        ? [
            this.item(
              a.otherwise.span.start.offset,
              a.otherwise.span,
              printDecision("otherwise", null, a.otherwise.verdict, a.otherwise.reason.value),
            ),
          ]
        : []),
    ];
    if (decisions.length > 0) {
      this.blank();
      this.section(decisions);
    }
    const rest = this.comments.splice(0);
    if (rest.length > 0) {
      this.blank();
      for (const c of rest) this.out.push(c.text.trimEnd());
    }
    return `${this.out.join("\n")}\n`;
  }

  private item(start: number, end: { offset: number } | { end: { offset: number } }, lines: string[], indent = ""): Item {
    return { start, end: "end" in end ? end.end.offset : end.offset, lines, indent };
  }

  /** Prints items in order with their comments; keeps one blank line where the source had any. */
  private section(items: readonly Item[]): void {
    let previousEnd = -1;
    for (const item of items) {
      const after = this.leadingComments(item.start, item.indent, previousEnd);
      if (after >= 0 && this.blankBetween(after, item.start)) this.blank();
      const lines = item.lines.map((l) => item.indent + l);
      const trailing = this.trailingComment(item.end);
      if (trailing) lines[lines.length - 1] += `  ${trailing.text.trimEnd()}`;
      this.out.push(...lines);
      previousEnd = item.end;
    }
  }

  /**
   * Comments that start before `offset` and were not yet printed go on their own lines, keeping one blank
   * line wherever the source had one between them (or between the previous item and the first of them).
   * Returns where the last of them ends, or `previousEnd` when there were none.
   */
  private leadingComments(offset: number, indent: string, previousEnd: number): number {
    let end = previousEnd;
    while (this.comments.length > 0 && this.comments[0]!.span.start.offset < offset) {
      const c = this.comments.shift()!;
      if (end >= 0 && this.blankBetween(end, c.span.start.offset)) this.blank();
      this.out.push(indent + c.text.trimEnd());
      end = c.span.end.offset;
    }
    return end;
  }

  /** A comment on the same line as the end of an item stays at the end of that line. */
  private trailingComment(end: number): Comment | undefined {
    const next = this.comments[0];
    if (!next || next.span.start.offset < end) return undefined;
    if (/[\r\n]/.test(this.source.slice(end, next.span.start.offset))) return undefined;
    return this.comments.shift();
  }

  /** True when a line with nothing on it (not even a comment) separates the two offsets. */
  private blankBetween(from: number, to: number): boolean {
    const lines = this.source.slice(from, to).split(/\r\n|\r|\n/);
    return lines.slice(1, -1).some((l) => l.trim() === "");
  }

  private blank(): void {
    if (this.out.length > 0 && this.out[this.out.length - 1] !== "") this.out.push("");
  }
}

function printGoverns(a: PolicyAst): string {
  const binding = a.governs.binding.map((b) => b.name).join(", ");
  return `governs ${JSON.stringify(a.governs.action.value)}${binding ? ` binding ${binding}` : ""}`;
}

function printConst(name: string, value: PolicyAst["consts"][number]["value"]): string[] {
  const line = `const ${name} = ${printConstValue(value)}`;
  if (line.length <= WIDTH || value.kind !== "list") return [line];
  const items = value.items.map((i) => printList([i]).slice(1, -1));
  return [`const ${name} = [`, ...items.map((i, n) => `  ${i}${n < items.length - 1 ? "," : ""}`), "]"];
}

function printDecision(head: string, when: string | null, verdict: string, reason: string): string[] {
  const tail = `${verdict} ${JSON.stringify(reason)}`;
  const one = [head, when, tail].filter((p) => p !== null).join(" ");
  if (one.length <= WIDTH) return [one];
  return [head, ...(when ? [`  ${when}`] : []), `  ${tail}`];
}
