import { describe, expect, it } from "vitest";
import { explain, preparePolicy, type Decision, type IrExpr, type IrSignal, type PolicyIr } from "../../src/index.js";

const sig = (name: string): IrExpr => ({ op: "signal", name });
const lit = (value: string | number | boolean): IrExpr => ({ op: "lit", value });
const div = (left: IrExpr, right: IrExpr): IrExpr => ({ op: "arith", fn: "div", left, right });
const gt = (left: IrExpr, right: IrExpr): IrExpr => ({ op: "cmp", cmp: "gt", kind: "number", left, right });
const and = (...args: IrExpr[]): IrExpr => ({ op: "and", args });
const or = (...args: IrExpr[]): IrExpr => ({ op: "or", args });

const SIGNALS: Record<string, IrSignal> = {
  amount: { type: "number", optional: false },
  balance: { type: "number", optional: false },
  absent: { type: "number", optional: true },
};

/** `most_of_balance` then the catch-all that approves: the case, where a skipped rule approved. */
function decide(when: IrExpr, signals: Record<string, unknown>, irVersion: 1 | 2 = 2): Decision {
  const ir: PolicyIr = {
    irVersion,
    policyId: "t",
    version: "1.0.0",
    governs: { action: "a", binding: [] },
    signals: SIGNALS,
    rules: [{ id: "most_of_balance", verdict: "escalate", reason: "most of the balance", when }],
    otherwise: { verdict: "approve", reason: "ordinary transfer" },
  };
  const decision = preparePolicy(ir).evaluate(signals);
  // The explanation decides alike, fault included (explain.ts).
  expect(explain(ir, signals).decision).toEqual(decision);
  return decision;
}

const fault = (code: string, expr: string) => ({
  decided: false,
  fault: { code, ruleId: "most_of_balance", expr, message: expect.stringContaining(expr) },
});

describe("no fault approves: arithmetic that cannot be stated exactly ends the evaluation", () => {
  const most = gt(div(sig("amount"), sig("balance")), lit(0.5));

  it("a division by zero is EVAL-001 at its rule, not a skipped rule that lets the catch-all approve", () => {
    expect(decide(most, { amount: 100, balance: 0 })).toEqual(fault("EVAL-001", "amount / balance"));
    expect(decide(most, { amount: 100, balance: 1000 })).toMatchObject({ decided: true, verdict: "approve" });
  });

  it("an IR version 1 bundle (an earlier compiler's) gets the same semantics", () => {
    expect(decide(most, { amount: 100, balance: 0 }, 1)).toEqual(fault("EVAL-001", "amount / balance"));
  });

  it.each([
    ["a quotient beyond ±(2^53 - 1)", gt(div(sig("amount"), lit(1e-300)), lit(1000)), { amount: 1 }, "EVAL-002", "amount / 1e-300"],
    [
      "a product that overflows",
      gt({ op: "arith", fn: "mul", left: sig("amount"), right: lit(1e308) }, lit(0)),
      { amount: 10 },
      "EVAL-002",
      "amount * 1e+308",
    ],
    [
      "an integer sum past 2^53 - 1 (the double would round it)",
      gt({ op: "arith", fn: "add", left: sig("amount"), right: lit(2) }, lit(0)),
      { amount: 9007199254740991 },
      "EVAL-002",
      "amount + 2",
    ],
    [
      "a product that underflows to zero",
      gt({ op: "arith", fn: "mul", left: sig("amount"), right: lit(1e-200) }, lit(0)),
      { amount: 1e-200 },
      "EVAL-003",
      "amount * 1e-200",
    ],
    ["a quotient that underflows to zero", gt(div(sig("amount"), lit(1e300)), lit(0)), { amount: 1e-100 }, "EVAL-003", "amount / 1e+300"],
  ])("%s", (_name, when, signals, code, expr) => {
    expect(decide(when, signals)).toEqual(fault(code, expr));
  });

  it("an absent optional operand is unknown, as before: the rule is skipped, no fault", () => {
    expect(decide(gt(div(sig("amount"), sig("absent")), lit(0.5)), { amount: 1, balance: 0 })).toMatchObject({ ruleId: "otherwise" });
    expect(decide(gt(div(sig("absent"), sig("balance")), lit(0.5)), { amount: 1, balance: 0 })).toMatchObject({ ruleId: "otherwise" });
  });

  it("a fault is a value only false (in `and`) and true (in `or`) absorb, in either order", () => {
    const guard = gt(sig("balance"), lit(0));
    const zero = { amount: 100, balance: 0 };
    expect(decide(and(guard, most), zero)).toMatchObject({ ruleId: "otherwise" });
    expect(decide(and(most, guard), zero)).toMatchObject({ ruleId: "otherwise" });
    expect(decide(or(lit(true), most), zero)).toMatchObject({ ruleId: "most_of_balance" });
    expect(decide(or(most, gt(sig("amount"), lit(50))), zero)).toMatchObject({ ruleId: "most_of_balance" });
    // Unknown does not absorb it: a fault and an unknown is the fault, never a skipped rule.
    const unknown = gt(sig("absent"), lit(1));
    expect(decide(and(unknown, most), zero)).toEqual(fault("EVAL-001", "amount / balance"));
    expect(decide(or(most, unknown), zero)).toEqual(fault("EVAL-001", "amount / balance"));
    expect(decide(and(lit(true), most), zero)).toEqual(fault("EVAL-001", "amount / balance"));
    expect(decide({ op: "not", arg: most }, zero)).toEqual(fault("EVAL-001", "amount / balance"));
  });

  it("a rule after the one that decides is not evaluated, so its fault does not count", () => {
    const ir: PolicyIr = {
      irVersion: 2,
      policyId: "t",
      version: "1.0.0",
      governs: { action: "a", binding: [] },
      signals: SIGNALS,
      rules: [
        { id: "first", verdict: "reject", reason: "first", when: gt(sig("amount"), lit(10)) },
        { id: "second", verdict: "approve", reason: "second", when: most },
      ],
      otherwise: null,
    };
    expect(preparePolicy(ir).evaluate({ amount: 100, balance: 0 })).toMatchObject({ decided: true, ruleId: "first" });
    expect(preparePolicy(ir).evaluate({ amount: 1, balance: 0 })).toMatchObject({ fault: { code: "EVAL-001", ruleId: "second" } });
  });

  it("the explanation marks the node that faulted and the rule's result, and explains every rule", () => {
    const ir: PolicyIr = {
      irVersion: 2,
      policyId: "t",
      version: "1.0.0",
      governs: { action: "a", binding: [] },
      signals: SIGNALS,
      rules: [
        { id: "first", verdict: "reject", reason: "first", when: gt(sig("amount"), lit(10)) },
        { id: "second", verdict: "approve", reason: "second", when: most },
      ],
      otherwise: null,
    };
    const { decision, explanation } = explain(ir, { amount: 100, balance: 0 });
    expect(decision).toMatchObject({ decided: true, ruleId: "first" });
    const second = explanation.rules[1]!;
    expect(second.result).toBe("fault");
    expect(second.condition).toMatchObject({ expr: "(amount / balance) > 0.5", value: null });
    expect(second.condition.fault).toBeUndefined();
    expect(second.condition.operands![0]).toMatchObject({ expr: "amount / balance", value: null, fault: "EVAL-001" });
  });
});
