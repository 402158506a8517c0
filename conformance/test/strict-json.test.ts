/**
 * The suite's strict JSON parser: what `JSON.parse` would silently normalize (duplicate keys, lone surrogates,
 * overflowing or unsafe numbers) is an error naming where it is; everything RFC 8259 allows parses to the same value
 * `JSON.parse` gives.
 */
import { describe, expect, it } from "vitest";
import { decodeUtf8, parseStrictJson, StrictJsonError } from "../src/strict-json.js";

function thrownBy(run: () => unknown): { name: string; message: string } | null {
  try {
    run();
    return null;
  } catch (e) {
    return e instanceof StrictJsonError ? { name: e.name, message: e.message } : { name: "not a StrictJsonError", message: String(e) };
  }
}

describe("parseStrictJson refuses what JSON.parse would normalize", () => {
  it.each([
    ["a duplicate key", '{"a":1,"a":2}', "duplicate key `a` at line 1 column 8"],
    ["a duplicate nested key", '{"x":{"b":1,"b":2}}', "duplicate key `b` at line 1 column 13"],
    ["a lone high surrogate", '{"a":"\\ud800"}', "lone surrogate `\\ud800` in string at line 1 column 6"],
    ["surrogates in the wrong order", '{"a":"\\udc00\\ud800"}', "lone surrogate `\\udc00` in string at line 1 column 6"],
    ["a lone surrogate in a key", '{"\\ud800":1}', "lone surrogate `\\ud800` in string at line 1 column 2"],
    ["a raw lone surrogate", `{"a":"${String.fromCharCode(0xd800)}"}`, "lone surrogate `\\ud800` in string at line 1 column 6"],
    ["a number that overflows", '{"a":1e400}', "unsafe number `1e400` overflows to infinity at line 1 column 6"],
    [
      "an unsafe integer",
      '{"a":12345678901234567890}',
      "unsafe number `12345678901234567890` exceeds the safe magnitude 2^53 - 1 at line 1 column 6",
    ],
    [
      "a large number written with an exponent",
      "[1.5e300]",
      "unsafe number `1.5e300` exceeds the safe magnitude 2^53 - 1 at line 1 column 2",
    ],
    ["a number that underflows to zero", "[1e-400]", "unsafe number `1e-400` underflows to zero at line 1 column 2"],
    [
      "an unsafe negative integer",
      "[-9007199254740992]",
      "unsafe number `-9007199254740992` exceeds the safe magnitude 2^53 - 1 at line 1 column 2",
    ],
    ["NaN", '{"a":NaN}', "invalid literal `NaN` at line 1 column 6"],
    ["Infinity", "[Infinity]", "invalid literal `Infinity` at line 1 column 2"],
    ["a byte order mark", '\uFEFF{"a":1}', "byte order mark is not allowed at line 1 column 1"],
    ["an empty text", "", "empty input at line 1 column 1"],
    ["blanks only", " \n ", "empty input at line 2 column 2"],
    ["a trailing comma in an object", '{"a":1,}', "trailing comma in object at line 1 column 8"],
    ["a trailing comma in an array", "[1,]", "trailing comma in array at line 1 column 4"],
    ["single quotes", "{'a':1}", "unexpected character `'`, expected a string key at line 1 column 2"],
    ["text after the value", '{"a":1} x', "unexpected character `x` after the value at line 1 column 9"],
    ["a leading zero", "[01]", "unexpected character `1` in array at line 1 column 3"],
    ["a control character in a string", '["a\nb"]', "control character in string at line 1 column 4"],
    ["an invalid escape", '["\\x"]', "invalid escape in string at line 1 column 3"],
    ["a short unicode escape", '["\\u12"]', "invalid \\u escape at line 1 column 3"],
    ["an unterminated string", '["abc', "unterminated string at line 1 column 2"],
    ["an unterminated object", '{"a":1', "unexpected end of input in object at line 1 column 7"],
  ])("%s", (_name, text, message) => {
    expect(thrownBy(() => parseStrictJson(text))).toEqual({ name: "StrictJsonError", message });
  });

  it("refuses nesting deeper than 512", () => {
    expect(() => parseStrictJson(`${"[".repeat(600)}${"]".repeat(600)}`)).toThrow(/nesting deeper than 512/);
    expect(parseStrictJson(`${"[".repeat(500)}${"]".repeat(500)}`)).toBeInstanceOf(Array);
  });
});

describe("parseStrictJson accepts RFC 8259 JSON as JSON.parse reads it", () => {
  it.each([
    '{"a":1,"b":[true,false,null],"c":{"d":"e"}}',
    ' \t\r\n{ "a" : -0.5e-3 , "b" : [ ] , "c" : { } } \n',
    '["\\u00e9\\ud83d\\ude00\\"\\\\\\/\\b\\f\\n\\r\\t", "é😀"]',
    "9007199254740991",
    "-9007199254740991",
    "[0e5, 0.000, -0.0e-10]",
    '"a string"',
    "[0, -0, 0.1, 1E2, 1e-7]",
  ])("%s", (text) => {
    expect(parseStrictJson(text)).toEqual(JSON.parse(text));
  });

  it("keeps a member named __proto__ as data", () => {
    const value = parseStrictJson('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });
});

describe("decodeUtf8", () => {
  it("decodes UTF-8 and keeps a byte order mark for the parser to refuse", () => {
    expect(decodeUtf8(Buffer.from("é😀"))).toBe("é😀");
    expect(decodeUtf8(Buffer.from("\uFEFF{}"))).toBe("\uFEFF{}");
  });

  it.each([
    ["a lone surrogate encoded as UTF-8", [0xed, 0xa0, 0x80]],
    ["a byte that is never UTF-8", [0xff]],
    ["a truncated sequence", [0xe2, 0x82]],
  ])("refuses %s", (_name, bytes) => {
    expect(() => decodeUtf8(Uint8Array.from(bytes))).toThrow("body is not valid UTF-8");
  });
});
