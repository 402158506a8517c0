import {
  ARITHMETIC_OPERATORS,
  COMPARISON_OPERATORS,
  EvaluationFaultSignal,
  IR_VERSION,
  UNARY_OPERATORS,
  carriesExactly,
  decimalPlaces,
  decimalText,
  isCalendarOp,
  isCalledArithOp,
  isComparison,
  irOperands,
  isFunctionName,
  isScalar,
  isStringOp,
  prepareExpression,
  type ArithOp,
  type DurationUnit,
  type IrExpr,
  type IrRule,
  type IrSignal,
  type PolicyIr,
  type Scalar,
  type UnaryOp,
} from "@writ/runtime";
import type { Expr, ListItem, PolicyAst } from "../syntax/ast.js";
import type { PhaseContext } from "./context.js";
import type { Symbols } from "./resolve.js";
import type { Typing } from "./expression-types.js";
import { zoneName } from "./type-check.js";
import { zoneTables } from "../zones/tz.js";

/**
 * Phase lower. Guarantees: the IR evaluates exactly as the source reads (docs/language.md "Evaluation"):
 * constants are inlined; constant subexpressions are folded only where the result is certain (arithmetic that does
 * not fault, exact beside decimals; Kleene identities); rules that can never fire (condition folded to `false`) and
 * rules after one that always fires (condition folded to `true`) are dropped, which changes no decision.
 * The IR carries no source positions, so reformatting a policy leaves its IR unchanged; its version is the lowest
 * that has what the policy uses (irVersionOf), so a policy that uses nothing of version 2 keeps its bytes.
 */
export function lower(_ctx: PhaseContext, ast: PolicyAst, symbols: Symbols, typing: Typing): PolicyIr {
  const lowering = new Lowering(symbols, typing);
  const rules: IrRule[] = [];
  for (const r of ast.rules) {
    const when = lowering.expr(r.when);
    if (when.op === "lit" && when.value === false) continue;
    rules.push({ id: r.name.name, verdict: r.verdict, reason: r.reason.value, when });
    if (when.op === "lit" && when.value === true) break;
  }
  const signals: Record<string, IrSignal> = {};
  for (const s of ast.signals) {
    signals[s.name.name] =
      s.type.kind === "decimal"
        ? { type: "decimal", optional: s.optional, scale: s.type.places.value }
        : s.type.kind === "semver" || s.type.kind === "ip"
          ? { type: "string", format: s.type.kind, optional: s.optional }
          : { type: s.type.kind, optional: s.optional };
  }
  const zones = new Set(rules.flatMap((r) => zonesOf(r.when)));
  return {
    irVersion: irVersionOf(ast, rules),
    policyId: ast.policyId.value,
    version: ast.version.value,
    governs: { action: ast.governs.action.value, binding: ast.governs.binding.map((b) => b.name) },
    signals,
    rules,
    otherwise: ast.otherwise ? { verdict: ast.otherwise.verdict, reason: ast.otherwise.reason.value } : null,
    // Only the zones the kept rules name: a policy that names none has no `zones`, and its IR keeps its bytes.
    ...(zones.size > 0 ? { zones: zoneTables(zones) } : {}),
  };
}

/** The zones a condition's calendar fields name. */
function zonesOf(e: IrExpr): string[] {
  return [...(e.op === "calendar" ? [e.zone] : []), ...irOperands(e).flatMap(zonesOf)];
}

/**
 * IR version 1 when the policy uses nothing version 2 added (a decimal signal, a `normalized` string, `lower`) and
 * no arithmetic: runtimes before version 2 decide such a policy as this one does. Otherwise version 2, which they
 * refuse, since their arithmetic did not fault and they know no decimals.
 */
export function irVersionOf(ast: PolicyAst, rules: readonly IrRule[]): 1 | typeof IR_VERSION {
  const declared = ast.signals.some(
    (s) =>
      s.type.kind === "decimal" ||
      s.type.kind === "semver" ||
      s.type.kind === "ip" ||
      (s.type.kind === "string" && s.type.constraints.some((c) => c.kind === "normalized")),
  );
  return declared || rules.some((r) => usesVersion2(r.when)) ? IR_VERSION : 1;
}

/** The nodes version 2 added: arithmetic (which faults), `lower`, `abs`, `in_cidr` and `now`. */
const VERSION_2_NODES: ReadonlySet<IrExpr["op"]> = new Set(["arith", "lower", "abs", "in_cidr", "now", "calendar"]);

function usesVersion2(e: IrExpr): boolean {
  return VERSION_2_NODES.has(e.op) || irOperands(e).some(usesVersion2);
}

/**
 * One condition as the IR will have it. The analyze phase asks this too, so every rule lowering drops
 * (condition folded to `false`, or after one folded to `true`) has had its warning.
 */
export function lowerCondition(e: Expr, symbols: Symbols, typing: Typing): IrExpr {
  return new Lowering(symbols, typing).expr(e);
}

class Lowering {
  constructor(
    private readonly symbols: Symbols,
    private readonly typing: Typing,
  ) {}

  expr(e: Expr): IrExpr {
    switch (e.kind) {
      case "literal":
        return lit(e.value, e.unit);
      case "now":
        return { op: "now" };
      case "ref": {
        const c = this.symbols.consts.get(e.name);
        if (c && c.value.kind === "scalar") return lit(c.value.value, c.value.unit);
        return { op: "signal", name: e.name };
      }
      case "call": {
        const fn = e.fn.name;
        const arg = e.args[0]!;
        if (!isFunctionName(fn)) throw new Error(`call of unknown function \`${fn}\` reached lowering`); // E407 stops before
        if (isCalledArithOp(fn)) return arithmetic(fn, this.expr(arg), this.expr(e.args[1]!), this.isDecimal(e));
        if (isCalendarOp(fn)) return { op: "calendar", fn, arg: this.expr(arg), zone: zoneName(e.args[1]!, this.symbols)! };
        if (fn === "present") {
          const name = arg.kind === "ref" ? arg.name : "";
          // A required signal is always present once the signals validate.
          return this.symbols.signals.get(name)?.optional ? { op: "present", name } : lit(true);
        }
        return unary(fn, this.expr(arg));
      }
      case "unary": {
        const arg = this.expr(e.arg);
        return e.op === "not" ? negate(arg) : unary(e.op, arg);
      }
      case "logical":
        return logical(
          e.op,
          e.args.map((a) => this.expr(a)),
        );
      case "binary":
        return this.binary(e);
      case "in": {
        const kind = this.typing.kinds.get(e)!;
        const value = this.expr(e.value);
        const items = e.set.kind === "list" ? e.set.items : this.listOf(e.set);
        const set = dedupe(items.map((i) => this.item(i)));
        const test: IrExpr = { op: "in", kind, value, set };
        return e.negated ? negate(test) : test;
      }
      case "range": {
        const value = this.expr(e.value);
        const decimal = this.typing.kinds.get(e) === "decimal" ? ({ kind: "decimal" } as const) : {};
        const range: IrExpr = { op: "range", ...decimal, value, min: this.expr(e.min), max: this.expr(e.max) };
        return e.negated ? negate(range) : range;
      }
      case "matches":
        return { op: "matches", value: this.expr(e.value), pattern: e.regex.pattern };
      case "cidr": {
        const items = e.set.kind === "list" ? e.set.items : this.listOf(e.set);
        const test: IrExpr = { op: "in_cidr", arg: this.expr(e.value), ranges: [...new Set(items.map((i) => String(this.item(i))))] };
        return e.negated ? negate(test) : test;
      }
    }
  }

  /**
   * An infix operator, encoded as its family's IR node. What is folded is fixed (comparisons of two literals but
   * timestamps, finite arithmetic on literals; string tests never): folding more would change bundle hashes.
   */
  private binary(e: Extract<Expr, { kind: "binary" }>): IrExpr {
    const left = this.expr(e.left);
    const right = this.expr(e.right);
    const op = e.op;
    if (isComparison(op)) {
      const kind = this.typing.kinds.get(e)!;
      if (left.op === "lit" && right.op === "lit" && (kind === "number" || kind === "string" || kind === "boolean"))
        return lit(COMPARISON_OPERATORS[op].test(left.value, right.value));
      return { op: "cmp", cmp: op, kind, left, right };
    }
    if (isStringOp(op)) return { op: "str", fn: op, left, right };
    // On time, never folded: a duration keeps the unit it was written in.
    const t = this.typing.types.get(e)?.t;
    if (t === "timestamp" || t === "duration") return { op: "arith", fn: op, kind: "time", left, right };
    return arithmetic(op, left, right, this.isDecimal(e));
  }

  /** Whether a node computes exactly, as a decimal (type-check). */
  private isDecimal(e: Expr): boolean {
    const type = this.typing.types.get(e);
    return type?.t === "number" && type.exact === "decimal";
  }

  private listOf(e: Expr): readonly ListItem[] {
    const c = e.kind === "ref" ? this.symbols.consts.get(e.name) : undefined;
    return c?.value.kind === "list" ? c.value.items : [];
  }

  private item(i: ListItem): Scalar {
    if (i.kind === "scalar") return i.value;
    const c = this.symbols.consts.get(i.name);
    return c?.value.kind === "scalar" ? c.value.value : "";
  }
}

function lit(value: Scalar, unit?: DurationUnit): IrExpr {
  return unit === undefined ? { op: "lit", value } : { op: "lit", value, unit };
}

/** A unary operator or built-in function; applied to a literal, folded when the result is a finite value. */
function unary(op: UnaryOp, arg: IrExpr): IrExpr {
  if (arg.op === "lit") {
    const v = UNARY_OPERATORS[op].evaluate(arg.value);
    if (isScalar(v)) return lit(v === 0 ? 0 : v);
  }
  return { op, arg };
}

/**
 * Arithmetic, folded when both operands are literals and the result is certain: on doubles, a result that does not
 * fault; beside a decimal (`exact`), the exact result when a JSON number carries it (else the node stays, computed
 * exactly when a request comes).
 */
function arithmetic(fn: ArithOp, left: IrExpr, right: IrExpr, exact: boolean): IrExpr {
  const node: IrExpr = exact ? { op: "arith", fn, kind: "decimal", left, right } : { op: "arith", fn, left, right };
  if (left.op !== "lit" || right.op !== "lit" || typeof left.value !== "number" || typeof right.value !== "number") return node;
  if (!exact) {
    const a = left.value;
    const b = right.value;
    const v = ARITHMETIC_OPERATORS[fn].evaluate(a, b);
    return ARITHMETIC_OPERATORS[fn].faultOf(a, b, v) === null ? lit(v === 0 ? 0 : v) : node;
  }
  try {
    const units = prepareExpression(node)({});
    if (typeof units !== "bigint") return node;
    const text = decimalText(units, decimalPlaces(node, {}));
    const v = Number(text);
    return carriesExactly(text, v) ? lit(v === 0 ? 0 : v) : node;
  } catch (e) {
    if (e instanceof EvaluationFaultSignal) return node;
    throw e;
  }
}

function negate(e: IrExpr): IrExpr {
  if (e.op === "lit" && typeof e.value === "boolean") return lit(!e.value);
  if (e.op === "not") return e.arg;
  return { op: "not", arg: e };
}

/**
 * Flattens nested and/or and applies the identities that hold in Kleene logic:
 * `false` absorbs `and`, `true` absorbs `or`, and the identity element disappears.
 */
function logical(op: "and" | "or", args: readonly IrExpr[]): IrExpr {
  const absorbing = op === "or";
  const out: IrExpr[] = [];
  for (const a of args) {
    if (a.op === "lit" && typeof a.value === "boolean") {
      if (a.value === absorbing) return lit(absorbing);
      continue;
    }
    if (a.op === op) out.push(...a.args);
    else out.push(a);
  }
  if (out.length === 0) return lit(!absorbing);
  if (out.length === 1) return out[0]!;
  return { op, args: out };
}

function dedupe(values: readonly Scalar[]): Scalar[] {
  return [...new Set(values)];
}
