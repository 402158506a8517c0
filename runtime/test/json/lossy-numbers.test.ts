/**
 * Numbers a double does not carry: `carriesExactly` against exact arithmetic on the texts, the strict parser's record
 * of them (the fast path leaves them to it), and signal validation's refusal in the terms of each signal's type.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { carriesExactly, createSignalValidator, lossyNumbersOf, parseStrictJson } from "../../src/index.js";
import { parseCommonJson } from "../../src/json/common-json.js";

/** The exact value of a JSON number's text as a fraction `numerator / 10^shift`, in bigints. */
function rational(text: string): { numerator: bigint; shift: number } {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text)!;
  const digits = `${match[2]!}${match[3] ?? ""}`;
  const exponent = Number(match[4] ?? 0) - (match[3]?.length ?? 0);
  const magnitude = BigInt(digits) * (exponent > 0 ? 10n ** BigInt(exponent) : 1n);
  return { numerator: match[1] ? -magnitude : magnitude, shift: Math.max(0, -exponent) };
}

function sameValue(a: string, b: string): boolean {
  const x = rational(a);
  const y = rational(b);
  const shift = Math.max(x.shift, y.shift);
  return x.numerator * 10n ** BigInt(shift - x.shift) === y.numerator * 10n ** BigInt(shift - y.shift);
}

describe("carriesExactly: a number's text writes the decimal its double's shortest form writes", () => {
  it.each([
    ["1000.10", true],
    ["0.1", true],
    ["25000.000000000001", false],
    ["3.0000000000000001", false],
    ["0.30000000000000004", true],
    ["1.00000000000000000000", true],
    ["9007199254740991", true],
    ["123456789012345.67", true],
    ["123456789012345.678", false],
    ["-0.000000000000000000001", true],
    ["1.2345678901234567e-5", false],
    ["1.2345678901234568e-5", true],
  ])("%s: %s", (text, exact) => {
    expect(carriesExactly(text, Number(text))).toBe(exact);
  });

  it("agrees with exact arithmetic on random long texts", () => {
    const text = fc
      .tuple(
        fc.boolean(),
        fc.stringMatching(/^[1-9]\d{0,11}$/),
        fc.stringMatching(/^\d{1,14}$/),
        fc.option(fc.integer({ min: -20, max: 3 })),
      )
      .map(
        ([negative, whole, fraction, exponent]) => `${negative ? "-" : ""}${whole}.${fraction}${exponent === null ? "" : `e${exponent}`}`,
      );
    let lossy = 0;
    fc.assert(
      fc.property(text, (t) => {
        const value = Number(t);
        const expected = sameValue(t, String(value));
        expect(carriesExactly(t, value)).toBe(expected);
        if (!expected) lossy++;
      }),
      { numRuns: 20_000, seed: 39 },
    );
    expect(lossy).toBeGreaterThan(1000);
  });

  it("every double's shortest form carries itself", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        expect(carriesExactly(String(d), d)).toBe(true);
      }),
      { numRuns: 10_000, seed: 39 },
    );
  });
});

describe("the strict parser records the numbers it cannot carry, by container and key", () => {
  it("records a lossy member and a lossy item, and nothing for exact ones", () => {
    const text = '{"amount": 25000.000000000001, "fee": 0.10, "list": [1, 3.0000000000000001]}';
    const doc = parseStrictJson(text) as { amount: number; fee: number; list: number[] };
    expect(doc.amount).toBe(25000);
    expect(lossyNumbersOf(doc)).toEqual(new Map([["amount", "25000.000000000001"]]));
    expect(lossyNumbersOf(doc.list)).toEqual(new Map([["1", "3.0000000000000001"]]));
    expect(lossyNumbersOf(parseStrictJson('{"fee": 0.10}') as object)).toBeUndefined();
  });

  it("the fast path leaves such a text to the strict parser", () => {
    expect(parseCommonJson('{"amount": 25000.000000000001}', 64)).toBeNull();
    expect(parseCommonJson('{"amount": 25000.01}', 64)).toEqual({ value: { amount: 25000.01 } });
  });
});

describe("signal validation refuses a number the client did not mean as read, in its signal's terms", () => {
  const validate = createSignalValidator({
    type: "object",
    additionalProperties: false,
    properties: {
      amount: { type: "number", format: "decimal(2)" },
      total: { type: "number" },
      count: { type: "integer" },
      fee: { type: "number", format: "decimal(2)" },
    },
  });
  const check = (text: string) => validate(parseStrictJson(text));

  it("a decimal with more places than its S: VAL-012 naming the places", () => {
    expect(check('{"amount": 25000.000000000001}')).toEqual({
      valid: false,
      errors: [
        {
          code: "VAL-012",
          signal: "amount",
          message: "signal `amount` must have at most 2 decimal places (decimal(2)), got `25000.000000000001`",
        },
      ],
    });
    expect(check('{"amount": 1000.123}')).toMatchObject({ valid: false, errors: [{ code: "VAL-012", signal: "amount" }] });
    expect(check('{"amount": 1000.10, "fee": 1.5e1}')).toEqual({ valid: true });
  });

  it("a number: VAL-007, saying what it would have been read as", () => {
    expect(check('{"total": 25000.000000000001}')).toMatchObject({
      valid: false,
      errors: [{ code: "VAL-007", signal: "total", message: expect.stringContaining("it would be read as 25000") }],
    });
  });

  it("an integer: VAL-008", () => {
    expect(check('{"count": 3.0000000000000001}')).toMatchObject({ valid: false, errors: [{ code: "VAL-008", signal: "count" }] });
  });

  it("values made in JavaScript are read as they are: a double is its shortest form", () => {
    expect(validate({ amount: 1000.1, total: 0.1 + 0.2 })).toEqual({ valid: true });
    expect(validate({ amount: 0.1 + 0.2 })).toMatchObject({ valid: false, errors: [{ code: "VAL-012", signal: "amount" }] });
  });
});
