/**
 * Durations and timestamp arithmetic (time.ts, `kind: "time"` arithmetic in apply.ts): exact whole milliseconds, an
 * instant written back as RFC 3339, out of ECMAScript's dates a fault, the explanation deciding alike.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DURATION_UNITS,
  INSTANT_LIMIT,
  MAX_INSTANT,
  MIN_INSTANT,
  durationText,
  explain,
  instantText,
  isTimestamp,
  preparePolicy,
  type Decision,
  type IrExpr,
  type IrSignal,
  type PolicyIr,
} from "../../src/index.js";

const sig = (name: string): IrExpr => ({ op: "signal", name });
const dur = (n: number, unit: keyof typeof DURATION_UNITS): IrExpr => ({ op: "lit", value: n * DURATION_UNITS[unit], unit });
const time = (fn: "add" | "sub", left: IrExpr, right: IrExpr): IrExpr => ({ op: "arith", fn, kind: "time", left, right });
const cmp = (c: "lt" | "eq", kind: "timestamp" | "number", left: IrExpr, right: IrExpr): IrExpr => ({
  op: "cmp",
  cmp: c,
  kind,
  left,
  right,
});

const SIGNALS: Record<string, IrSignal> = {
  requested_at: { type: "timestamp", optional: false },
  opened_at: { type: "timestamp", optional: true },
};

function decide(when: IrExpr, signals: Record<string, unknown>): Decision {
  const ir: PolicyIr = {
    irVersion: 2,
    policyId: "t",
    version: "1.0.0",
    governs: { action: "a", binding: [] },
    signals: SIGNALS,
    rules: [{ id: "new_account", verdict: "escalate", reason: "new account", when }],
    otherwise: { verdict: "approve", reason: "ok" },
  };
  const decision = preparePolicy(ir).evaluate(signals);
  expect(explain(ir, signals).decision).toEqual(decision);
  return decision;
}

/** The instants a timestamp signal names, in milliseconds. */
const instants = fc.integer({ min: MIN_INSTANT, max: MAX_INSTANT });
/** Durations of up to a thousand years, in milliseconds. */
const durations = fc.integer({ min: -1000 * 366 * 86_400_000, max: 1000 * 366 * 86_400_000 });

describe("durations and instants", () => {
  it("a duration's text reads back as its milliseconds, in the largest whole unit", () => {
    fc.assert(
      fc.property(fc.integer({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }), (ms) => {
        const [, sign, n, unit] = /^(-?)(\d+)(ms|[smhd])$/.exec(durationText(ms))!;
        const length = DURATION_UNITS[unit as keyof typeof DURATION_UNITS];
        expect((sign ? -1 : 1) * Number(n) * length).toBe(ms === 0 ? 0 : ms);
        const larger = Object.values(DURATION_UNITS).filter((l) => l > length);
        for (const l of larger) expect(ms % l === 0 && ms !== 0).toBe(false);
      }),
    );
  });

  it("an instant a timestamp names is written as one, and reads back as itself", () => {
    fc.assert(
      fc.property(instants, (ms) => {
        const text = instantText(ms)!;
        expect(isTimestamp(text), text).toBe(true);
        expect(Date.parse(text)).toBe(ms);
      }),
    );
  });

  it("past the years RFC 3339 writes, an expanded year up to ±8.64e15 ms, then none", () => {
    expect(instantText(MAX_INSTANT + 1)).toBe(new Date(MAX_INSTANT + 1).toISOString());
    expect(Date.parse(instantText(-INSTANT_LIMIT)!)).toBe(-INSTANT_LIMIT);
    expect(instantText(INSTANT_LIMIT + 1)).toBeNull();
    expect(instantText(0.5)).toBeNull();
  });
});

describe("timestamp arithmetic decides as the instants do", () => {
  it("the issue's rule: `requested_at < opened_at + 30d`, exactly at the thirtieth day", () => {
    const when = cmp("lt", "timestamp", sig("requested_at"), time("add", sig("opened_at"), dur(30, "d")));
    const opened = "2026-03-01T00:00:00Z";
    expect(decide(when, { requested_at: "2026-03-30T23:59:59.999Z", opened_at: opened })).toMatchObject({ ruleId: "new_account" });
    expect(decide(when, { requested_at: "2026-03-31T00:00:00Z", opened_at: opened })).toMatchObject({ ruleId: "otherwise" });
    // Offsets are instants too: 01:00+01:00 is midnight UTC.
    expect(decide(when, { requested_at: "2026-03-31T00:59:59+01:00", opened_at: opened })).toMatchObject({ ruleId: "new_account" });
    // An absent timestamp is unknown: the rule does not fire.
    expect(decide(when, { requested_at: opened })).toMatchObject({ ruleId: "otherwise" });
  });

  it("`a + d - d` is `a`, `(a + d) - a` is `d`, for every instant and duration that stay in range", () => {
    fc.assert(
      fc.property(instants, durations, (a, d) => {
        const text = instantText(a)!;
        const back = cmp(
          "eq",
          "timestamp",
          time("sub", time("add", sig("requested_at"), { op: "lit", value: d, unit: "ms" }), { op: "lit", value: d, unit: "ms" }),
          sig("requested_at"),
        );
        expect(decide(back, { requested_at: text })).toMatchObject({ ruleId: "new_account" });
        const length = cmp(
          "eq",
          "number",
          time("sub", time("add", sig("requested_at"), { op: "lit", value: d, unit: "ms" }), sig("requested_at")),
          { op: "lit", value: d, unit: "ms" },
        );
        expect(decide(length, { requested_at: text })).toMatchObject({ ruleId: "new_account" });
      }),
    );
  });

  it("an instant beyond ECMAScript's dates is a fault (EVAL-002), never an approval", () => {
    const huge: IrExpr = { op: "lit", value: Number.MAX_SAFE_INTEGER, unit: "ms" };
    const when = cmp("lt", "timestamp", sig("requested_at"), time("add", sig("opened_at"), huge));
    const d = decide(when, { requested_at: "2026-01-01T00:00:00Z", opened_at: "2026-01-01T00:00:00Z" });
    expect(d).toMatchObject({ decided: false, fault: { code: "EVAL-002", ruleId: "new_account", expr: "opened_at + 9007199254740991ms" } });
  });

  it("the explanation writes an instant as a timestamp and a duration in its unit", () => {
    const when = cmp("lt", "timestamp", sig("requested_at"), time("add", sig("opened_at"), dur(30, "d")));
    const ir: PolicyIr = {
      irVersion: 2,
      policyId: "t",
      version: "1.0.0",
      governs: { action: "a", binding: [] },
      signals: SIGNALS,
      rules: [{ id: "r", verdict: "escalate", reason: "r", when }],
      otherwise: null,
    };
    const sum = explain(ir, { requested_at: "2026-03-02T00:00:00Z", opened_at: "2026-03-01T00:00:00Z" }).explanation.rules[0]!.condition
      .operands![1]!;
    expect(sum).toMatchObject({ expr: "opened_at + 30d", value: "2026-03-31T00:00:00Z" });
    expect(sum.operands![1]).toMatchObject({ expr: "30d", value: 2_592_000_000, exact: "30d" });
  });

  it("the explanation writes the durations of a list a duration is tested against in their units, not milliseconds", () => {
    const when: IrExpr = {
      op: "in",
      kind: "number",
      value: time("sub", sig("requested_at"), sig("opened_at")),
      set: [900_000, 86_400_000, 1_500],
    };
    const ir: PolicyIr = {
      irVersion: 2,
      policyId: "t",
      version: "1.0.0",
      governs: { action: "a", binding: [] },
      signals: SIGNALS,
      rules: [{ id: "r", verdict: "escalate", reason: "r", when }],
      otherwise: null,
    };
    const condition = explain(ir, { requested_at: "2026-03-01T00:15:00Z", opened_at: "2026-03-01T00:00:00Z" }).explanation.rules[0]!
      .condition;
    expect(condition).toMatchObject({ expr: "(requested_at - opened_at) in [15m, 1d, 1500ms]", value: true });
  });

  it('a runtime refuses `kind: "time"` on an operator time has not (`*`) when the IR is prepared', () => {
    const when = cmp("lt", "number", { op: "arith", fn: "mul", kind: "time", left: dur(1, "d"), right: dur(1, "d") }, dur(1, "d"));
    expect(() => decide(when, { requested_at: "2026-01-01T00:00:00Z" })).toThrow(/not defined on timestamps and durations/);
  });
});
