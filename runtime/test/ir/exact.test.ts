import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createSignalValidator,
  decimalText,
  explain,
  parseStrictJson,
  placesOf,
  preparePolicy,
  unitsOf,
  type IrExpr,
  type IrSignal,
  type PolicyIr,
} from "../../src/index.js";

const sig = (name: string): IrExpr => ({ op: "signal", name });
const lit = (value: number): IrExpr => ({ op: "lit", value });
const exact = (fn: "add" | "sub" | "mul", left: IrExpr, right: IrExpr): IrExpr => ({ op: "arith", fn, kind: "decimal", left, right });
const cmp = (c: "gt" | "ge" | "eq", left: IrExpr, right: IrExpr): IrExpr => ({ op: "cmp", cmp: c, kind: "decimal", left, right });

describe("exact decimals from JSON numbers", () => {
  it.each([
    [1000.1, 1],
    [0.29, 2],
    [25000, 0],
    [1e-7, 7],
    [0.30000000000000004, 17],
    [-12.5, 1],
    [1.5e-18, 19],
  ])("placesOf(%s) is %s", (n, places) => {
    expect(placesOf(n)).toBe(places);
  });

  it("reads the decimal a number's shortest form writes, at any places it fits in, and refuses fewer", () => {
    expect(unitsOf(1000.1, 2)).toBe(100010n);
    expect(unitsOf(0.29, 2)).toBe(29n);
    expect(unitsOf(-0.29, 4)).toBe(-2900n);
    expect(unitsOf(0.29, 1)).toBeNull();
    expect(unitsOf(0.30000000000000004, 2)).toBeNull();
    // Past the fast path (units of 10^15 or more): read from the shortest form's digits.
    expect(unitsOf(9007199254740991, 18)).toBe(9007199254740991n * 10n ** 18n);
    expect(unitsOf(123456789.123456, 18)).toBe(123456789123456000000000000n);
    expect(unitsOf(1e-18, 18)).toBe(1n);
    expect(unitsOf(1.5e-18, 18)).toBeNull();
  });

  it("agrees with the shortest form on every double it is given, fast path or not", () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e15, max: 1e15, noNaN: true, noDefaultInfinity: true }),
        fc.integer({ min: 0, max: 18 }),
        (n, scale) => {
          const units = unitsOf(n, scale);
          const places = placesOf(n);
          if (places > scale) expect(units).toBeNull();
          else expect(Number(decimalText(units!, scale))).toBe(n === 0 ? 0 : n);
        },
      ),
      { numRuns: 20_000, seed: 39 },
    );
  });

  it("writes a decimal with the places of its type", () => {
    expect(decimalText(100030n, 2)).toBe("1000.30");
    expect(decimalText(-5n, 3)).toBe("-0.005");
    expect(decimalText(7n, 0)).toBe("7");
  });
});

const DECIMALS: Record<string, IrSignal> = {
  a: { type: "decimal", optional: false, scale: 2 },
  b: { type: "decimal", optional: false, scale: 2 },
  c: { type: "decimal", optional: false, scale: 2 },
  k: { type: "integer", optional: false },
};

function policy(when: IrExpr): PolicyIr {
  return {
    irVersion: 2,
    policyId: "t",
    version: "1.0.0",
    governs: { action: "a", binding: [] },
    signals: DECIMALS,
    rules: [{ id: "r", verdict: "escalate", reason: "over", when }],
    otherwise: { verdict: "approve", reason: "within" },
  };
}

const SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["a", "b", "c", "k"],
  properties: {
    a: { type: "number", format: "decimal(2)" },
    b: { type: "number", format: "decimal(2)" },
    c: { type: "number", format: "decimal(2)" },
    k: { type: "integer" },
  },
};

describe("decimal arithmetic is exact", () => {
  it("the issue's cases: 1000.10 + 0.20 is not over 1000.30, 0.29 * 100 is 29, 0.1 + 0.2 is over 0.29", () => {
    const sum = preparePolicy(policy(cmp("gt", exact("add", sig("a"), sig("b")), lit(1000.3))));
    expect(sum.evaluate({ a: 1000.1, b: 0.2, c: 0, k: 0 })).toMatchObject({ verdict: "approve" });
    expect(sum.evaluate({ a: 1000.1, b: 0.21, c: 0, k: 0 })).toMatchObject({ verdict: "escalate" });
    const product = preparePolicy(policy(cmp("ge", exact("mul", sig("a"), lit(100)), lit(29))));
    expect(product.evaluate({ a: 0.29, b: 0, c: 0, k: 0 })).toMatchObject({ verdict: "escalate" });
    expect(product.evaluate({ a: 0.28, b: 0, c: 0, k: 0 })).toMatchObject({ verdict: "approve" });
    const tiny = preparePolicy(policy(cmp("eq", exact("add", sig("a"), sig("b")), lit(0.3))));
    expect(tiny.evaluate({ a: 0.1, b: 0.2, c: 0, k: 0 })).toMatchObject({ verdict: "escalate" });
  });

  it("explains values with the places of their type", () => {
    const ir = policy(cmp("gt", exact("add", sig("a"), sig("b")), lit(1000.3)));
    const { explanation } = explain(ir, { a: 1000.1, b: 0.2, c: 0, k: 0 });
    const sum = explanation.rules[0]!.condition.operands![0]!;
    expect(sum).toMatchObject({ expr: "a + b", exact: "1000.30", value: 1000.3 });
    expect(sum.operands).toEqual([
      { expr: "a", value: 1000.1, exact: "1000.10" },
      { expr: "b", value: 0.2, exact: "0.20" },
    ]);
  });

  it("a result beyond ±(2^53 - 1) is EVAL-002, not a rounded value", () => {
    const big = preparePolicy(policy(cmp("gt", exact("mul", sig("a"), sig("b")), lit(0))));
    expect(big.evaluate({ a: 100000000, b: 100000000, c: 0, k: 0 })).toMatchObject({ fault: { code: "EVAL-002", ruleId: "r" } });
    expect(big.evaluate({ a: 10000000, b: 100000000, c: 0, k: 0 })).toMatchObject({ verdict: "escalate" });
  });

  /**
   * The property of issue 39: random decimal(2) values, sent as JSON text and read by the strict parser, decide
   * `a + b > c` and `a * k >= c` as arithmetic on exact rationals (numerator over a power of ten, in bigints) does.
   */
  it("100,000 random decimal(2) cases of a + b > c and a * k >= c decide as exact rational arithmetic", () => {
    const sum = preparePolicy(policy(cmp("gt", exact("add", sig("a"), sig("b")), sig("c"))));
    const product = preparePolicy(policy(cmp("ge", exact("mul", sig("a"), sig("k")), sig("c"))));
    const validate = createSignalValidator(SCHEMA);
    const cents = fc.bigInt({ min: -(10n ** 11n), max: 10n ** 11n });
    const text = (units: bigint): string => {
      const negative = units < 0n;
      const digits = (negative ? -units : units).toString().padStart(3, "0");
      return `${negative ? "-" : ""}${digits.slice(0, -2)}.${digits.slice(-2)}`;
    };
    // Half the cases put c within a cent of a + b or of a × k: where doubles decide wrongly.
    const cases = fc
      .tuple(
        cents,
        cents,
        cents,
        fc.integer({ min: -1000, max: 1000 }),
        fc.constantFrom("free", "sum", "product"),
        fc.bigInt({ min: -1n, max: 1n }),
      )
      .map(([a, b, c, k, near, delta]) => [a, b, near === "free" ? c : (near === "sum" ? a + b : a * BigInt(k)) + delta, k] as const)
      .filter(([, , c]) => c >= -(10n ** 13n) && c <= 10n ** 13n);
    let escalated = 0;
    fc.assert(
      fc.property(cases, ([a, b, c, k]) => {
        const signals = parseStrictJson(`{"a": ${text(a)}, "b": ${text(b)}, "c": ${text(c)}, "k": ${k}}`) as Record<string, unknown>;
        expect(validate(signals)).toEqual({ valid: true });
        const overSum = sum.evaluate(signals);
        expect(overSum).toMatchObject({ decided: true, verdict: a + b > c ? "escalate" : "approve" });
        // a × k is in cents too: compared with c in cents.
        const overProduct = product.evaluate(signals);
        expect(overProduct).toMatchObject({ decided: true, verdict: a * BigInt(k) >= c ? "escalate" : "approve" });
        if (overSum.decided && overSum.verdict === "escalate") escalated++;
      }),
      { numRuns: 100_000, seed: 2026_12_07 },
    );
    expect(escalated).toBeGreaterThan(10_000);
  });
});
