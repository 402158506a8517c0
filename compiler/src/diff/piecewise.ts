import { prepareExpression, type CompareKind, type IrExpr } from "@writ/runtime";
import { irNodes, mapOperands } from "./ir-operands.js";
import { valueAt } from "./truth.js";

/**
 * `abs`, `min` and `max` in a comparison of numbers or decimals, split into the cases that pick each operand:
 * `max(a, b) + c > L` is `(a >= b and a + c > L) or (a < b and b + c > L)`, `abs(x) > 500` is `(x >= 0 and x > 500) or
 * (x < 0 and -x > 500)`. Each piece is then a condition the other layers read (a chain on one signal, an octagon
 * relation, a term) or an opaque atom. The split has the four values the comparison has: the picked operand is the
 * value `min`, `max` or `abs` computes (exactly, on doubles and on decimals alike); where an operand is unknown both
 * guards are, so the whole is unknown unless both pieces are false, as the comparison of an unknown is; a guard that
 * faults faults the piece unless the piece is false, and the other piece reads the same faulting operand. A range
 * over several signals is split alike, into its two comparisons (`rangeAsComparisons`).
 */
const MAX_SPLITS = 4;

/** `e` split into its pieces, or null when it has no `abs`, `min` or `max` to split, or too many. */
export function piecewise(e: IrExpr): IrExpr | null {
  const kind = comparisonKind(e);
  if (kind === null) return null;
  const splits = irNodes(e).filter(isSplit);
  if (splits.length === 0 || splits.length > MAX_SPLITS) return null;
  const node = splits[0]!;
  const by = (replacement: IrExpr): IrExpr => replace(e, node, replacement);
  const cmp = (op: "ge" | "lt" | "le" | "gt", left: IrExpr, right: IrExpr): IrExpr => ({
    op: "cmp",
    cmp: op,
    kind: node.op === "arith" ? (node.kind === "decimal" ? "decimal" : "number") : kind,
    left,
    right,
  });
  const piece = (guard: IrExpr, body: IrExpr): IrExpr => ({ op: "and", args: [guard, body] });
  if (node.op === "abs") {
    const zero: IrExpr = { op: "lit", value: 0 };
    return {
      op: "or",
      args: [piece(cmp("ge", node.arg, zero), by(node.arg)), piece(cmp("lt", node.arg, zero), by({ op: "neg", arg: node.arg }))],
    };
  }
  if (node.op !== "arith") return null;
  const [keep, other] = node.fn === "max" ? (["ge", "lt"] as const) : (["le", "gt"] as const);
  return {
    op: "or",
    args: [piece(cmp(keep, node.left, node.right), by(node.left)), piece(cmp(other, node.left, node.right), by(node.right))],
  };
}

/**
 * `v in lo..hi` with constant ends as `v >= lo and v <= hi`, for a `v` that reads several signals (`closed_at -
 * opened_at in 1h..2h`), which the relations read as comparisons only; null for any other range. The two have the
 * same four values when the ends are numbers: `v` unknown or a fault makes both so.
 */
export function rangeAsComparisons(e: IrExpr): IrExpr | null {
  if (e.op !== "range") return null;
  const ends = [e.min, e.max].map((m) =>
    irNodes(m).some((n) => n.op === "signal" || n.op === "now") ? null : valueAt(prepareExpression(m), {}),
  );
  if (!ends.every((v) => typeof v === "number")) return null;
  const kind = e.kind ?? "number";
  return {
    op: "and",
    args: [
      { op: "cmp", cmp: "ge", kind, left: e.value, right: e.min },
      { op: "cmp", cmp: "le", kind, left: e.value, right: e.max },
    ],
  };
}

/** The comparison domain of a comparison of numbers or decimals (`cmp`, `in`, a range), or null for anything else. */
function comparisonKind(e: IrExpr): CompareKind | null {
  const kind = e.op === "cmp" || e.op === "in" ? e.kind : e.op === "range" ? (e.kind ?? "number") : null;
  return kind === "number" || kind === "decimal" ? kind : null;
}

/** `abs`, and `min` and `max` on numbers or decimals (not on time). */
function isSplit(e: IrExpr): boolean {
  return e.op === "abs" || (e.op === "arith" && (e.fn === "min" || e.fn === "max") && e.kind !== "time");
}

/** `e` with the node `target` (by identity) replaced by `by`. */
function replace(e: IrExpr, target: IrExpr, by: IrExpr): IrExpr {
  return e === target ? by : mapOperands(e, (o) => replace(o, target, by));
}
