/**
 * `%`, `abs`, `min` and `max` (docs/language.md "Evaluation"): exact on decimals, checked against bigint rationals on
 * random values; `%` is truncated division's remainder on doubles and decimals alike; `% 0` is EVAL-001; the
 * explanation shows the results with their places and decides as the evaluator does.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { explain, expressionText as written, preparePolicy, type IrExpr, type IrSignal, type PolicyIr } from "../../src/index.js";

const sig = (name: string): IrExpr => ({ op: "signal", name });
const lit = (value: number): IrExpr => ({ op: "lit", value });
const arith = (fn: "mod" | "min" | "max", left: IrExpr, right: IrExpr, decimal = true): IrExpr =>
  decimal ? { op: "arith", fn, kind: "decimal", left, right } : { op: "arith", fn, left, right };
const cmp = (c: "eq" | "gt", left: IrExpr, right: IrExpr, kind: "decimal" | "number" = "decimal"): IrExpr => ({
  op: "cmp",
  cmp: c,
  kind,
  left,
  right,
});

const SIGNALS: Record<string, IrSignal> = {
  a: { type: "decimal", optional: false, scale: 2 },
  b: { type: "decimal", optional: false, scale: 3 },
  n: { type: "integer", optional: false },
  m: { type: "integer", optional: false },
  x: { type: "number", optional: true },
};

function policy(when: IrExpr): PolicyIr {
  return {
    irVersion: 2,
    policyId: "t",
    version: "1.0.0",
    governs: { action: "a", binding: [] },
    signals: SIGNALS,
    rules: [{ id: "r", verdict: "reject", reason: "r", when }],
    otherwise: { verdict: "approve", reason: "o" },
  };
}

/** Whether `when` holds for `signals`: true, false, or the fault's code; the explanation must agree. */
function holds(when: IrExpr, signals: Record<string, unknown>): boolean | string {
  const ir = policy(when);
  const d = preparePolicy(ir).evaluate(signals);
  expect(explain(ir, signals).decision).toEqual(d);
  if (!d.decided) return d.fault!.code;
  return d.ruleId === "r";
}

/** Units at `places` places as a bigint (the values are generated as units, so this is exact). */
const cents = fc.bigInt({ min: -(10n ** 11n), max: 10n ** 11n });
const mils = fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n });
const asNumber = (units: bigint, places: number): number => Number(units) / 10 ** places;
const trunc = (a: bigint, b: bigint): bigint => a - b * (a / b);

describe("exact on decimals, against bigint rationals", () => {
  it("a % b, min(a, b), max(a, b) for a decimal(2) and a decimal(3), at 3 places", () => {
    fc.assert(
      fc.property(cents, mils, fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }), (a, b, c) => {
        const signals = { a: asNumber(a, 2), b: asNumber(b, 3) };
        const a3 = a * 10n;
        const target = lit(asNumber(c, 3));
        const mod = holds(cmp("eq", arith("mod", sig("a"), sig("b")), target), signals);
        if (b === 0n) expect(mod).toBe("EVAL-001");
        else expect(mod).toBe(trunc(a3, b) === c);
        expect(holds(cmp("gt", arith("min", sig("a"), sig("b")), target), signals)).toBe((a3 < b ? a3 : b) > c);
        expect(holds(cmp("gt", arith("max", sig("a"), sig("b")), target), signals)).toBe((a3 > b ? a3 : b) > c);
        expect(holds(cmp("gt", { op: "abs", arg: sig("a") }, target), signals)).toBe((a3 < 0n ? -a3 : a3) > c);
      }),
      { numRuns: 20_000 },
    );
  });

  it("0.30 % 0.10 is 0 exactly, where doubles give 0.09999999999999998", () => {
    expect(0.3 % 0.1).not.toBe(0);
    expect(holds(cmp("eq", arith("mod", sig("a"), lit(0.1)), lit(0)), { a: 0.3, b: 0 })).toBe(true);
  });
});

describe("on integers and numbers, as doubles", () => {
  it("% is truncated division's remainder, the dividend's sign: -7 % 3 is -1, 7 % -3 is 1", () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), fc.maxSafeInteger(), (n, m) => {
        const r = holds(cmp("eq", arith("mod", sig("n"), sig("m"), false), lit(0), "number"), { n, m });
        if (m === 0) expect(r).toBe("EVAL-001");
        else expect(r).toBe(trunc(BigInt(n), BigInt(m)) === 0n);
      }),
      { numRuns: 20_000 },
    );
    const is = (n: number, m: number, v: number) => holds(cmp("eq", arith("mod", sig("n"), sig("m"), false), lit(v), "number"), { n, m });
    expect([is(-7, 3, -1), is(7, -3, 1), is(-7, -3, -1), is(7, 3, 1)]).toEqual([true, true, true, true]);
  });

  it("abs, min and max of the largest integers stay in range: no fault", () => {
    const most = 9007199254740991;
    expect(holds(cmp("eq", { op: "abs", arg: sig("n") }, lit(most), "number"), { n: -most, m: 0 })).toBe(true);
    expect(holds(cmp("eq", arith("max", sig("n"), sig("m"), false), lit(most), "number"), { n: most, m: -most })).toBe(true);
  });

  it("an unknown operand makes the result unknown, not a fault, even beside a zero divisor", () => {
    expect(holds(cmp("eq", arith("mod", sig("x"), lit(0), false), lit(0), "number"), { n: 1, m: 1 })).toBe(false);
    expect(holds(cmp("gt", arith("max", sig("x"), sig("n"), false), lit(0), "number"), { n: 1, m: 1 })).toBe(false);
  });
});

describe("written and explained", () => {
  it("min and max are written as calls, % between its operands", () => {
    expect(written(arith("max", sig("a"), arith("mod", sig("b"), lit(2))))).toBe("max(a, b % 2)");
    expect(written(cmp("gt", { op: "abs", arg: arith("min", sig("a"), sig("b")) }, lit(1)))).toBe("abs(min(a, b)) > 1");
  });

  it("the explanation shows each result with its places", () => {
    const when = cmp("gt", arith("max", sig("a"), sig("b")), lit(25000));
    const { explanation } = explain(policy(when), { a: 25000.01, b: 100 });
    const max = explanation.rules[0]!.condition.operands![0]!;
    expect(max).toMatchObject({ expr: "max(a, b)", value: 25000.01, exact: "25000.010" });
    const mod = explain(policy(cmp("eq", arith("mod", sig("a"), lit(1000)), lit(0))), { a: 1000.1, b: 0 }).explanation.rules[0]!;
    expect(mod.condition.operands![0]).toMatchObject({ expr: "a % 1000", exact: "0.10" });
  });

  it("the fault names the remainder", () => {
    const d = preparePolicy(policy(cmp("eq", arith("mod", sig("a"), sig("b")), lit(0)))).evaluate({ a: 1, b: 0 });
    expect(d).toMatchObject({ decided: false, fault: { code: "EVAL-001", expr: "a % b", message: "division by zero in `a % b`" } });
  });
});
