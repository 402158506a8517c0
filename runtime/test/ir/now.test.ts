/**
 * `now`, the decision instant (time.ts `decisionInstant`, `{op: "now"}`): every `now` of one evaluation is the instant the
 * evaluation is given, in the text an attestation's `issuedAt` has; a policy that reads it cannot be evaluated without
 * one; the explanation shows it and what is computed from it in their own text.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DURATION_UNITS,
  MAX_DECISION_INSTANT,
  MIN_DECISION_INSTANT,
  decisionInstant,
  explain,
  expressionText,
  parseDecisionInstant,
  preparePolicy,
  readsNow,
  type IrExpr,
  type PolicyIr,
} from "../../src/index.js";

const NOW: IrExpr = { op: "now" };
const sig = (name: string): IrExpr => ({ op: "signal", name });
const dur = (n: number, unit: keyof typeof DURATION_UNITS): IrExpr => ({ op: "lit", value: n * DURATION_UNITS[unit], unit });
const time = (fn: "add" | "sub", left: IrExpr, right: IrExpr): IrExpr => ({ op: "arith", fn, kind: "time", left, right });
const lt = (left: IrExpr, right: IrExpr, kind: "timestamp" | "number" = "timestamp"): IrExpr => ({
  op: "cmp",
  cmp: "lt",
  kind,
  left,
  right,
});

function policy(...whens: IrExpr[]): PolicyIr {
  return {
    irVersion: 2,
    policyId: "t",
    version: "1.0.0",
    governs: { action: "a", binding: [] },
    signals: { deadline: { type: "timestamp", optional: false }, opened_at: { type: "timestamp", optional: true } },
    rules: whens.map((when, i) => ({ id: `r${i}`, verdict: "escalate", reason: `rule ${i}`, when })),
    otherwise: { verdict: "approve", reason: "ok" },
  };
}

const ruleAt = (ir: PolicyIr, signals: Record<string, unknown>, at: string): string => {
  const d = preparePolicy(ir).evaluate(signals, new Date(at));
  expect(explain(ir, signals, new Date(at)).decision).toEqual(d);
  return d.decided ? d.ruleId : "none";
};

describe("now", () => {
  const deadline = "2026-06-01T17:00:00Z";

  it("`now > deadline`, `now - opened_at < 30d`, `now + 15m > deadline`: decided at the instant given, to the millisecond", () => {
    const late = policy(lt(sig("deadline"), NOW));
    expect(ruleAt(late, { deadline }, "2026-06-01T17:00:00.000Z")).toBe("otherwise");
    expect(ruleAt(late, { deadline }, "2026-06-01T17:00:00.001Z")).toBe("r0");
    const young = policy(lt(time("sub", NOW, sig("opened_at")), dur(30, "d"), "number"));
    expect(ruleAt(young, { deadline, opened_at: "2026-05-02T12:00:00.001Z" }, "2026-06-01T12:00:00Z")).toBe("r0");
    expect(ruleAt(young, { deadline, opened_at: "2026-05-02T12:00:00Z" }, "2026-06-01T12:00:00Z")).toBe("otherwise");
    // An absent optional timestamp is unknown beside `now`, as beside any timestamp.
    expect(ruleAt(young, { deadline }, "2026-06-01T12:00:00Z")).toBe("otherwise");
    const soon = policy(lt(sig("deadline"), time("add", NOW, dur(15, "m"))));
    expect(ruleAt(soon, { deadline }, "2026-06-01T16:45:00.000Z")).toBe("otherwise");
    expect(ruleAt(soon, { deadline }, "2026-06-01T16:45:00.001Z")).toBe("r0");
  });

  it("every `now` of one evaluation is one instant, whatever it is", () => {
    // `not (now < now)` and `now - now == 0ms` hold at every instant.
    const ir = policy({ op: "cmp", cmp: "eq", kind: "number", left: time("sub", NOW, NOW), right: dur(0, "ms") });
    fc.assert(
      fc.property(fc.integer({ min: MIN_DECISION_INSTANT, max: MAX_DECISION_INSTANT }), (ms) => {
        expect(preparePolicy(ir).evaluate({ deadline }, new Date(ms))).toMatchObject({ ruleId: "r0" });
        expect(preparePolicy(policy(lt(NOW, NOW))).evaluate({ deadline }, new Date(ms))).toMatchObject({ ruleId: "otherwise" });
      }),
    );
  });

  it("a policy that reads `now` is refused without an instant, before any rule, even one that would decide first", () => {
    const ir = policy({ op: "lit", value: true }, lt(NOW, sig("deadline")));
    const prepared = preparePolicy(ir);
    expect(prepared.readsNow).toBe(true);
    expect(() => prepared.evaluate({ deadline })).toThrow(new TypeError("the policy reads `now`, but no decision instant was given"));
    expect(() => explain(ir, { deadline })).toThrow(TypeError);
    // One that does not read it needs none.
    const plain = preparePolicy(policy(lt(sig("deadline"), sig("deadline"))));
    expect(plain.readsNow).toBe(false);
    expect(plain.evaluate({ deadline })).toMatchObject({ ruleId: "otherwise" });
  });

  it("`now` never faults; `now + d` faults beyond ECMAScript's dates only, as a timestamp signal's sum does", () => {
    const far = policy(lt(sig("deadline"), time("add", NOW, dur(104249991, "d"))));
    expect(preparePolicy(far).evaluate({ deadline }, new Date("2026-06-01T00:00:00Z"))).toMatchObject({
      decided: false,
      fault: { code: "EVAL-002", ruleId: "r0", expr: "now + 104249991d" },
    });
    expect(preparePolicy(policy(lt(sig("deadline"), time("add", NOW, dur(36500, "d"))))).evaluate({ deadline }, new Date(0))).toMatchObject(
      {
        ruleId: "r0",
      },
    );
  });

  it("the explanation shows `now` in the text issuedAt has, and a sum on it as an RFC 3339 instant", () => {
    const ir = policy(lt(sig("deadline"), time("add", NOW, dur(15, "m"))));
    const { explanation } = explain(ir, { deadline }, new Date("2026-06-01T16:50:00Z"));
    const sum = explanation.rules[0]!.condition.operands![1]!;
    expect(sum).toEqual({
      expr: "now + 15m",
      value: "2026-06-01T17:05:00Z",
      operands: [
        { expr: "now", value: "2026-06-01T16:50:00.000Z" },
        { expr: "15m", value: 900000, exact: "15m" },
      ],
    });
    expect(expressionText(ir.rules[0]!.when)).toBe("deadline < (now + 15m)");
  });

  it("readsNow finds `now` under every operator", () => {
    const deep: IrExpr = {
      op: "not",
      arg: { op: "or", args: [{ op: "lit", value: false }, lt(sig("deadline"), time("sub", NOW, dur(1, "h")))] },
    };
    expect(readsNow(deep)).toBe(true);
    expect(readsNow({ op: "in", kind: "timestamp", value: NOW, set: [deadline] })).toBe(true);
    expect(readsNow({ op: "range", value: sig("n"), min: sig("m"), max: sig("k") })).toBe(false);
  });
});

describe("the decision instant's text and range", () => {
  it("is the clock's toISOString: UTC, milliseconds written", () => {
    expect(decisionInstant(new Date("2026-06-01T19:00:01+02:00"))).toBe("2026-06-01T17:00:01.000Z");
    expect(decisionInstant(new Date(MIN_DECISION_INSTANT))).toBe("0000-01-01T00:00:00.000Z");
    expect(decisionInstant(new Date(MAX_DECISION_INSTANT))).toBe("9999-12-31T23:59:59.999Z");
  });

  it("a date outside the years 0000 to 9999, or no date, is no clock's", () => {
    for (const ms of [MIN_DECISION_INSTANT - 1, MAX_DECISION_INSTANT + 1, NaN]) {
      expect(() => decisionInstant(new Date(ms))).toThrow(TypeError);
    }
  });

  it.each([
    ["2026-06-01T12:00:00Z", "2026-06-01T12:00:00.000Z"],
    ["2026-06-01T14:00:00.5+02:00", "2026-06-01T12:00:00.500Z"],
    ["0000-01-01T00:00:00Z", "0000-01-01T00:00:00.000Z"],
  ])("parses %s as %s", (text, iso) => {
    expect(parseDecisionInstant(text)?.toISOString()).toBe(iso);
  });

  it.each(["2026-06-01", "2026-06-01T12:00:00", "2026-02-29T00:00:00Z", "0000-01-01T00:00:00+01:00", "+010000-01-01T00:00:00Z", ""])(
    "refuses %j",
    (text) => {
      expect(parseDecisionInstant(text)).toBeNull();
    },
  );
});
