import type { CstNode, IToken } from "chevrotain";
import semver from "semver";
import { linearPatternRefusal, type Verdict } from "@writ/runtime";
import type {
  ConstDecl,
  ConstValue,
  Expr,
  Ident,
  ListItem,
  NumberConstraint,
  NumberLit,
  PolicyAst,
  RegexLit,
  RuleDecl,
  SignalDecl,
  SignalTypeExpr,
  StringConstraint,
  StringLit,
} from "../syntax/ast.js";
import { carriesExactly, DURATION_UNITS, MAX_DECLARED_PLACES, placesOf, type DurationUnit } from "@writ/runtime";
import { infixAt, prefixAt, type InfixLevel, type PrefixLevel } from "../syntax/operators.js";
import { operatorAt } from "../syntax/tokens.js";
import type { Span } from "../diagnostics/source.js";
import { declaredInterval, isEmptyInterval, type Interval } from "../analysis/domain.js";
import { joinSpans, spanOf, type PhaseContext } from "./context.js";
import { has, isToken, node, nodes, optionalNode, token, tokens } from "./cst-access.js";
import { decodeString } from "../syntax/string-literal.js";

/**
 * Phase build-ast. Guarantees: every node has a span; string escapes, numbers and regular expressions are
 * decoded and valid, each regular expression one the runtime's linear-time engine runs; the policy id, version and governed action are well formed; signal constraints are
 * consistent (bounds ordered, integer bounds integral, no constraint twice, no enum value twice).
 */
export function buildAst(ctx: PhaseContext, cst: CstNode, comments: readonly IToken[]): PolicyAst {
  return new AstBuilder(ctx).policy(cst, comments);
}

const POLICY_ID = /^[a-z0-9]+(?:[._-][a-z0-9]+)*$/;
const ACTION = /^[A-Za-z0-9]+(?:[._:-][A-Za-z0-9]+)*$/;
const MAX_NAME = 128;

class AstBuilder {
  constructor(private readonly ctx: PhaseContext) {}

  policy(cst: CstNode, comments: readonly IToken[]): PolicyAst {
    const header = node(cst, "header");
    const policyId = this.string(token(header, "policyId"));
    const version = this.string(token(header, "version"));
    if (policyId.value.length > MAX_NAME || !POLICY_ID.test(policyId.value)) {
      this.ctx.sink.report(
        "E304",
        policyId.span,
        `invalid policy id \`${policyId.value}\`: use lowercase letters and digits, separated by single \`.\`, \`_\` or \`-\``,
      );
    }
    if (semver.valid(version.value) !== version.value) {
      this.ctx.sink.report(
        "E305",
        version.span,
        `invalid policy version \`${version.value}\`: expected a semantic version such as \`1.2.0\``,
      );
    }
    const governs = node(cst, "governsClause");
    const action = this.string(token(governs, "action"));
    if (action.value.length > MAX_NAME || !ACTION.test(action.value)) {
      this.ctx.sink.report(
        "E307",
        action.span,
        `invalid action name \`${action.value}\`: use letters and digits, separated by single \`.\`, \`_\`, \`:\` or \`-\``,
      );
    }
    const signalsBlock = node(cst, "signalsBlock");
    return {
      policyId,
      version,
      governs: { action, binding: tokens(governs, "bound").map((t) => this.ident(t)), span: this.nodeSpan(governs) },
      signals: nodes(signalsBlock, "signalDecl").map((n) => this.signal(n)),
      signalsBlock: this.nodeSpan(signalsBlock),
      consts: nodes(cst, "constDecl").map((n) => this.constDecl(n)),
      rules: nodes(cst, "ruleDecl").map((n) => this.rule(n)),
      otherwise: optionalNode(cst, "otherwiseDecl", (n) => ({
        verdict: this.verdict(node(n, "verdict")),
        reason: this.reason(token(n, "reason")),
        span: this.nodeSpan(n),
      })),
      comments: comments.map((t) => ({ text: t.image, span: this.tokenSpan(t) })),
      span: spanOf(this.ctx, 0, this.ctx.text.length),
    };
  }

  private signal(n: CstNode): SignalDecl {
    const decl: SignalDecl = {
      name: this.ident(token(n, "name")),
      optional: tokens(n, "optional").length > 0,
      type: this.signalType(node(n, "signalType")),
      span: this.nodeSpan(n),
    };
    // Bounds that are each fine may still leave no value, e.g. `> 10 < 5`, or `integer > 1 < 2`.
    const t = decl.type;
    const empty = t.kind === "decimal" ? noDecimalWithin(declaredInterval(decl), t.places.value) : isEmptyInterval(declaredInterval(decl));
    if ((t.kind === "number" || t.kind === "integer" || t.kind === "decimal") && t.constraints.length > 1 && empty) {
      this.ctx.sink.report(
        "E306",
        t.span,
        `no ${t.kind} satisfies all the bounds of \`${decl.name.name}\`, so no request could ever validate`,
      );
    }
    return decl;
  }

  private signalType(n: CstNode): SignalTypeExpr {
    const span = this.nodeSpan(n);
    if (has(n, "String")) {
      const constraints = nodes(n, "stringConstraint").map((c) => this.stringConstraint(c));
      this.noRepeats(
        constraints.map((c) => ({ key: c.kind, span: c.span })),
        "string",
      );
      return { kind: "string", constraints, span };
    }
    if (has(n, "Number") || has(n, "Integer")) {
      const kind = has(n, "Integer") ? "integer" : "number";
      const constraints = nodes(n, "numberConstraint").map((c) => this.numberConstraint(c, kind));
      this.noRepeats(this.boundKeys(constraints), kind);
      return { kind, constraints, span };
    }
    if (has(n, "Decimal")) return this.decimalType(n, span);
    if (has(n, "Boolean")) return { kind: "boolean", span };
    if (has(n, "Timestamp")) return { kind: "timestamp", span };
    if (has(n, "Semver")) return { kind: "semver", span };
    if (has(n, "Ip")) return { kind: "ip", span };
    const values = tokens(n, "enumValue").map((t) => this.string(t));
    const seen = new Set<string>();
    for (const v of values) {
      if (seen.has(v.value)) this.ctx.sink.report("E308", v.span, `enum value \`${v.value}\` is listed twice`);
      seen.add(v.value);
    }
    return { kind: "enum", values, span };
  }

  /** `decimal(S)`: S from 0 to 18, bounds of at most S places. */
  private decimalType(n: CstNode, span: Span): SignalTypeExpr {
    const places = this.number(token(n, "places"));
    if (!Number.isInteger(places.value) || places.value < 0 || places.value > MAX_DECLARED_PLACES) {
      this.ctx.sink.report(
        "E306",
        places.span,
        `\`decimal(${places.text})\` needs a whole number of places from 0 to ${MAX_DECLARED_PLACES}, such as \`decimal(2)\``,
      );
    }
    const constraints = nodes(n, "numberConstraint").map((c) => this.numberConstraint(c, "decimal"));
    this.noRepeats(this.boundKeys(constraints), "decimal");
    if (Number.isInteger(places.value)) {
      for (const c of constraints) {
        for (const b of c.kind === "range" ? [c.min, c.max] : [c.value]) {
          if (Number.isFinite(b.value) && placesOf(b.value) > places.value) {
            this.ctx.sink.report("E306", b.span, `bound \`${b.text}\` has more decimal places than \`decimal(${places.value})\` allows`);
          }
        }
      }
    }
    return { kind: "decimal", places, constraints, span };
  }

  private boundKeys(constraints: readonly NumberConstraint[]): { key: string; span: Span }[] {
    return constraints.flatMap((c) =>
      c.kind === "range"
        ? [
            { key: "lower bound", span: c.span },
            { key: "upper bound", span: c.span },
          ]
        : [{ key: c.op.startsWith(">") ? "lower bound" : "upper bound", span: c.span }],
    );
  }

  private noRepeats(items: readonly { key: string; span: Span }[], type: string): void {
    const seen = new Set<string>();
    for (const { key, span } of items) {
      if (seen.has(key))
        this.ctx.sink.report("E306", span, `${type === "integer" ? "an" : "a"} ${type} signal takes at most one ${key} constraint`);
      seen.add(key);
    }
  }

  private stringConstraint(n: CstNode): StringConstraint {
    const span = this.nodeSpan(n);
    if (has(n, "Matching")) return { kind: "matching", regex: this.regex(token(n, "RegexLiteral")), span };
    if (has(n, "Normalized")) return { kind: "normalized", span };
    const min = this.signedNumber(node(n, "min"));
    const max = this.signedNumber(node(n, "max"));
    for (const b of [min, max]) {
      if (!Number.isSafeInteger(b.value) || b.value < 0) {
        this.ctx.sink.report("E306", b.span, `length bound \`${b.value}\` must be a whole number of zero or more`);
      }
    }
    this.ordered(min, max);
    return { kind: "length", min, max, span };
  }

  private numberConstraint(n: CstNode, kind: "number" | "integer" | "decimal"): NumberConstraint {
    const span = this.nodeSpan(n);
    const bound = tokens(n, "bound")[0];
    const values: NumberLit[] = [];
    let result: NumberConstraint;
    if (bound) {
      const value = this.signedNumber(node(n, "value"));
      values.push(value);
      result = { kind: "bound", op: bound.image as ">=" | ">" | "<=" | "<", value, span };
    } else {
      const min = this.signedNumber(node(n, "min"));
      const max = this.signedNumber(node(n, "max"));
      values.push(min, max);
      this.ordered(min, max);
      result = { kind: "range", min, max, span };
    }
    if (kind === "integer") {
      for (const v of values) {
        if (!Number.isSafeInteger(v.value)) {
          this.ctx.sink.report("E306", v.span, `bound \`${v.value}\` of an integer signal must be a safe integer`);
        }
      }
    }
    return result;
  }

  private ordered(min: NumberLit, max: NumberLit): void {
    if (min.value > max.value) {
      this.ctx.sink.report(
        "E306",
        joinSpans(min.span, max.span),
        `range \`${min.value}..${max.value}\` is empty: the lower bound exceeds the upper`,
      );
    }
  }

  private constDecl(n: CstNode): ConstDecl {
    const list = optionalNode(n, "listLiteral", (l) => this.list(l));
    const value: ConstValue = list ?? {
      kind: "scalar",
      ...this.scalar(node(n, "scalarLiteral")),
      span: this.nodeSpan(node(n, "scalarLiteral")),
    };
    return { name: this.ident(token(n, "name")), value, span: this.nodeSpan(n) };
  }

  private list(n: CstNode): { kind: "list"; items: ListItem[]; span: Span } {
    const items = (n.children["item"] ?? []).map((el): ListItem => {
      if (isToken(el)) return { kind: "ref", name: el.image, span: this.tokenSpan(el) };
      return { kind: "scalar", ...this.scalar(el), span: this.nodeSpan(el) };
    });
    return { kind: "list", items, span: this.nodeSpan(n) };
  }

  /** A scalar literal's value, and a number's text. */
  private scalar(n: CstNode): { value: string | number | boolean; text?: string; unit?: DurationUnit } {
    if (has(n, "DurationLiteral")) return this.duration(token(n, "DurationLiteral"));
    if (has(n, "signedNumber")) {
      const { value, text } = this.signedNumber(node(n, "signedNumber"));
      return { value, text };
    }
    if (has(n, "StringLiteral")) return { value: this.string(token(n, "StringLiteral")).value };
    return { value: has(n, "True") };
  }

  private rule(n: CstNode): RuleDecl {
    return {
      name: this.ident(token(n, "name")),
      when: this.expression(node(n, "expression")),
      verdict: this.verdict(node(n, "verdict")),
      reason: this.reason(token(n, "reason")),
      span: this.nodeSpan(n),
    };
  }

  private verdict(n: CstNode): Verdict {
    if (has(n, "Approve")) return "approve";
    if (has(n, "Escalate")) return "escalate";
    return "reject";
  }

  private reason(t: IToken): StringLit {
    const reason = this.decoded(t);
    if (reason && reason.value.trim() === "")
      this.ctx.sink.report("E309", reason.span, "a reason must say something: it is shown to the caller");
    return reason ?? { value: "", span: this.tokenSpan(t) };
  }

  private expression(n: CstNode): Expr {
    return this.logical(n, "or", (c) => this.logical(c, "and", (a) => this.notExpr(a)));
  }

  private logical(n: CstNode, op: "or" | "and", operand: (c: CstNode) => Expr): Expr {
    const args = nodes(n, "operand").map(operand);
    if (args.length === 1) return args[0]!;
    return { kind: "logical", op, args, span: joinSpans(args[0]!.span, args[args.length - 1]!.span) };
  }

  private notExpr(n: CstNode): Expr {
    return this.prefixed(n, "not", "notExpr", (c) => this.notExpr(c)) ?? this.predicate(node(n, "predicate"));
  }

  private predicate(n: CstNode): Expr {
    const subject = this.additive(node(n, "subject"));
    const span = this.nodeSpan(n);
    const operator = tokens(n, "operator")[0];
    if (operator) {
      const op = operatorAt(infixAt("predicate"), operator.tokenType);
      return { kind: "binary", op, left: subject, right: this.additive(node(n, "object")), span };
    }
    if (has(n, "In")) {
      const negated = tokens(n, "negated").length > 0;
      const target = node(n, "membershipTarget");
      const list = optionalNode(target, "listLiteral", (l) => this.list(l));
      if (list) return { kind: "in", negated, value: subject, set: list, span };
      const low = this.additive(node(target, "low"));
      const high = optionalNode(target, "high", (h) => this.additive(h));
      if (high) return { kind: "range", negated, value: subject, min: low, max: high, span };
      return { kind: "in", negated, value: subject, set: low, span };
    }
    if (has(n, "In_cidr")) {
      const negated = tokens(n, "negated").length > 0;
      const target = node(n, "cidrTarget");
      const set = optionalNode(target, "listLiteral", (l) => this.list(l)) ?? this.additive(node(target, "low"));
      return { kind: "cidr", negated, value: subject, set, span };
    }
    if (has(n, "Matches")) return { kind: "matches", value: subject, regex: this.regex(token(n, "RegexLiteral")), span };
    return subject;
  }

  private additive(n: CstNode): Expr {
    return this.binary(n, "additive", (c) => this.multiplicative(c));
  }

  private multiplicative(n: CstNode): Expr {
    return this.binary(n, "multiplicative", (c) => this.unary(c));
  }

  /** Left-associative chain: `a - b - c` is `(a - b) - c`. */
  private binary(n: CstNode, level: InfixLevel, operand: (c: CstNode) => Expr): Expr {
    const operands = nodes(n, "operand").map(operand);
    const ops = infixAt(level);
    let acc = operands[0]!;
    tokens(n, "operator").forEach((t, i) => {
      const right = operands[i + 1]!;
      acc = { kind: "binary", op: operatorAt(ops, t.tokenType), left: acc, right, span: joinSpans(acc.span, right.span) };
    });
    return acc;
  }

  private unary(n: CstNode): Expr {
    return this.prefixed(n, "unary", "unary", (c) => this.unary(c)) ?? this.primary(node(n, "primary"));
  }

  /** A prefix operator of `level` applied to the nested `inner` node, or null when the node has none. */
  private prefixed(n: CstNode, level: PrefixLevel, inner: string, operand: (c: CstNode) => Expr): Expr | null {
    const operator = tokens(n, "operator")[0];
    if (!operator) return null;
    return { kind: "unary", op: operatorAt(prefixAt(level), operator.tokenType), arg: operand(node(n, inner)), span: this.nodeSpan(n) };
  }

  private primary(n: CstNode): Expr {
    const span = this.nodeSpan(n);
    if (has(n, "NumberLiteral")) {
      const { value, text } = this.number(token(n, "NumberLiteral"));
      return { kind: "literal", value, text, span };
    }
    if (has(n, "DurationLiteral")) return { kind: "literal", ...this.duration(token(n, "DurationLiteral")), span };
    if (has(n, "StringLiteral")) return { kind: "literal", value: this.string(token(n, "StringLiteral")).value, span };
    if (has(n, "True")) return { kind: "literal", value: true, span };
    if (has(n, "False")) return { kind: "literal", value: false, span };
    if (has(n, "Now")) return { kind: "now", span };
    const inner = optionalNode(n, "inner", (c) => this.expression(c));
    if (inner) return inner;
    const name = this.ident(token(n, "Identifier"));
    if (has(n, "LParen")) return { kind: "call", fn: name, args: nodes(n, "argument").map((a) => this.expression(a)), span };
    return { kind: "ref", name: name.name, span };
  }

  /** A duration literal: its milliseconds (NaN, reported, past the exact integers), its text and its unit. */
  private duration(t: IToken): { value: number; text: string; unit: DurationUnit } {
    const text = t.image;
    const unit = /(ms|[smhd])$/.exec(text)![1] as DurationUnit;
    const value = Number(text.slice(0, -unit.length)) * DURATION_UNITS[unit];
    if (!Number.isSafeInteger(value)) {
      this.ctx.sink.report("E302", this.tokenSpan(t), `duration \`${text}\` is beyond ±9007199254740991 milliseconds`);
      return { value: NaN, text, unit };
    }
    return { value, text, unit };
  }

  private signedNumber(n: CstNode): NumberLit {
    const lit = this.number(token(n, "NumberLiteral"));
    if (!has(n, "Minus")) return lit;
    return { value: lit.value === 0 ? 0 : -lit.value, text: `-${lit.text}`, span: this.nodeSpan(n) };
  }

  private number(t: IToken): NumberLit {
    const span = this.tokenSpan(t);
    const text = t.image;
    const value = Number(text);
    // An unusable number becomes NaN, which no bound check or fold accepts, so it is reported once.
    if (!Number.isFinite(value)) {
      this.ctx.sink.report("E302", span, `number \`${text}\` is too large`);
      return { value: NaN, text, span };
    }
    // Past 2^53 every double is an integer standing for many decimal numbers; the strict JSON parser
    // refuses such values in signals, so a policy may not compare with them either.
    if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
      this.ctx.sink.report("E302", span, `number \`${text}\` is beyond the exact integer range of ±9007199254740991`);
      return { value: NaN, text, span };
    }
    // Signal validation refuses such a number in a signal, so a policy may not be written with one either.
    if (!carriesExactly(text, value)) {
      this.ctx.sink.report("E302", span, `number \`${text}\` has more digits than a number holds exactly: it would be read as ${value}`);
      return { value: NaN, text, span };
    }
    return { value, text, span };
  }

  private regex(t: IToken): RegexLit {
    const span = this.tokenSpan(t);
    const pattern = t.image.slice(1, -1);
    if (pattern === "") {
      this.ctx.sink.report("E303", span, "empty regular expression `//`: it matches every string, so leave the test out");
      return { pattern, span };
    }
    try {
      new RegExp(pattern, "u");
    } catch (e) {
      const why = e instanceof Error ? e.message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /, "") : "";
      this.ctx.sink.report("E303", span, `invalid regular expression \`${t.image}\`: ${why.toLowerCase()}`);
      return { pattern, span };
    }
    const refusal = linearPatternRefusal(pattern);
    if (refusal !== null) this.ctx.sink.report("E310", span, refusal.message);
    return { pattern, span };
  }

  private string(t: IToken): StringLit {
    return this.decoded(t) ?? { value: "", span: this.tokenSpan(t) };
  }

  /** The literal's value, or null after reporting why it does not decode (E301). */
  private decoded(t: IToken): StringLit | null {
    const decoded = decodeString(t.image);
    if (typeof decoded !== "string") {
      this.ctx.sink.report(
        "E301",
        spanOf(this.ctx, t.startOffset + decoded.at, t.startOffset + decoded.at + decoded.length),
        decoded.message,
      );
      return null;
    }
    return { value: decoded, span: this.tokenSpan(t) };
  }

  private ident(t: IToken): Ident {
    return { name: t.image, span: this.tokenSpan(t) };
  }

  private tokenSpan(t: IToken): Span {
    return spanOf(this.ctx, t.startOffset, t.startOffset + t.image.length);
  }

  private nodeSpan(n: CstNode): Span {
    const loc = n.location;
    if (!loc || Number.isNaN(loc.startOffset)) return spanOf(this.ctx, 0, 0);
    return spanOf(this.ctx, loc.startOffset, (loc.endOffset ?? loc.startOffset) + 1);
  }
}

/** Whether no number of at most `places` places lies within `i` (whose bounds have at most that many). */
function noDecimalWithin(i: Interval, places: number): boolean {
  if (isEmptyInterval(i)) return true;
  if (!Number.isFinite(i.lo) || !Number.isFinite(i.hi) || !Number.isInteger(places)) return false;
  const scale = 10 ** places;
  const lo = Math.round(i.lo * scale) + (i.loIncl ? 0 : 1);
  const hi = Math.round(i.hi * scale) - (i.hiIncl ? 0 : 1);
  return lo > hi;
}
