/**
 * The policy IR: the only thing the compiler and the runtime share (with the bundle manifest). It is plain JSON so a
 * bundle can be read by any tool; `IR_VERSION` changes whenever its meaning does, and the runtime refuses versions it
 * does not know rather than guessing. Semantics: docs/language.md, "Evaluation" (unknown values, Kleene's `and` and
 * `or`, the first rule that fires decides, faults end an evaluation without a verdict).
 *
 * Version 2 added decimal signals, exact arithmetic (`kind: "decimal"`), `lower` and evaluation faults. The runtime
 * reads version 1 too, with the same semantics: its arithmetic is the `number` kind, which now faults. The compiler
 * writes version 1 for a policy that uses none of what version 2 added and no arithmetic (irVersionOf in the compiler).
 */
import type { ArithOp, CalendarOp, CompareOp, LogicalOp, StringOp, UnaryOp } from "./operators.js";
import type { CompareKind, Scalar } from "./values.js";
import type { DurationUnit } from "./time.js";

export const IR_VERSION = 2;
/** The IR versions this runtime reads. */
export const IR_VERSIONS: readonly number[] = [1, 2];

export type Verdict = "approve" | "escalate" | "reject";
export type SignalType = "string" | "number" | "integer" | "decimal" | "boolean" | "timestamp" | "enum";

export type { Scalar, CompareKind } from "./values.js";

/** One node per operator family (operators.ts); a new operator of a family changes nothing here. */
export type IrExpr =
  /** `unit`: a duration literal (time.ts), its value in milliseconds, written in that unit (`30d`). */
  | { readonly op: "lit"; readonly value: Scalar; readonly unit?: DurationUnit }
  | { readonly op: "signal"; readonly name: string }
  /** `now`: the decision instant, a timestamp the evaluation is given (evaluate.ts), never a signal. */
  | { readonly op: "now" }
  | { readonly op: "present"; readonly name: string }
  | { readonly op: UnaryOp; readonly arg: IrExpr }
  | { readonly op: LogicalOp; readonly args: readonly IrExpr[] }
  | { readonly op: "cmp"; readonly cmp: CompareOp; readonly kind: CompareKind; readonly left: IrExpr; readonly right: IrExpr }
  | { readonly op: "in"; readonly kind: CompareKind; readonly value: IrExpr; readonly set: readonly Scalar[] }
  | { readonly op: "range"; readonly kind?: "decimal"; readonly value: IrExpr; readonly min: IrExpr; readonly max: IrExpr }
  | { readonly op: "str"; readonly fn: StringOp; readonly left: IrExpr; readonly right: IrExpr }
  | { readonly op: "matches"; readonly value: IrExpr; readonly pattern: string }
  /** `arg in_cidr [ranges]`: the address lies in one of the CIDR ranges (ip.ts). */
  | { readonly op: "in_cidr"; readonly arg: IrExpr; readonly ranges: readonly string[] }
  /**
   * Without `kind`, IEEE-754 arithmetic on numbers and integers; `kind: "decimal"`, exact (exact.ts); `kind: "time"`,
   * on timestamps (RFC 3339 strings) and durations (whole milliseconds), exact (time.ts).
   */
  | { readonly op: "arith"; readonly fn: ArithOp; readonly kind?: "decimal" | "time"; readonly left: IrExpr; readonly right: IrExpr }
  /** A field of the timestamp `arg`'s local time in `zone`, whose table `PolicyIr.zones` holds (zones.ts). */
  | { readonly op: "calendar"; readonly fn: CalendarOp; readonly arg: IrExpr; readonly zone: string };

/** The IR node of an operator family, or of one operator. */
export type IrNode<Op extends IrExpr["op"]> = Extract<IrExpr, { readonly op: Op }>;

export interface IrSignal {
  readonly type: SignalType;
  readonly optional: boolean;
  /** `decimal(S)`'s S: the most decimal places a value has. Only on decimal signals. */
  readonly scale?: number;
  /** A string of a lexical structure of its own, as the signals schema's `format` names it: `semver`, `ip`. */
  readonly format?: "semver" | "ip";
}

export interface IrRule {
  /** The rule's name in the source; reported as `ruleMatched`. */
  readonly id: string;
  readonly verdict: Verdict;
  readonly reason: string;
  readonly when: IrExpr;
}

export interface IrOutcome {
  readonly verdict: Verdict;
  readonly reason: string;
}

export interface PolicyIr {
  readonly irVersion: 1 | typeof IR_VERSION;
  readonly policyId: string;
  readonly version: string;
  /** The action this policy governs and the signals an executed action must echo (confirm-execution). */
  readonly governs: { readonly action: string; readonly binding: readonly string[] };
  /** Declared signals in declaration order. */
  readonly signals: Readonly<Record<string, IrSignal>>;
  readonly rules: readonly IrRule[];
  /** The catch-all; null when the policy has none (the runtime may then answer SYS-006). */
  readonly otherwise: IrOutcome | null;
  /** The tables of the zones the conditions name; absent when they name none (zones.ts). */
  readonly zones?: IrZones;
}

/**
 * UTC-offset transitions of named zones, as the compiler took them from its tz database: what the calendar fields
 * compute with, pinned by `bundle_hash`. Instants and offsets are whole seconds.
 */
export interface IrZones {
  /** The tz database release the tables come from (`2025c`): two builds from different releases differ here. */
  readonly tzdata: string;
  /** `[from, to)`: the instants the tables cover; outside, a calendar field is a fault (EVAL-004). */
  readonly horizon: readonly [number, number];
  /** By zone name: `[instant, offset]` pairs, the first at the horizon's start, each offset in force until the next. */
  readonly tables: Readonly<Record<string, readonly (readonly [number, number])[]>>;
}

/** The name reported as the matched rule when the catch-all decides. */
export const OTHERWISE_RULE_ID = "otherwise";
