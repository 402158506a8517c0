import { isArithOp, isCalledArithOp, isCidr, isFunctionName, type ArithOp, type CompareKind, type FunctionName } from "@writ/runtime";
import { operandsOf, type ConstDecl, type Expr, type ListItem, type PolicyAst, type ScalarValue } from "../syntax/ast.js";
import { labelOf, OPERATORS, type Comparison, type OperandType, type Signature } from "../syntax/operators.js";
import type { Span } from "../diagnostics/source.js";
import { printExpr } from "../fmt/print-expr.js";
import type { PhaseContext } from "./context.js";
import type { Symbols } from "./resolve.js";
import { zoneRefusal } from "../zones/tz.js";
import {
  BOOLEAN,
  DECIMAL,
  DURATION,
  ERROR,
  INTEGER,
  LEXICAL,
  NUMBER,
  STRING,
  TIMESTAMP,
  describeType,
  isDecimal,
  isDouble,
  isInteger,
  kindOf,
  numeric,
  scalarType,
  signalType,
  type Type,
  type Typing,
} from "./expression-types.js";

const ARGUMENTS = ["no arguments", "one argument", "two arguments", "three arguments"];

/**
 * Phase type-check. Guarantees: every expression has a type; every condition is boolean; every operator
 * gets operands it is defined for; literals compared with an enum are among its values; literals compared
 * with a timestamp are RFC 3339 instants; lists are homogeneous; `in NAME` names a list constant.
 * An ill-typed subexpression is reported once and typed `error`, which silences errors that follow from it.
 */
export function typeCheck(ctx: PhaseContext, ast: PolicyAst, symbols: Symbols): Typing {
  return new Checker(ctx, symbols).run(ast);
}

class Checker {
  private readonly types = new Map<Expr, Type>();
  private readonly kinds = new Map<Expr, CompareKind>();
  private readonly constTypes = new Map<string, Type>();

  constructor(
    private readonly ctx: PhaseContext,
    private readonly symbols: Symbols,
  ) {}

  run(ast: PolicyAst): Typing {
    for (const c of ast.consts) this.constTypes.set(c.name.name, this.constType(c));
    for (const r of ast.rules) {
      const t = this.expr(r.when);
      if (t.t !== "boolean" && t.t !== "error") {
        this.ctx.sink.report("E501", r.when.span, `the condition of rule \`${r.name.name}\` is a ${describeType(t)}, not a boolean`);
      }
    }
    return { types: this.types, kinds: this.kinds };
  }

  private constType(c: ConstDecl): Type {
    if (c.value.kind === "scalar") return scalarType(c.value.value, c.value.unit);
    return { t: "list", elem: this.listElem(c.value.items) };
  }

  /** The element type of a list; literal scalars and scalar constants only, all of one type. */
  private listElem(items: readonly ListItem[]): Type | null {
    let elem: Type | null = null;
    for (const item of items) {
      const t = item.kind === "scalar" ? scalarType(item.value, item.unit) : this.itemRef(item.name, item.span);
      if (t.t === "error") return ERROR;
      if (elem === null) elem = t;
      else if (elem.t !== t.t) {
        this.ctx.sink.report("E507", item.span, `list mixes ${describeType(elem)} and ${describeType(t)} items`);
        return ERROR;
      } else if (elem.t === "number" && t.t === "number" && !t.integer) elem = t;
    }
    return elem;
  }

  private itemRef(name: string, span: Span): Type {
    const decl = this.symbols.consts.get(name);
    if (!decl) {
      if (this.symbols.signals.has(name)) {
        this.ctx.sink.report("E508", span, `list items must be literals or constants, and \`${name}\` is a signal`);
      }
      return ERROR;
    }
    if (decl.value.kind === "list") {
      this.ctx.sink.report("E508", span, `constant \`${name}\` is a list and cannot be an item of another list`);
      return ERROR;
    }
    return scalarType(decl.value.value, decl.value.unit);
  }

  private expr(e: Expr): Type {
    const t = this.infer(e);
    this.types.set(e, t);
    return t;
  }

  private infer(e: Expr): Type {
    switch (e.kind) {
      case "literal":
        return scalarType(e.value, e.unit);
      case "now":
        return TIMESTAMP;
      case "ref": {
        const signal = this.symbols.signals.get(e.name);
        if (signal) return signalType(signal);
        return this.constTypes.get(e.name) ?? ERROR;
      }
      case "logical":
      case "unary":
        return this.signature(operandsOf(e), OPERATORS[e.op].signature, labelOf(e.op));
      case "binary": {
        const typing = OPERATORS[e.op].typing;
        if (typing === "equality" || typing === "ordering") return this.compare(e, e.left, e.right, typing);
        if (e.op === "add" || e.op === "sub") {
          const time = this.time(e.op, e.left, e.right, e.span);
          if (time !== null) return time;
        }
        const t = this.signature([e.left, e.right], typing, labelOf(e.op));
        return t.t === "number" && isArithOp(e.op) ? this.arithmetic(e.op, [e.left, e.right], e.span, t) : t;
      }
      case "range":
        return this.range(e);
      case "matches":
        return this.signature(operandsOf(e), OPERATORS[e.kind].signature, labelOf(e.kind));
      case "in":
        return this.membership(e);
      case "cidr":
        return this.cidr(e);
      case "call":
        return this.call(e);
    }
  }

  /** An operator whose operands all have one type: each is checked (E503), then the result follows. */
  private signature(operands: readonly Expr[], signature: Signature, what: string): Type {
    const ok = operands.map((x) => this.expect(x, signature.operands, what)).every(Boolean);
    if (!ok) return ERROR;
    const types = operands.map((x) => this.types.get(x)!);
    switch (signature.result) {
      case "boolean":
        return BOOLEAN;
      case "integer":
        return INTEGER;
      case "number":
        return NUMBER;
      case "numeric":
        return numeric(types, types.every(isInteger));
      case "operand":
        return types[0]!;
      case "string":
        return STRING;
    }
  }

  /**
   * Arithmetic once its operands are numbers: a decimal meets integers and literals only (E510), and is never divided
   * (E509: multiply instead); the literal operands of a decimal computation compute exactly too (`settle`).
   */
  private arithmetic(op: ArithOp, operands: readonly [Expr, Expr], span: Span, t: Type): Type {
    const [left, right] = operands;
    const [l, r] = [this.types.get(left)!, this.types.get(right)!];
    if (!isDecimal(l) && !isDecimal(r)) return op === "div" ? NUMBER : t;
    if (op === "div") {
      const divisor = printExpr(right);
      this.ctx.sink.report("E509", span, "decimals are not divided: a quotient has no exact decimal", [
        `multiply instead: \`${printExpr(left)} / ${divisor} > x\` is \`${printExpr(left)} > x * ${divisor}\` for a positive divisor (decimals multiply exactly)`,
      ]);
      return ERROR;
    }
    if (isDouble(l) || isDouble(r)) return this.mixed(l, r, span);
    this.settle(left);
    this.settle(right);
    return DECIMAL;
  }

  /**
   * `+` and `-` once an operand is a timestamp or a duration (null otherwise, for the checks of numbers):
   * `timestamp ± duration` and `duration + timestamp` are timestamps, `timestamp - timestamp` and `duration ±
   * duration` durations; anything else beside time is E503, with the form that is meant.
   */
  private time(op: "add" | "sub", left: Expr, right: Expr, span: Span): Type | null {
    const [l, r] = [this.expr(left), this.expr(right)];
    const isTime = (t: Type): boolean => t.t === "timestamp" || t.t === "duration";
    if (!isTime(l) && !isTime(r)) return null;
    if (l.t === "error" || r.t === "error") return ERROR;
    const symbol = op === "add" ? "+" : "-";
    if (l.t === "duration" && r.t === "duration") return DURATION;
    if (l.t === "timestamp" && r.t === "duration") return TIMESTAMP;
    if (op === "add" && l.t === "duration" && r.t === "timestamp") return TIMESTAMP;
    if (op === "sub" && l.t === "timestamp" && r.t === "timestamp") return DURATION;
    const fix =
      l.t === "timestamp" && r.t === "timestamp"
        ? "timestamps are not added: add a duration to one (`opened_at + 30d`), or subtract them for the time between (`b - a`)"
        : l.t === "duration" && r.t === "timestamp"
          ? `write the timestamp first: \`${printExpr(right)} - ${printExpr(left)}\` is the instant before it`
          : l.t === "string" || r.t === "string"
            ? 'a timestamp literal is not computed with: write the instant it means (`"2026-03-31T00:00:00Z"`)'
            : "write the number with a unit of time: `500ms`, `30s`, `15m`, `12h`, `30d`";
    this.ctx.sink.report("E503", span, `\`${symbol}\` is not defined on ${describeType(l)} and ${describeType(r)}`, [fix]);
    return ERROR;
  }

  private range(e: Extract<Expr, { kind: "range" }>): Type {
    // Three durations are ranged as their milliseconds, the numbers they are at run time: `closed_at - opened_at in 1h..2h`.
    if (operandsOf(e).every((x) => (this.types.get(x) ?? this.expr(x)).t === "duration")) {
      this.kinds.set(e, "number");
      return BOOLEAN;
    }
    const t = this.signature(operandsOf(e), OPERATORS.range.signature, labelOf("range"));
    if (t.t === "error") return t;
    const types = operandsOf(e).map((x) => this.types.get(x)!);
    if (types.some(isDecimal)) {
      if (types.some(isDouble)) return this.mixed(types.find(isDecimal)!, types.find(isDouble)!, e.span);
      operandsOf(e).forEach((x) => this.settle(x));
      this.kinds.set(e, "decimal");
    } else this.kinds.set(e, "number");
    return t;
  }

  /** E510: a decimal beside a number (a double), which would lose its exactness. */
  private mixed(a: Type, b: Type, span: Span): Type {
    this.ctx.sink.report(
      "E510",
      span,
      `cannot mix a ${describeType(a)} with a ${describeType(b)}: a decimal stays exact only beside decimals, integers and literals`,
      [
        "declare the number signal `decimal(S)` too; for a quotient, multiply the other side instead (`a / n > x` is `a > x * n` for n > 0)",
      ],
    );
    return ERROR;
  }

  /** Integer and literal arithmetic beside a decimal is computed exactly: `amount > A + B` adds the constants as decimals. */
  private settle(e: Expr): void {
    const t = this.types.get(e);
    const computed = e.kind === "binary" || e.kind === "unary" || (e.kind === "call" && computesNumbers(e.fn.name));
    if (t?.t !== "number" || t.exact !== "flexible" || !computed) return;
    this.types.set(e, DECIMAL);
    operandsOf(e).forEach((x) => this.settle(x));
  }

  private call(e: Extract<Expr, { kind: "call" }>): Type {
    const name = e.fn.name;
    if (!isFunctionName(name)) {
      e.args.forEach((a) => this.expr(a));
      return ERROR; // unknown function, reported by resolve
    }
    const { arity, typing } = OPERATORS[name];
    if (e.args.length !== arity) {
      this.ctx.sink.report("E506", e.span, `\`${name}\` takes exactly ${ARGUMENTS[arity] ?? `${arity} arguments`}, given ${e.args.length}`);
      e.args.forEach((a) => this.expr(a));
      return ERROR;
    }
    if (typing === "zoned") return this.zoned(e);
    if (typing !== "signal name") {
      const t = this.signature(e.args, typing, labelOf(name));
      return t.t === "number" && isCalledArithOp(name) ? this.arithmetic(name, [e.args[0]!, e.args[1]!], e.span, t) : t;
    }
    const arg = e.args[0]!;
    this.expr(arg);
    if (arg.kind !== "ref" || !this.symbols.signals.has(arg.name)) {
      this.ctx.sink.report("E506", arg.span, `${labelOf(name)} takes the name of a signal`);
      return ERROR;
    }
    return BOOLEAN;
  }

  /**
   * A calendar field: a timestamp, and a zone named by a string literal or string constant (E513), so the compiler
   * knows which table to embed; an integer.
   */
  private zoned(e: Extract<Expr, { kind: "call" }>): Type {
    const [at, zone] = [e.args[0]!, e.args[1]!];
    const what = labelOf(e.fn.name as FunctionName);
    const t = this.expr(at);
    const z = this.expr(zone);
    if (t.t === "error" || z.t === "error") return ERROR;
    if (t.t !== "timestamp") {
      this.ctx.sink.report("E503", at.span, `${what} needs a timestamp, found ${describeType(t)}`);
      return ERROR;
    }
    const name = zoneName(zone, this.symbols);
    if (name === null) {
      this.ctx.sink.report("E513", zone.span, `the zone of ${what} must be a string literal or string constant, found ${describeType(z)}`, [
        'name the zone where the policy is compiled, so its table is embedded: `"Europe/London"`, or a constant `const ZONE = "Europe/London"`',
      ]);
      return ERROR;
    }
    const refusal = zoneRefusal(name);
    if (refusal !== null) {
      this.ctx.sink.report("E513", zone.span, `\`${name}\` is not an IANA time-zone name`, refusal);
      return ERROR;
    }
    return INTEGER;
  }

  private membership(e: Extract<Expr, { kind: "in" }>): Type {
    const value = this.expr(e.value);
    const list = this.listOperand(e.set, "`in` needs a list or a range `a..b`");
    if (list === null) return ERROR;
    const { elem, literals } = list;
    if (value.t === "error" || elem?.t === "error") return ERROR;
    // An empty list leaves the domain to the value: a decimal computed exactly is a decimal, not a number.
    const kind = elem === null ? (isDecimal(value) ? "decimal" : kindOf(value)) : this.unify(value, elem, e.span, "equality", literals);
    if (kind === null) return ERROR;
    this.kinds.set(e, kind);
    return BOOLEAN;
  }

  /** `a in_cidr RANGES`: an address, and a list literal or list constant of CIDR ranges (E512 for one that is not). */
  private cidr(e: Extract<Expr, { kind: "cidr" }>): Type {
    const value = this.expr(e.value);
    const list = this.listOperand(e.set, "`in_cidr` needs a list of CIDR ranges");
    if (list === null) return ERROR;
    const { elem, literals } = list;
    if (value.t === "error" || elem?.t === "error") return ERROR;
    if (value.t !== "ip") {
      this.ctx.sink.report("E503", e.value.span, `\`in_cidr\` needs an ip, found ${describeType(value)}`);
      return ERROR;
    }
    for (const lit of literals) {
      if (typeof lit.value !== "string" || !isCidr(lit.value)) {
        this.ctx.sink.report("E512", lit.span, `\`${String(lit.value)}\` is not a CIDR range`, [
          "write an address, `/` and a prefix length, with no bits set after the prefix: `10.0.0.0/8`, `203.0.113.7/32`, `2001:db8::/32`",
        ]);
        return ERROR;
      }
    }
    return BOOLEAN;
  }

  /**
   * The list on the right of `in` or `in_cidr`, a literal or a list constant: its element type (null when empty) and the
   * literals it holds; null after E508 (`needs`: what the operator asks for) or an error already reported.
   */
  private listOperand(
    set: Extract<Expr, { kind: "in" | "cidr" }>["set"],
    needs: string,
  ): { elem: Type | null; literals: readonly { value: ScalarValue; span: Span }[] } | null {
    if (set.kind === "list") return { elem: this.listElem(set.items), literals: this.listLiterals(set.items) };
    const t = this.expr(set);
    if (t.t === "error") return null;
    if (t.t !== "list" || set.kind !== "ref") {
      this.ctx.sink.report("E508", set.span, `${needs}, found ${describeType(t)}`);
      return null;
    }
    const decl = this.symbols.consts.get(set.name);
    return { elem: t.elem, literals: decl?.value.kind === "list" ? this.listLiterals(decl.value.items) : [] };
  }

  private listLiterals(items: readonly ListItem[]): { value: ScalarValue; span: Span }[] {
    return items.flatMap((item) => {
      if (item.kind === "scalar") return [{ value: item.value, span: item.span }];
      const decl = this.symbols.consts.get(item.name);
      return decl?.value.kind === "scalar" ? [{ value: decl.value.value, span: item.span }] : [];
    });
  }

  private compare(e: Expr, left: Expr, right: Expr, mode: Comparison): Type {
    const l = this.expr(left);
    const r = this.expr(right);
    if (l.t === "error" || r.t === "error") return ERROR;
    const literals = [left, right].flatMap((x) => this.literalOf(x));
    const kind = this.unify(l, r, e.span, mode, literals);
    if (kind === null) return ERROR;
    if (kind === "decimal") [left, right].forEach((x) => this.settle(x));
    this.kinds.set(e, kind);
    return BOOLEAN;
  }

  /** A literal, or a scalar constant, whose value the checker can test against an enum or a timestamp. */
  private literalOf(e: Expr): { value: ScalarValue; span: Span }[] {
    if (e.kind === "literal") return [{ value: e.value, span: e.span }];
    if (e.kind === "ref") {
      const decl = this.symbols.consts.get(e.name);
      if (decl?.value.kind === "scalar") return [{ value: decl.value.value, span: e.span }];
    }
    return [];
  }

  /**
   * The comparison domain of two operand types, or null after reporting why there is none.
   * A string literal beside a timestamp is read as an instant, beside a version as a version (LEXICAL); beside an enum
   * it must be one of its values.
   */
  private unify(
    a: Type,
    b: Type,
    span: Span,
    mode: Comparison,
    literals: readonly { value: ScalarValue; span: Span }[],
  ): CompareKind | null {
    const lexical = LEXICAL.find((l) => a.t === l.t || b.t === l.t);
    if (lexical && (a.t === lexical.t || a.t === "string") && (b.t === lexical.t || b.t === "string")) {
      if (a.t === "string" && a.enumOf) return this.mismatch(a, b, span);
      if (b.t === "string" && b.enumOf) return this.mismatch(a, b, span);
      for (const lit of literals) {
        if (typeof lit.value === "string" && !lexical.valid(lit.value)) {
          this.ctx.sink.report(lexical.code, lit.span, `\`${lit.value}\` ${lexical.refusal}`);
          return null;
        }
      }
      if (a.t !== b.t && literals.length === 0) return this.mismatch(a, b, span);
      if (mode === "ordering" && !lexical.ordered) {
        this.ctx.sink.report(
          "E503",
          span,
          `\`<\`, \`<=\`, \`>\` and \`>=\` compare numbers, timestamps and versions, not ${lexical.t} values`,
          ["test an address against ranges with `in_cidr`"],
        );
        return null;
      }
      return lexical.t;
    }
    if (a.t !== b.t) return this.mismatch(a, b, span);
    if (isDecimal(a) || isDecimal(b)) {
      if (isDouble(a) || isDouble(b)) {
        this.mixed(a, b, span);
        return null;
      }
      return "decimal";
    }
    if (mode === "ordering" && a.t !== "number" && a.t !== "duration") {
      this.ctx.sink.report(
        "E503",
        span,
        `\`<\`, \`<=\`, \`>\` and \`>=\` compare numbers, durations and timestamps, not ${describeType(a)} values`,
      );
      return null;
    }
    if (a.t === "string" && b.t === "string") {
      const enumOf = a.enumOf ?? b.enumOf;
      const other = b.enumOf;
      if (a.enumOf && other && a.enumOf.name !== other.name && !a.enumOf.values.some((v) => other.values.includes(v))) {
        return this.mismatch(a, b, span);
      }
      if (enumOf) {
        for (const lit of literals) {
          if (typeof lit.value === "string" && !enumOf.values.includes(lit.value)) {
            this.ctx.sink.report("E504", lit.span, `\`${lit.value}\` is not a value of \`${enumOf.name}\``, [
              `its values are ${enumOf.values.map((v) => `\`${v}\``).join(", ")}`,
            ]);
            return null;
          }
        }
      }
    }
    return kindOf(a);
  }

  private mismatch(a: Type, b: Type, span: Span): null {
    const duration = (a.t === "duration" && b.t === "number") || (a.t === "number" && b.t === "duration");
    const fix = duration ? ["write the number with a unit of time: `500ms`, `30s`, `15m`, `12h`, `30d`"] : undefined;
    this.ctx.sink.report("E502", span, `cannot compare ${describeType(a)} with ${describeType(b)}`, fix);
    return null;
  }

  private expect(e: Expr, want: OperandType, what: string): boolean {
    // An operand `time` has already typed is not typed (and reported) twice.
    const t = this.types.get(e) ?? this.expr(e);
    if (t.t === "error") return false;
    if (t.t !== want) {
      this.ctx.sink.report("E503", e.span, `${what} needs a ${want}, found ${describeType(t)}`);
      return false;
    }
    return true;
  }
}

/** A built-in function that computes a number from numbers (`abs`, `min`, `max`): exact beside a decimal, as `+` is. */
function computesNumbers(name: string): boolean {
  if (!isFunctionName(name)) return false;
  const { typing } = OPERATORS[name];
  return typing !== "signal name" && typing !== "zoned" && typing.operands === "number";
}

/** The zone a calendar field names: a string literal, or a string constant's value; null when it is neither. */
export function zoneName(e: Expr, symbols: Symbols): string | null {
  if (e.kind === "literal") return typeof e.value === "string" ? e.value : null;
  const c = e.kind === "ref" ? symbols.consts.get(e.name)?.value : undefined;
  return c?.kind === "scalar" && typeof c.value === "string" && !symbols.signals.has((e as { name: string }).name) ? c.value : null;
}
