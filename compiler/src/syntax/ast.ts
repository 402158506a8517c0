import type { DurationUnit, InfixOp, LogicalOp, PrefixOp, Verdict } from "@writ/runtime";
import type { Span } from "../diagnostics/source.js";

/** The typed tree the build-ast phase produces. Every node has a span; literal values are decoded. */
export interface Ident {
  readonly name: string;
  readonly span: Span;
}

export interface StringLit {
  readonly value: string;
  readonly span: Span;
}

export interface NumberLit {
  readonly value: number;
  /** As written (with its `-`), so the formatter keeps `1000.30` as the author wrote it. */
  readonly text: string;
  readonly span: Span;
}

export interface RegexLit {
  readonly pattern: string;
  readonly span: Span;
}

export type NumberBound = ">=" | ">" | "<=" | "<";
export type NumberConstraint =
  | { readonly kind: "bound"; readonly op: NumberBound; readonly value: NumberLit; readonly span: Span }
  | { readonly kind: "range"; readonly min: NumberLit; readonly max: NumberLit; readonly span: Span };
export type StringConstraint =
  | { readonly kind: "matching"; readonly regex: RegexLit; readonly span: Span }
  | { readonly kind: "normalized"; readonly span: Span }
  | { readonly kind: "length"; readonly min: NumberLit; readonly max: NumberLit; readonly span: Span };

export type SignalTypeExpr =
  | { readonly kind: "string"; readonly constraints: readonly StringConstraint[]; readonly span: Span }
  | { readonly kind: "number" | "integer"; readonly constraints: readonly NumberConstraint[]; readonly span: Span }
  /** `decimal(S)`: `places` is S, 0 to 18. */
  | { readonly kind: "decimal"; readonly places: NumberLit; readonly constraints: readonly NumberConstraint[]; readonly span: Span }
  | { readonly kind: "boolean" | "timestamp" | "semver" | "ip"; readonly span: Span }
  | { readonly kind: "enum"; readonly values: readonly StringLit[]; readonly span: Span };

export interface SignalDecl {
  readonly name: Ident;
  readonly optional: boolean;
  readonly type: SignalTypeExpr;
  readonly span: Span;
}

export type ScalarValue = string | number | boolean;

/** A number literal keeps its text (NumberLit); other scalars have none. A duration (`unit`) is its milliseconds. */
export type ConstValue =
  | { readonly kind: "scalar"; readonly value: ScalarValue; readonly text?: string; readonly unit?: DurationUnit; readonly span: Span }
  | { readonly kind: "list"; readonly items: readonly ListItem[]; readonly span: Span };

/** A list item is a literal or the name of a scalar constant. */
export type ListItem =
  | { readonly kind: "scalar"; readonly value: ScalarValue; readonly text?: string; readonly unit?: DurationUnit; readonly span: Span }
  | { readonly kind: "ref"; readonly name: string; readonly span: Span };

export interface ConstDecl {
  readonly name: Ident;
  readonly value: ConstValue;
  readonly span: Span;
}

/**
 * Operators are named as in the operator table (syntax/operators.ts and the runtime's ir/operators.ts): `eq`, `add`,
 * `starts_with`, `neg`. Nodes are grouped by how the operator is written, not by what it does, so a new operator
 * of a kind already written needs no new node.
 */
export type Expr =
  | { readonly kind: "logical"; readonly op: LogicalOp; readonly args: readonly Expr[]; readonly span: Span }
  | { readonly kind: "unary"; readonly op: PrefixOp; readonly arg: Expr; readonly span: Span }
  | { readonly kind: "binary"; readonly op: InfixOp; readonly left: Expr; readonly right: Expr; readonly span: Span }
  | {
      readonly kind: "in";
      readonly negated: boolean;
      readonly value: Expr;
      readonly set: { readonly kind: "list"; readonly items: readonly ListItem[]; readonly span: Span } | Expr;
      readonly span: Span;
    }
  /** `a in_cidr [ranges]`, `a not in_cidr L`: an address in one of the CIDR ranges. */
  | {
      readonly kind: "cidr";
      readonly negated: boolean;
      readonly value: Expr;
      readonly set: { readonly kind: "list"; readonly items: readonly ListItem[]; readonly span: Span } | Expr;
      readonly span: Span;
    }
  | { readonly kind: "range"; readonly negated: boolean; readonly value: Expr; readonly min: Expr; readonly max: Expr; readonly span: Span }
  | { readonly kind: "matches"; readonly value: Expr; readonly regex: RegexLit; readonly span: Span }
  | { readonly kind: "call"; readonly fn: Ident; readonly args: readonly Expr[]; readonly span: Span }
  | { readonly kind: "ref"; readonly name: string; readonly span: Span }
  /** `now`: the decision instant, a timestamp. */
  | { readonly kind: "now"; readonly span: Span }
  | { readonly kind: "literal"; readonly value: ScalarValue; readonly text?: string; readonly unit?: DurationUnit; readonly span: Span };

/** The operands of an expression, in source order (a list after `in` is not an expression, so not among them). */
export function operandsOf(e: Expr): readonly Expr[] {
  switch (e.kind) {
    case "logical":
    case "call":
      return e.args;
    case "unary":
      return [e.arg];
    case "binary":
      return [e.left, e.right];
    case "in":
    case "cidr":
      return e.set.kind === "list" ? [e.value] : [e.value, e.set];
    case "range":
      return [e.value, e.min, e.max];
    case "matches":
      return [e.value];
    case "ref":
    case "now":
    case "literal":
      return [];
  }
}

export interface RuleDecl {
  readonly name: Ident;
  readonly when: Expr;
  readonly verdict: Verdict;
  readonly reason: StringLit;
  readonly span: Span;
}

export interface OtherwiseDecl {
  readonly verdict: Verdict;
  readonly reason: StringLit;
  readonly span: Span;
}

export interface Comment {
  readonly text: string;
  readonly span: Span;
}

export interface PolicyAst {
  readonly policyId: StringLit;
  readonly version: StringLit;
  readonly governs: { readonly action: StringLit; readonly binding: readonly Ident[]; readonly span: Span };
  readonly signals: readonly SignalDecl[];
  /** From `signals` to its closing `}`. */
  readonly signalsBlock: Span;
  readonly consts: readonly ConstDecl[];
  readonly rules: readonly RuleDecl[];
  readonly otherwise: OtherwiseDecl | null;
  readonly comments: readonly Comment[];
  readonly span: Span;
}
