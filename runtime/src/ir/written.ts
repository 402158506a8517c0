import { IR_OPERATORS, isCalledArithOp, isFunctionName, UNARY_OPERATORS } from "./operators.js";
import { DURATION_UNITS, durationText } from "./time.js";
import type { IrExpr, Scalar } from "./types.js";

/** The IR expression as text: the operators' symbols, compound operands in parentheses. */
export function written(e: IrExpr): string {
  switch (e.op) {
    case "lit":
      return e.unit !== undefined && typeof e.value === "number" ? `${e.value / DURATION_UNITS[e.unit]}${e.unit}` : scalarText(e.value);
    case "signal":
      return e.name;
    case "now":
      return "now";
    case "present":
      return `${IR_OPERATORS.present.symbol}(${e.name})`;
    case "and":
    case "or":
      return e.args.map(operand).join(` ${IR_OPERATORS[e.op].symbol} `);
    case "cmp":
      return `${operand(e.left)} ${IR_OPERATORS[e.cmp].symbol} ${operand(e.right)}`;
    case "arith":
      if (isCalledArithOp(e.fn)) return `${IR_OPERATORS[e.fn].symbol}(${written(e.left)}, ${written(e.right)})`;
      return `${operand(e.left)} ${IR_OPERATORS[e.fn].symbol} ${operand(e.right)}`;
    case "str":
      return `${operand(e.left)} ${IR_OPERATORS[e.fn].symbol} ${operand(e.right)}`;
    case "in":
      // A list a duration is tested against holds its milliseconds: written as durations, as in the source.
      return `${operand(e.value)} ${IR_OPERATORS.in.symbol} [${e.set.map((v) => (typeof v === "number" && isDurationNode(e.value) ? durationText(v) : scalarText(v))).join(", ")}]`;
    case "range":
      return `${operand(e.value)} ${IR_OPERATORS.range.symbol} ${operand(e.min)}..${operand(e.max)}`;
    case "matches":
      return `${operand(e.value)} ${IR_OPERATORS.matches.symbol} /${e.pattern}/`;
    case "calendar":
      return `${IR_OPERATORS[e.fn].symbol}(${written(e.arg)}, ${scalarText(e.zone)})`;
    case "in_cidr":
      return `${operand(e.arg)} ${IR_OPERATORS.in_cidr.symbol} [${e.ranges.map(scalarText).join(", ")}]`;
    default: {
      const { symbol, notation } = UNARY_OPERATORS[e.op];
      if (notation === "call") return `${symbol}(${written(e.arg)})`;
      return `${symbol}${/\w$/.test(symbol) ? " " : ""}${operand(e.arg)}`;
    }
  }
}

/** A node whose number is a duration's milliseconds: a duration literal, or arithmetic on time that gives a number. */
export function isDurationNode(e: IrExpr): boolean {
  return (e.op === "lit" && e.unit !== undefined) || (e.op === "arith" && e.kind === "time");
}

export function scalarText(v: Scalar): string {
  return typeof v === "string" ? JSON.stringify(v) : String(v);
}

/** An operand as written inside a larger expression: in parentheses unless it is a literal, a signal, `now` or a call. */
function operand(e: IrExpr): string {
  const simple =
    e.op === "lit" ||
    e.op === "signal" ||
    e.op === "now" ||
    e.op === "calendar" ||
    isFunctionName(e.op) ||
    (e.op === "arith" && isCalledArithOp(e.fn));
  return simple ? written(e) : `(${written(e)})`;
}
