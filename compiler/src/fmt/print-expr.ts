import { IR_OPERATORS } from "@writ/runtime";
import type { ConstValue, Expr, ListItem, NumberConstraint, ScalarValue, SignalDecl, StringConstraint } from "../syntax/ast.js";
import { LEFT_ASSOCIATIVE, OPERATORS, PRECEDENCE } from "../syntax/operators.js";

/**
 * Binding strength of an expression (syntax/operators.ts). A child is parenthesized exactly when it binds more
 * loosely than its position requires, so printing keeps the tree the parser built (and therefore the meaning).
 */
function precedence(e: Expr): number {
  switch (e.kind) {
    case "logical":
      return PRECEDENCE[e.op];
    case "unary":
    case "binary":
      return PRECEDENCE[OPERATORS[e.op].level];
    case "in":
    case "cidr":
    case "range":
    case "matches":
      return PRECEDENCE.predicate;
    case "call":
    case "ref":
    case "now":
    case "literal":
      return PRECEDENCE.primary;
  }
}

export function printExpr(e: Expr, min: number = PRECEDENCE.or): string {
  const text = printBare(e);
  return precedence(e) < min ? `(${text})` : text;
}

function printBare(e: Expr): string {
  const operand = PRECEDENCE.predicate + 1;
  switch (e.kind) {
    case "logical": {
      const own = precedence(e);
      return e.args.map((a) => printExpr(a, own + 1)).join(` ${IR_OPERATORS[e.op].symbol} `);
    }
    case "unary": {
      const symbol = IR_OPERATORS[e.op].symbol;
      // A word (`not`) needs a space before its operand, a sign (`-`) does not.
      return `${symbol}${/\w$/.test(symbol) ? " " : ""}${printExpr(e.arg, precedence(e))}`;
    }
    case "binary": {
      const own = precedence(e);
      const left = LEFT_ASSOCIATIVE[OPERATORS[e.op].level] ? own : own + 1;
      return `${printExpr(e.left, left)} ${IR_OPERATORS[e.op].symbol} ${printExpr(e.right, own + 1)}`;
    }
    case "in": {
      const set = e.set.kind === "list" ? printList(e.set.items) : printExpr(e.set, operand);
      return `${printExpr(e.value, operand)} ${e.negated ? "not in" : "in"} ${set}`;
    }
    case "cidr": {
      const set = e.set.kind === "list" ? printList(e.set.items) : printExpr(e.set, operand);
      return `${printExpr(e.value, operand)} ${e.negated ? "not " : ""}${IR_OPERATORS.in_cidr.symbol} ${set}`;
    }
    case "range":
      return `${printExpr(e.value, operand)} ${e.negated ? "not in" : "in"} ${printExpr(e.min, operand)}..${printExpr(e.max, operand)}`;
    case "matches":
      return `${printExpr(e.value, operand)} matches /${e.regex.pattern}/`;
    case "call":
      return `${e.fn.name}(${e.args.map((a) => printExpr(a)).join(", ")})`;
    case "ref":
      return e.name;
    case "now":
      return "now";
    case "literal":
      return e.text ?? printScalar(e.value);
  }
}

export function printScalar(v: ScalarValue): string {
  return typeof v === "string" ? JSON.stringify(v) : String(v);
}

export function printList(items: readonly ListItem[]): string {
  return `[${items.map((i) => (i.kind === "ref" ? i.name : (i.text ?? printScalar(i.value)))).join(", ")}]`;
}

export function printConstValue(v: ConstValue): string {
  return v.kind === "scalar" ? (v.text ?? printScalar(v.value)) : printList(v.items);
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
    case "decimal":
      return [`decimal(${t.places.text})`, ...t.constraints.map(printNumberConstraint)].join(" ");
    default:
      return t.kind;
  }
}

function printStringConstraint(c: StringConstraint): string {
  switch (c.kind) {
    case "matching":
      return `matching /${c.regex.pattern}/`;
    case "normalized":
      return "normalized";
    case "length":
      return `length ${c.min.text}..${c.max.text}`;
  }
}

function printNumberConstraint(c: NumberConstraint): string {
  return c.kind === "range" ? `${c.min.text}..${c.max.text}` : `${c.op} ${c.value.text}`;
}
