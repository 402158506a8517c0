import { describe, expect, it } from "vitest";
import {
  ARITHMETIC_OPERATORS,
  CALENDAR_OPERATORS,
  COMPARISON_OPERATORS,
  IR_OPERATORS,
  IrUnsupportedError,
  LOGICAL_OPERATORS,
  SPECIAL_OPERATORS,
  STRING_OPERATORS,
  UNARY_OPERATORS,
  preparePolicy,
  type IrExpr,
  type PolicyIr,
} from "../../src/index.js";

const sig = (name: string): IrExpr => ({ op: "signal", name });
const lit = (value: string | number | boolean): IrExpr => ({ op: "lit", value });

function policy(rules: PolicyIr["rules"], otherwise: PolicyIr["otherwise"]): PolicyIr {
  return { irVersion: 1, policyId: "t", version: "1.0.0", governs: { action: "a", binding: [] }, signals: {}, rules, otherwise };
}

/** A one-rule policy: true when the rule fires, false when the catch-all answers. */
function fires(when: IrExpr, signals: Record<string, unknown>): boolean {
  const ir = policy([{ id: "r", verdict: "approve", reason: "fired", when }], { verdict: "reject", reason: "fell through" });
  const d = preparePolicy(ir).evaluate(signals);
  if (!d.decided) throw new Error("undecided");
  return d.ruleId === "r";
}

describe("Kleene three-valued logic: an absent optional signal is unknown", () => {
  // `u` is absent, so `u == 1` is unknown; T and F are plain truths.
  const T = lit(true);
  const F = lit(false);
  const U: IrExpr = { op: "cmp", cmp: "eq", kind: "number", left: sig("u"), right: lit(1) };
  const not = (arg: IrExpr): IrExpr => ({ op: "not", arg });
  const and = (...args: IrExpr[]): IrExpr => ({ op: "and", args });
  const or = (...args: IrExpr[]): IrExpr => ({ op: "or", args });

  it.each([
    ["unknown", U, false],
    ["not unknown", not(U), false],
    ["false and unknown", and(F, U), false],
    ["unknown and false", and(U, F), false],
    ["true and unknown", and(T, U), false],
    ["true or unknown", or(T, U), true],
    ["unknown or true", or(U, T), true],
    ["false or unknown", or(F, U), false],
    ["not (false and unknown)", not(and(F, U)), true],
    ["not (true and unknown)", not(and(T, U)), false],
    ["not (unknown or false)", not(or(U, F)), false],
  ])("%s fires: %s", (_name, expr, expected) => {
    expect(fires(expr as IrExpr, {})).toBe(expected);
  });

  it("present() is the one test that is never unknown", () => {
    expect(fires({ op: "present", name: "u" }, {})).toBe(false);
    expect(fires(not({ op: "present", name: "u" }), {})).toBe(true);
    expect(fires({ op: "present", name: "u" }, { u: 0 })).toBe(true);
  });
});

describe("operators", () => {
  it.each([
    [
      "arithmetic of an absent signal is unknown, not a fault",
      { op: "cmp", cmp: "gt", kind: "number", left: { op: "arith", fn: "div", left: sig("n"), right: lit(0) }, right: lit(0) },
      {},
      false,
    ],
    ["range is inclusive at both ends", { op: "range", value: sig("n"), min: lit(1), max: lit(3) }, { n: 3 }, true],
    [
      "timestamps compare as instants across offsets",
      { op: "cmp", cmp: "eq", kind: "timestamp", left: sig("t"), right: lit("2026-01-01T01:00:00+01:00") },
      { t: "2026-01-01T00:00:00Z" },
      true,
    ],
    [
      "timestamps in a set compare as instants",
      { op: "in", kind: "timestamp", value: sig("t"), set: ["2026-01-01T00:00:00.000Z"] },
      { t: "2026-01-01T00:00:00Z" },
      true,
    ],
    [
      "len counts code points",
      { op: "cmp", cmp: "eq", kind: "number", left: { op: "len", arg: sig("s") }, right: lit(2) },
      { s: "a😀" },
      true,
    ],
    ["matches is unanchored", { op: "matches", value: sig("s"), pattern: "b+" }, { s: "abbbc" }, true],
    ["matches uses the u flag", { op: "matches", value: sig("s"), pattern: "^.$" }, { s: "😀" }, true],
    ["in does not match across types", { op: "in", kind: "string", value: sig("n"), set: ["1"] }, { n: 1 }, false],
    ["an empty set holds nothing", { op: "in", kind: "string", value: sig("s"), set: [] }, { s: "" }, false],
    [
      "a signal that is not a scalar is unknown",
      { op: "cmp", cmp: "eq", kind: "string", left: sig("s"), right: lit("x") },
      { s: ["x"] },
      false,
    ],
    ["an inherited property is not a signal", { op: "present", name: "toString" }, {}, false],
  ])("%s", (_name, expr, signals, expected) => {
    expect(fires(expr as IrExpr, signals)).toBe(expected);
  });
});

it("first match wins, and no match without a catch-all is undecided", () => {
  const p = preparePolicy(
    policy(
      [
        { id: "first", verdict: "reject", reason: "one", when: { op: "cmp", cmp: "gt", kind: "number", left: sig("n"), right: lit(1) } },
        { id: "second", verdict: "approve", reason: "two", when: { op: "cmp", cmp: "gt", kind: "number", left: sig("n"), right: lit(0) } },
      ],
      null,
    ),
  );
  expect(p.evaluate({ n: 5 })).toEqual({ decided: true, verdict: "reject", ruleId: "first", reason: "one" });
  expect(p.evaluate({ n: 1 })).toEqual({ decided: true, verdict: "approve", ruleId: "second", reason: "two" });
  expect(p.evaluate({ n: 0 })).toEqual({ decided: false, fault: null });
});

describe("an IR this runtime does not understand is refused when prepared, not when a request arrives", () => {
  const one = (when: unknown): PolicyIr => policy([{ id: "r", verdict: "approve", reason: "x", when: when as IrExpr }], null);
  const cmp = { op: "cmp", cmp: "eq", kind: "number", left: sig("n"), right: lit(1) };

  it("reads IR versions 1 and 2, and refuses another", () => {
    expect(() => preparePolicy({ ...policy([], null), irVersion: 2 })).not.toThrow();
    expect(() => preparePolicy({ ...policy([], null), irVersion: 3 } as unknown as PolicyIr)).toThrow(IrUnsupportedError);
    expect(() => preparePolicy({ ...policy([], null), irVersion: 3 } as unknown as PolicyIr)).toThrow("this runtime reads 1 and 2");
  });

  it.each([
    ["an unknown node", { op: "xor", arg: lit(true) }, "IR operator `xor` is not supported"],
    ["a name inherited from Object.prototype", { op: "toString", arg: lit(true) }, "IR operator `toString` is not supported"],
    ["an unknown comparison", { ...cmp, cmp: "approx" }, "IR operator `approx` is not supported"],
    ["an unknown comparison kind", { ...cmp, kind: "date" }, "comparison kind `date` is not supported"],
    ["an unknown arithmetic operator", { op: "arith", fn: "pow", left: lit(1), right: lit(2) }, "IR operator `pow` is not supported"],
    ["an unknown arithmetic kind", { op: "arith", fn: "add", kind: "rational", left: lit(1), right: lit(2) }, "arithmetic kind `rational`"],
    ["division on decimals", { op: "arith", fn: "div", kind: "decimal", left: lit(1), right: lit(2) }, "`/` is not defined on decimals"],
    ["an unknown range kind", { op: "range", kind: "date", value: sig("n"), min: lit(1), max: lit(2) }, "range kind `date`"],
    ["an unknown string operator", { op: "str", fn: "like", left: lit("a"), right: lit("b") }, "IR operator `like` is not supported"],
    ["an unknown membership kind", { op: "in", kind: "date", value: sig("n"), set: [] }, "comparison kind `date` is not supported"],
    [
      "an unknown operator deep inside",
      { op: "and", args: [lit(true), { op: "not", arg: { op: "sqrt", arg: lit(1) } }] },
      "IR operator `sqrt` is not supported",
    ],
  ])("refuses %s", (_name, when, message) => {
    expect(() => preparePolicy(one(when))).toThrow(IrUnsupportedError);
    expect(() => preparePolicy(one(when))).toThrow(message);
  });
});

it("the operator table's families have disjoint names, none of them another IR node's tag", () => {
  const families = [
    UNARY_OPERATORS,
    LOGICAL_OPERATORS,
    COMPARISON_OPERATORS,
    STRING_OPERATORS,
    ARITHMETIC_OPERATORS,
    CALENDAR_OPERATORS,
    SPECIAL_OPERATORS,
  ];
  const names = families.flatMap((f) => Object.keys(f));
  expect(new Set(names).size).toBe(names.length);
  expect(Object.keys(IR_OPERATORS).sort()).toEqual([...names].sort());
  for (const tag of ["lit", "signal", "cmp", "str", "arith", "calendar"]) expect(names).not.toContain(tag);
});
