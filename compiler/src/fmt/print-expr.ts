import type { ConstValue, Expr, ListItem, NumberConstraint, ScalarValue, SignalDecl, StringConstraint } from "../syntax/ast.js";

/**
 * Binding strength, loosest first. A child is parenthesized exactly when it binds more loosely than its
 * position requires, so printing keeps the tree the parser built (and therefore the meaning).
 */
const PREC = { or: 1, and: 2, not: 3, predicate: 4, additive: 5, multiplicative: 6, unary: 7, primary: 8 } as const;

function precedence(e: Expr): number {
  switch (e.kind) {
    case "or":
      return PREC.or;
    case "and":
      return PREC.and;
    case "not":
      return PREC.not;
    case "compare":
    case "in":
    case "range":
    case "string-op":
    case "matches":
      return PREC.predicate;
    case "arith":
      return e.op === "+" || e.op === "-" ? PREC.additive : PREC.multiplicative;
    case "neg":
      return PREC.unary;
    default:
      return PREC.primary;
  }
}

export function printExpr(e: Expr, min: number = PREC.or): string {
  const text = printBare(e);
  return precedence(e) < min ? `(${text})` : text;
}

function printBare(e: Expr): string {
  switch (e.kind) {
    case "or":
      return e.args.map((a) => printExpr(a, PREC.and)).join(" or ");
    case "and":
      return e.args.map((a) => printExpr(a, PREC.not)).join(" and ");
    case "not":
      return `not ${printExpr(e.arg, PREC.not)}`;
    case "compare":
      return `${printExpr(e.left, PREC.additive)} ${e.op} ${printExpr(e.right, PREC.additive)}`;
    case "string-op":
      return `${printExpr(e.left, PREC.additive)} ${e.op} ${printExpr(e.right, PREC.additive)}`;
    case "in": {
      const set = e.set.kind === "list" ? printList(e.set.items) : printExpr(e.set, PREC.additive);
      return `${printExpr(e.value, PREC.additive)} ${e.negated ? "not in" : "in"} ${set}`;
    }
    case "range":
      return `${printExpr(e.value, PREC.additive)} ${e.negated ? "not in" : "in"} ${printExpr(e.min, PREC.additive)}..${printExpr(e.max, PREC.additive)}`;
    case "matches":
      return `${printExpr(e.value, PREC.additive)} matches /${e.regex.pattern}/`;
    case "arith": {
      const own = precedence(e);
      return `${printExpr(e.left, own)} ${e.op} ${printExpr(e.right, own + 1)}`;
    }
    case "neg":
      return `-${printExpr(e.arg, PREC.unary)}`;
    case "call":
      return `${e.fn.name}(${e.args.map((a) => printExpr(a)).join(", ")})`;
    case "ref":
      return e.name;
    case "literal":
      return printScalar(e.value);
  }
}

export function printScalar(v: ScalarValue): string {
  return typeof v === "string" ? JSON.stringify(v) : String(v);
}

export function printList(items: readonly ListItem[]): string {
  return `[${items.map((i) => (i.kind === "ref" ? i.name : printScalar(i.value))).join(", ")}]`;
}

export function printConstValue(v: ConstValue): string {
  return v.kind === "scalar" ? printScalar(v.value) : printList(v.items);
}

export function printSignal(s: SignalDecl): string {
  return `${s.name.name}${s.optional ? "?" : ""}: ${printSignalType(s)}`;
}

function printSignalType(s: SignalDecl): string {
  const t = s.type;
  switch (t.kind) {
    case "enum":
      return t.values.map((v) => JSON.stringify(v.value)).join(" | ");
    case "string":
      return ["string", ...t.constraints.map(printStringConstraint)].join(" ");
    case "number":
    case "integer":
      return [t.kind, ...t.constraints.map(printNumberConstraint)].join(" ");
    default:
      return t.kind;
  }
}

function printStringConstraint(c: StringConstraint): string {
  return c.kind === "matching" ? `matching /${c.regex.pattern}/` : `length ${c.min.value}..${c.max.value}`;
}

function printNumberConstraint(c: NumberConstraint): string {
  return c.kind === "range" ? `${c.min.value}..${c.max.value}` : `${c.op} ${c.value.value}`;
}
