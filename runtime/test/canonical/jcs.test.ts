import canonicalize from "canonicalize";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalBytes, canonicalJson } from "../../src/canonical/jcs.js";
import { CanonicalizationError } from "../../src/errors.js";

function refusal(value: unknown): string {
  try {
    canonicalJson(value);
  } catch (error) {
    expect(error).toBeInstanceOf(CanonicalizationError);
    expect((error as CanonicalizationError).code).toBe("CANONICALIZATION_FAILED");
    return (error as Error).message;
  }
  throw new Error("expected a CanonicalizationError");
}

describe("canonicalJson: RFC 8785", () => {
  it("orders members by UTF-16 code units (RFC 8785 section 3.2.3)", () => {
    const input = {
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis",
    };
    // by code point U+1F600 would sort last; by UTF-16 code units its lead surrogate 0xD83D sorts before 0xFB33
    expect(canonicalJson(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it("sorts nested objects and keeps array order", () => {
    expect(canonicalJson({ b: [3, 1, { z: 1, a: 2 }], a: { d: null, c: true } })).toBe('{"a":{"c":true,"d":null},"b":[3,1,{"a":2,"z":1}]}');
  });

  it("serializes numbers as ECMAScript does (RFC 8785 section 3.2.2.3 and appendix B)", () => {
    const cases: Array<[number, string]> = [
      [0, "0"],
      [-0, "0"],
      [1, "1"],
      [-1.5, "-1.5"],
      [4.5, "4.5"],
      [0.002, "0.002"],
      [0.000001, "0.000001"],
      [1e-7, "1e-7"],
      [1e-27, "1e-27"],
      [5e-324, "5e-324"],
      [-5e-324, "-5e-324"],
      [1e21, "1e+21"],
      [1e23, "1e+23"],
      [1e30, "1e+30"],
      [999999999999999900000, "999999999999999900000"],
      [295147905179352830000, "295147905179352830000"],
      [9007199254740992, "9007199254740992"],
      [-9007199254740992, "-9007199254740992"],
      [333333333.3333333, "333333333.3333333"],
      [1.7976931348623157e308, "1.7976931348623157e+308"],
      [-1.7976931348623157e308, "-1.7976931348623157e+308"],
    ];
    for (const [value, text] of cases) expect(canonicalJson(value), String(value)).toBe(text);
  });

  it("reproduces the RFC 8785 section 3.2.2 example", () => {
    const input =
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
      ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}';
    expect(canonicalJson(JSON.parse(input))).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' + '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it("escapes only what RFC 8785 requires", () => {
    expect(canonicalJson("\u0000\u0001\u001f")).toBe('"\\u0000\\u0001\\u001f"');
    expect(canonicalJson("\b\t\n\f\r")).toBe('"\\b\\t\\n\\f\\r"');
    expect(canonicalJson('"\\')).toBe('"\\"\\\\"');
    expect(canonicalJson("/\u007f\u00e9\u2028\ud83d\ude00")).toBe('"/\u007f\u00e9\u2028\ud83d\ude00"');
  });

  it("encodes canonicalBytes as UTF-8", () => {
    expect(Buffer.from(canonicalBytes({ "€": "😀" })).toString("hex")).toBe("7b22e282ac223a22f09f9880227d");
  });

  it("accepts objects with a null prototype", () => {
    const o = Object.create(null) as Record<string, unknown>;
    o["b"] = 1;
    o["a"] = [o["b"]];
    expect(canonicalJson(o)).toBe('{"a":[1],"b":1}');
  });

  it("keeps a __proto__ member as data", () => {
    expect(canonicalJson(JSON.parse('{"__proto__":{"x":1},"a":0}'))).toBe('{"__proto__":{"x":1},"a":0}');
  });

  it("agrees with the canonicalize package and is idempotent on JSON data", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(text).toBe(canonicalize(value));
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
      { numRuns: 300 },
    );
  });
});

describe("canonicalJson: refusals", () => {
  it("refuses non-finite numbers, naming the path", () => {
    expect(refusal({ a: [1, 2, Number.NaN] })).toBe("value at `$.a[2]` is not finite");
    expect(refusal({ a: Infinity })).toBe("value at `$.a` is not finite");
    expect(refusal([-Infinity])).toBe("value at `$[0]` is not finite");
    expect(refusal(Number.NaN)).toBe("value at `$` is not finite");
  });

  it("refuses undefined, functions, symbols and bigints anywhere", () => {
    expect(refusal(undefined)).toBe("value at `$` is undefined");
    expect(refusal({ a: undefined })).toBe("value at `$.a` is undefined");
    expect(refusal({ a: [undefined] })).toBe("value at `$.a[0]` is undefined");
    expect(refusal({ "a b": { f: () => 1 } })).toBe('value at `$["a b"].f` is a function');
    expect(refusal({ s: Symbol("x") })).toBe("value at `$.s` is a symbol");
    expect(refusal({ n: 10n })).toBe("value at `$.n` is a bigint");
    expect(refusal({ [Symbol("k")]: 1 })).toBe("value at `$` has a symbol-keyed member");
    // toJSON is not called: it is a function member like any other
    expect(refusal({ toJSON: () => "x" })).toBe("value at `$.toJSON` is a function");
  });

  it("refuses lone surrogates in strings and member names", () => {
    expect(refusal({ s: "a\ud800" })).toBe("string at `$.s` contains a lone surrogate");
    expect(refusal(["\udc00b"])).toBe("string at `$[0]` contains a lone surrogate");
    expect(refusal("\ude00\ud83d")).toBe("string at `$` contains a lone surrogate");
    expect(refusal({ o: { "k\ud800": 1 } })).toBe('member name "k\\ud800" at `$.o` contains a lone surrogate');
    expect(canonicalJson("\ud83d\ude00")).toBe('"😀"');
  });

  it("refuses non-plain objects", () => {
    class Point {
      x = 1;
    }
    expect(refusal({ d: new Date(0) })).toBe("value at `$.d` is not a plain object (Date)");
    expect(refusal({ m: new Map() })).toBe("value at `$.m` is not a plain object (Map)");
    expect(refusal({ s: new Set([1]) })).toBe("value at `$.s` is not a plain object (Set)");
    expect(refusal([new Point()])).toBe("value at `$[0]` is not a plain object (Point)");
    expect(refusal(new Uint8Array(2))).toBe("value at `$` is not a plain object (Uint8Array)");
    expect(refusal({ b: Object("boxed") as unknown })).toBe("value at `$.b` is not a plain object (String)");
    expect(refusal({ r: /x/ })).toBe("value at `$.r` is not a plain object (RegExp)");
  });

  it("refuses sparse arrays and circular references", () => {
    // eslint-disable-next-line no-sparse-arrays
    expect(refusal([1, , 3])).toBe("value at `$[1]` is missing (sparse array)");
    const loop: Record<string, unknown> = { a: {} };
    (loop["a"] as Record<string, unknown>)["back"] = loop;
    expect(refusal(loop)).toBe("value at `$.a.back` is a circular reference");
  });

  it("accepts a shared (non-circular) reference twice", () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });
});

describe("agrees with the canonicalize package (the oracle) on arbitrary JSON", () => {
  it("gives the same text for 20,000 generated values, keys with any Unicode included", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6, stringUnit: "grapheme" }), (value) => {
        expect(canonicalJson(value)).toBe(canonicalize(value));
      }),
      { numRuns: 20_000, seed: 20261122 },
    );
  });

  it("gives the same text for numbers across the whole double range", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        expect(canonicalJson({ n, list: [n, -n] })).toBe(canonicalize({ n, list: [n, -n] }));
      }),
      { numRuns: 20_000, seed: 20261123 },
    );
  });
});
