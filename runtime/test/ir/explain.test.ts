import { describe, expect, it } from "vitest";
import { explain, IrUnsupportedError, type IrExpr, type PolicyIr } from "../../src/index.js";

const sig = (name: string): IrExpr => ({ op: "signal", name });
const lit = (value: string | number | boolean): IrExpr => ({ op: "lit", value });

/** payments.transfer's rules, as the compiler lowers them (constants inlined, `not in` as `not (... in ...)`). */
const IR: PolicyIr = {
  irVersion: 1,
  policyId: "payments.transfer",
  version: "1.2.0",
  governs: { action: "transfer.execute", binding: [] },
  signals: {},
  rules: [
    {
      id: "sanctioned",
      verdict: "reject",
      reason: "destination is sanctioned",
      when: { op: "in", kind: "string", value: sig("country"), set: ["CU", "IR"] },
    },
    {
      id: "risky",
      verdict: "reject",
      reason: "risk score is too high",
      when: { op: "cmp", cmp: "gt", kind: "number", left: sig("risk_score"), right: lit(80) },
    },
    {
      id: "over_limit",
      verdict: "escalate",
      reason: "daily limit would be exceeded",
      when: {
        op: "cmp",
        cmp: "gt",
        kind: "number",
        left: { op: "arith", fn: "add", left: sig("daily_total"), right: sig("amount") },
        right: lit(25000),
      },
    },
    {
      id: "unresolved",
      verdict: "escalate",
      reason: "destination is unknown",
      when: {
        op: "and",
        args: [
          { op: "not", arg: { op: "present", name: "country" } },
          { op: "cmp", cmp: "ge", kind: "number", left: sig("amount"), right: lit(5000) },
        ],
      },
    },
  ],
  otherwise: { verdict: "approve", reason: "verified customer within limits" },
};

describe("explain", () => {
  it("gives every rule's result, down to each comparison and the values it saw; an absent signal is unknown", () => {
    const { decision, explanation: e } = explain(IR, { risk_score: 20, daily_total: 24500, amount: 1000 });
    expect(decision).toEqual({ decided: true, verdict: "escalate", ruleId: "over_limit", reason: "daily limit would be exceeded" });
    expect(e.rules.map((r) => [r.rule, r.result])).toEqual([
      ["sanctioned", "unknown"],
      ["risky", "false"],
      ["over_limit", "true"],
      ["unresolved", "false"],
    ]);
    expect(e.rules[0]!.condition).toEqual({ expr: 'country in ["CU", "IR"]', value: null, operands: [{ expr: "country", value: null }] });
    expect(e.rules[2]!.condition).toEqual({
      expr: "(daily_total + amount) > 25000",
      value: true,
      operands: [
        {
          expr: "daily_total + amount",
          value: 25500,
          operands: [
            { expr: "daily_total", value: 24500 },
            { expr: "amount", value: 1000 },
          ],
        },
        { expr: "25000", value: 25000 },
      ],
    });
    expect(e.rules[3]!.condition.expr).toBe("(not present(country)) and (amount >= 5000)");
    expect(e.rules[3]!.condition.operands![0]).toEqual({
      expr: "not present(country)",
      value: true,
      operands: [{ expr: "present(country)", value: false }],
    });
    expect(e.otherwise).toEqual(IR.otherwise);
  });

  it("explains the rules after the one that decides, and the catch-all when none does", () => {
    const { decision, explanation } = explain(IR, { risk_score: 95, daily_total: 0, amount: 10, country: "FR" });
    expect(decision).toMatchObject({ ruleId: "risky" });
    expect(explanation.rules).toHaveLength(4);
    expect(explain(IR, { risk_score: 1, daily_total: 0, amount: 10, country: "FR" }).decision).toMatchObject({
      ruleId: "otherwise",
      verdict: "approve",
    });
    expect(explain({ ...IR, otherwise: null }, { risk_score: 1, daily_total: 0, amount: 10, country: "FR" }).decision).toEqual({
      decided: false,
      fault: null,
    });
  });

  it("refuses an operator the table does not declare, as preparePolicy does", () => {
    const ir: PolicyIr = {
      ...IR,
      rules: [
        {
          id: "r",
          verdict: "approve",
          reason: "x",
          when: { op: "cmp", cmp: "approx", kind: "number", left: lit(1), right: lit(2) } as unknown as IrExpr,
        },
      ],
    };
    expect(() => explain(ir, {})).toThrow(IrUnsupportedError);
  });
});
