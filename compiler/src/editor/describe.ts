import { signalsSchema } from "../emit/signals-schema.js";
import { printConstValue, printExpr, printSignal } from "../fmt/print-expr.js";
import { describeType, signalType } from "../phases/expression-types.js";
import type { ConstDecl, ListItem, PolicyAst, RuleDecl, SignalDecl } from "../syntax/ast.js";
import { tokenEnd, type SourceCheck } from "./check.js";
import type { Declaration } from "./symbols.js";

/** A declaration described for a person, in Markdown: its source form, its type and its doc comment. */
export function describeDeclaration(check: SourceCheck, d: Declaration): string {
  const ast = check.ast!;
  const parts = ((): string[] => {
    switch (d.kind) {
      case "signal":
        return describeSignal(ast, d.decl);
      case "constant":
        return describeConstant(ast, d.decl);
      case "rule":
        return describeRule(ast, d.decl);
    }
  })();
  const doc = docComment(check, d.decl.span.start.offset, d.decl.span.end.offset);
  return [...parts, ...(doc ? [doc] : [])].join("\n\n");
}

function fence(code: string): string {
  return `\`\`\`writ\n${code}\n\`\`\``;
}

function describeSignal(ast: PolicyAst, s: SignalDecl): string[] {
  const schema = (signalsSchema(ast)["properties"] as Record<string, unknown>)[s.name.name];
  const presence = s.optional ? "optional signal: when absent it is unknown in conditions (test it with `present`)" : "required signal";
  return [
    fence(printSignal(s)),
    `${presence}; type in conditions: \`${describeType(signalType(s))}\``,
    `schema: \`${JSON.stringify(schema)}\``,
  ];
}

function describeConstant(ast: PolicyAst, c: ConstDecl): string[] {
  return [fence(`const ${c.name.name} = ${printConstValue(c.value)}`), `constant: ${constantType(ast, c)}`];
}

function describeRule(ast: PolicyAst, r: RuleDecl): string[] {
  const position = ast.rules.indexOf(r) + 1;
  return [
    fence(`rule ${r.name.name}\n  when ${printExpr(r.when)}\n  ${r.verdict} ${JSON.stringify(r.reason.value)}`),
    `rule ${position} of ${ast.rules.length}: decides \`${r.verdict}\` when it is the first whose condition is true`,
  ];
}

/** A constant's type as the type-check phase names it: `integer`, `string`, `list of string`, ... */
function constantType(ast: PolicyAst, c: ConstDecl): string {
  if (c.value.kind === "scalar") return scalarTypeName(c.value.value, c.value.unit);
  const names = new Set(c.value.items.map((i) => itemTypeName(ast, i)));
  if (names.size === 0) return "empty list";
  if (names.has("number")) names.delete("integer");
  return names.size === 1 ? `list of ${[...names][0]}` : "list of mixed items (E507)";
}

function itemTypeName(ast: PolicyAst, item: ListItem): string {
  if (item.kind === "scalar") return scalarTypeName(item.value, item.unit);
  const target = ast.consts.find((c) => c.name.name === item.name);
  return target?.value.kind === "scalar" ? scalarTypeName(target.value.value, target.value.unit) : "invalid";
}

/** A scalar's type name: a duration (`unit`) is one, whatever its milliseconds. */
function scalarTypeName(v: string | number | boolean, unit?: string): string {
  if (unit !== undefined) return "duration";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

/**
 * The comment that documents a declaration: the comment lines directly above it (each alone on its line, no
 * blank line between), and a comment at the end of its last line. `#` and one space are removed.
 */
export function docComment(check: SourceCheck, start: number, end: number): string | null {
  const lines: string[] = [];
  const text = check.text;
  let boundary = lineStart(text, start);
  for (let i = check.comments.length - 1; i >= 0; i--) {
    const c = check.comments[i]!;
    if (c.startOffset >= start) continue;
    const commentLine = lineStart(text, c.startOffset);
    const ownLine = text.slice(commentLine, c.startOffset).trim() === "";
    const adjacent = text.slice(tokenEnd(c), boundary).trim() === "" && lineCount(text.slice(tokenEnd(c), boundary)) <= 1;
    if (!ownLine || !adjacent) break;
    lines.unshift(stripHash(c.image));
    boundary = commentLine;
  }
  const lineEnd = nextLineBreak(text, end);
  const trailing = check.comments.find((c) => c.startOffset >= end && c.startOffset < lineEnd);
  if (trailing) lines.push(stripHash(trailing.image));
  return lines.length > 0 ? lines.join("\n") : null;
}

function stripHash(comment: string): string {
  return comment.replace(/^#\s?/, "").trimEnd();
}

function lineStart(text: string, offset: number): number {
  const before = text.slice(0, offset);
  return Math.max(before.lastIndexOf("\n"), before.lastIndexOf("\r")) + 1;
}

function nextLineBreak(text: string, offset: number): number {
  const m = /[\r\n]/.exec(text.slice(offset));
  return m ? offset + m.index : text.length;
}

function lineCount(s: string): number {
  return s.split(/\r\n|\r|\n/).length - 1;
}
