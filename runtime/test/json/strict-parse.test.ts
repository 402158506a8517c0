import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StrictJsonError } from "../../src/errors.js";
import { parseStrictJson, type StrictParseOptions } from "../../src/json/strict-parse.js";

/** The StrictJsonError that `text` is refused with; fails the test if it is accepted or fails otherwise. */
function refusal(text: string, options?: StrictParseOptions): StrictJsonError {
  try {
    parseStrictJson(text, options);
  } catch (error) {
    if (error instanceof StrictJsonError) return error;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(text)}`);
}

/** Whether a JSON.parse result holds a number this parser refuses by design (see the source header). */
function hasUnsafeNumber(value: unknown): boolean {
  if (typeof value === "number") return Math.abs(value) > Number.MAX_SAFE_INTEGER;
  if (typeof value === "object" && value !== null) return Object.values(value).some(hasUnsafeNumber);
  return false;
}

/** A JSON.parse result with `f` applied to each number, keeping `__proto__` keys as own properties. */
function mapNumbers(value: unknown, f: (n: number) => number): unknown {
  if (typeof value === "number") return f(value);
  if (Array.isArray(value)) return value.map((item) => mapNumbers(item, f));
  if (typeof value === "object" && value !== null) {
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const mapped = mapNumbers(item, f);
      Object.defineProperty(result, key, { value: mapped, writable: true, enumerable: true, configurable: true });
    }
    return result;
  }
  return value;
}

const intoSafeRange = (n: number): number => n % Number.MAX_SAFE_INTEGER;
const withoutNegativeZero = (n: number): number => n + 0; // -0 + 0 is +0

describe("parseStrictJson accepts RFC 8259 JSON", () => {
  const valid = [
    "null",
    "true",
    "false",
    "0",
    "-1",
    "1.5",
    "-12.25e-3",
    "1E2",
    "1e+2",
    "0.1",
    "5e-324",
    "9007199254740991",
    "-9007199254740991",
    "9007199254740991.0",
    "123456789.123456789",
    '""',
    '"plain text"',
    String.raw`"\" \\ \/ \b \f \n \r \t"`,
    String.raw`"\u0041\u00e9\u20AC\uffff"`,
    String.raw`"\ud83d\ude00 and \uD83D\uDE00"`,
    '"😀 café 日本"',
    '"\u2028\u2029\u007f"',
    "[]",
    "{}",
    "[1, [2, [3, []]], {}]",
    '{"a": {"b": {"c": [null, true, "x"]}}}',
    '{"toString": 1, "constructor": 2, "hasOwnProperty": 3, "valueOf": {}}',
    '{"2": "b", "1": "a", "z": 0}',
    ' \t\r\n{ "a" : [ 1 , 2 ] } \r\n\t ',
    '{"":""}',
    String.raw`{"a": 1, "b": 1, "\u0062b": 1}`,
  ];

  it.each(valid)("%s", (text) => {
    expect(parseStrictJson(text)).toStrictEqual(JSON.parse(text));
  });

  it.each(["-0", "-0.0", "-0e5", "-0.000E-3"])("returns %s as 0, the value RFC 8785 signs", (text) => {
    expect(Object.is(parseStrictJson(text), 0)).toBe(true);
    expect(Object.is((parseStrictJson(`[${text}]`) as number[])[0], 0)).toBe(true);
  });

  it("keeps a `__proto__` key as an own property of an ordinary object", () => {
    const result = parseStrictJson('{"a": 1, "__proto__": {"polluted": true}, "b": {"__proto__": null}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.keys(result)).toEqual(["a", "__proto__", "b"]);
    expect(Object.getOwnPropertyDescriptor(result, "__proto__")).toEqual({
      value: { polluted: true },
      writable: true,
      enumerable: true,
      configurable: true,
    });
    expect("polluted" in result).toBe(false);
    const inner = result["b"] as Record<string, unknown>;
    expect(Object.getPrototypeOf(inner)).toBe(Object.prototype);
    expect(Object.hasOwn(inner, "__proto__")).toBe(true);
    expect(result).toStrictEqual(JSON.parse('{"a": 1, "__proto__": {"polluted": true}, "b": {"__proto__": null}}'));
  });

  it("accepts nesting up to maxDepth", () => {
    const nested = (depth: number): string => "[".repeat(depth) + "]".repeat(depth);
    expect(parseStrictJson(nested(64))).toStrictEqual(JSON.parse(nested(64)));
    expect(parseStrictJson(nested(3), { maxDepth: 3 })).toStrictEqual([[[]]]);
    expect(parseStrictJson('"scalar"', { maxDepth: 0 })).toBe("scalar");
  });
});

describe("parseStrictJson refuses", () => {
  const refusals: Array<{ name: string; text: string; message: string; line: number; column: number }> = [
    // Duplicate keys, which JSON.parse resolves silently by keeping the last.
    { name: "a duplicate key", text: '{"amount": 1, "amount": 2}', message: "duplicate key `amount`", line: 1, column: 15 },
    { name: "a key duplicated by an escape", text: String.raw`{"a":1,"\u0061":2}`, message: "duplicate key `a`", line: 1, column: 8 },
    {
      name: "a key duplicated by a surrogate pair escape",
      text: String.raw`{"😀":1,"\ud83d\ude00":2}`,
      message: "duplicate key `😀`",
      line: 1,
      column: 9,
    },
    { name: "a duplicate `__proto__`", text: '{"__proto__":1,"__proto__":2}', message: "duplicate key `__proto__`", line: 1, column: 16 },
    {
      name: "a duplicate key in a nested object",
      text: '{\n  "x": {"k": 1,\n    "k": 2}\n}',
      message: "duplicate key `k`",
      line: 3,
      column: 5,
    },
    {
      name: "a duplicate key with input to quote",
      text: '{"a`b\\n":1,"a`b\\n":2}',
      message: "duplicate key `a\\u0060b\\u000a`",
      line: 1,
      column: 12,
    },
    {
      name: "a long duplicate key",
      text: `{"${"k".repeat(50)}":1,"${"k".repeat(50)}":2}`,
      message: `duplicate key \`${"k".repeat(40)}...\``,
      line: 1,
      column: 57,
    },

    // Lone surrogates, escaped or raw; a string that holds one has no UTF-8 encoding.
    {
      name: "an escaped lone high surrogate",
      text: String.raw`"\ud800"`,
      message: "lone surrogate `\\ud800` in string",
      line: 1,
      column: 2,
    },
    {
      name: "an escaped lone low surrogate",
      text: String.raw`"x\udc00"`,
      message: "lone surrogate `\\udc00` in string",
      line: 1,
      column: 3,
    },
    {
      name: "a high surrogate escape before a non-surrogate escape",
      text: String.raw`"\ud800\u0041"`,
      message: "lone surrogate `\\ud800` in string",
      line: 1,
      column: 2,
    },
    {
      name: "two high surrogate escapes",
      text: String.raw`"\ud800\ud800"`,
      message: "lone surrogate `\\ud800` in string",
      line: 1,
      column: 2,
    },
    {
      name: "surrogate escapes in the wrong order",
      text: String.raw`"\ude00\ud83d"`,
      message: "lone surrogate `\\ude00` in string",
      line: 1,
      column: 2,
    },
    {
      name: "a high surrogate escape at the end of input",
      text: String.raw`"\ud83d`,
      message: "lone surrogate `\\ud83d` in string",
      line: 1,
      column: 2,
    },
    { name: "a raw lone high surrogate", text: '"a\ud800b"', message: "lone surrogate `\\ud800` in string", line: 1, column: 3 },
    { name: "a raw lone low surrogate", text: '"\udc00"', message: "lone surrogate `\\udc00` in string", line: 1, column: 2 },
    {
      name: "a raw high surrogate at the end of input",
      text: '"\ud83d',
      message: "lone surrogate `\\ud83d` in string",
      line: 1,
      column: 2,
    },
    {
      name: "an escaped high half with a raw low half",
      text: '"\\ud83d\ude00"',
      message: "lone surrogate `\\ud83d` in string",
      line: 1,
      column: 2,
    },
    {
      name: "a raw high half with an escaped low half",
      text: '"\ud83d\\ude00"',
      message: "lone surrogate `\\ud83d` in string",
      line: 1,
      column: 2,
    },

    // Numbers that would not survive as written.
    { name: "a number that overflows", text: "[1, 1e400]", message: "unsafe number `1e400` overflows to infinity", line: 1, column: 5 },
    {
      name: "a negative number that overflows",
      text: "-1e400",
      message: "unsafe number `-1e400` overflows to infinity",
      line: 1,
      column: 1,
    },
    {
      name: "an unsafe integer",
      text: '{"id": 9007199254740993}',
      message: "unsafe number `9007199254740993` exceeds the safe magnitude 2^53 - 1",
      line: 1,
      column: 8,
    },
    {
      name: "2^53",
      text: "9007199254740992",
      message: "unsafe number `9007199254740992` exceeds the safe magnitude 2^53 - 1",
      line: 1,
      column: 1,
    },
    {
      name: "-(2^53)",
      text: "-9007199254740992",
      message: "unsafe number `-9007199254740992` exceeds the safe magnitude 2^53 - 1",
      line: 1,
      column: 1,
    },
    {
      name: "a large number written with an exponent",
      text: "1e300",
      message: "unsafe number `1e300` exceeds the safe magnitude 2^53 - 1",
      line: 1,
      column: 1,
    },
    {
      name: "a fraction that rounds past the safe range",
      text: "9007199254740991.5",
      message: "unsafe number `9007199254740991.5` exceeds the safe magnitude 2^53 - 1",
      line: 1,
      column: 1,
    },
    { name: "a number that underflows", text: "1e-400", message: "unsafe number `1e-400` underflows to zero", line: 1, column: 1 },
    {
      name: "a negative number that underflows",
      text: "-0.0001e-400",
      message: "unsafe number `-0.0001e-400` underflows to zero",
      line: 1,
      column: 1,
    },
    {
      name: "a long unsafe number",
      text: `1${"0".repeat(60)}`,
      message: `unsafe number \`1${"0".repeat(39)}...\` exceeds the safe magnitude 2^53 - 1`,
      line: 1,
      column: 1,
    },

    // Syntax outside RFC 8259.
    { name: "empty input", text: "", message: "empty input", line: 1, column: 1 },
    { name: "whitespace only", text: " \n ", message: "empty input", line: 2, column: 2 },
    { name: "a byte order mark", text: "\ufeff{}", message: "byte order mark is not allowed", line: 1, column: 1 },
    {
      name: "a byte order mark after whitespace",
      text: " \ufeff{}",
      message: "unexpected character `\\ufeff`, expected a value",
      line: 1,
      column: 2,
    },
    { name: "a no-break space", text: "\u00a01", message: "unexpected character `\\u00a0`, expected a value", line: 1, column: 1 },
    { name: "a vertical tab", text: "\v1", message: "unexpected character `\\u000b`, expected a value", line: 1, column: 1 },
    { name: "a trailing comma in an array", text: "[1, 2,]", message: "trailing comma in array", line: 1, column: 6 },
    { name: "a trailing comma in an object", text: '{"a": 1,\n}', message: "trailing comma in object", line: 1, column: 8 },
    { name: "a line comment", text: "// note\n1", message: "unexpected character `/`, expected a value", line: 1, column: 1 },
    { name: "a block comment", text: '{"a": 1 /* note */}', message: "unexpected character `/`, expected `,` or `}`", line: 1, column: 9 },
    { name: "a single-quoted string", text: "'a'", message: "unexpected character `'`, expected a value", line: 1, column: 1 },
    { name: "a single-quoted key", text: "{'a': 1}", message: "unexpected character `'`, expected a string key", line: 1, column: 2 },
    { name: "an unquoted key", text: "{a: 1}", message: "unexpected character `a`, expected a string key", line: 1, column: 2 },
    { name: "a missing colon", text: '{"a" 1}', message: "unexpected character `1`, expected `:` after the key", line: 1, column: 6 },
    { name: "a missing comma", text: "[1\r\n 2]", message: "unexpected character `2`, expected `,` or `]`", line: 2, column: 2 },
    { name: "a leading zero", text: "01", message: "leading zero in number `01`", line: 1, column: 1 },
    { name: "a negative leading zero", text: "[-007]", message: "leading zero in number `-007`", line: 1, column: 2 },
    { name: "a plus sign", text: "+1", message: "unexpected character `+`, expected a value", line: 1, column: 1 },
    { name: "a bare fraction", text: ".5", message: "unexpected character `.`, expected a value", line: 1, column: 1 },
    { name: "a trailing decimal point", text: "1.", message: "expected a digit after the decimal point", line: 1, column: 3 },
    { name: "a decimal point before an exponent", text: "1.e5", message: "expected a digit after the decimal point", line: 1, column: 3 },
    { name: "an empty exponent", text: "1e+", message: "expected a digit in the exponent", line: 1, column: 4 },
    { name: "a lone minus", text: "-", message: "expected a digit after `-`", line: 1, column: 2 },
    { name: "a hex number", text: "0x10", message: "unexpected character `x` after the value", line: 1, column: 2 },
    { name: "NaN", text: "NaN", message: "invalid literal `NaN`", line: 1, column: 1 },
    { name: "Infinity", text: "[Infinity]", message: "invalid literal `Infinity`", line: 1, column: 2 },
    { name: "-Infinity", text: "-Infinity", message: "expected a digit after `-`", line: 1, column: 2 },
    { name: "a truncated literal", text: "nul", message: "invalid literal `nul`", line: 1, column: 1 },
    { name: "a literal in the wrong case", text: "True", message: "invalid literal `True`", line: 1, column: 1 },
    { name: "a literal with trailing letters", text: "nullx", message: "invalid literal `nullx`", line: 1, column: 1 },
    { name: "a raw tab in a string", text: '"a\tb"', message: "unescaped control character `\\u0009` in string", line: 1, column: 3 },
    {
      name: "a raw line feed in a string",
      text: '[\n"a\nb"]',
      message: "unescaped control character `\\u000a` in string",
      line: 2,
      column: 3,
    },
    { name: "a raw NUL in a string", text: '"\u0000"', message: "unescaped control character `\\u0000` in string", line: 1, column: 2 },
    {
      name: "a raw unit separator in a string",
      text: '"\u001f"',
      message: "unescaped control character `\\u001f` in string",
      line: 1,
      column: 2,
    },
    { name: "an invalid escape", text: String.raw`"\x41"`, message: "invalid escape `\\x` in string", line: 1, column: 2 },
    { name: "an escaped single quote", text: String.raw`"\'"`, message: "invalid escape `\\'` in string", line: 1, column: 2 },
    { name: "an upper-case unicode escape", text: String.raw`"\U0041"`, message: "invalid escape `\\U` in string", line: 1, column: 2 },
    {
      name: "a unicode escape with a non-hex digit",
      text: String.raw`"\u12G4"`,
      message: "invalid unicode escape `\\u12G4`",
      line: 1,
      column: 2,
    },
    { name: "a short unicode escape", text: String.raw`"\u12"`, message: 'invalid unicode escape `\\u12"`', line: 1, column: 2 },
    { name: "an unterminated string", text: '{"a": "b', message: "unterminated string", line: 1, column: 7 },
    { name: "a backslash at the end of input", text: '"a\\', message: "unterminated string", line: 1, column: 1 },
    { name: "an unclosed array", text: "[1, 2", message: "unexpected end of input, expected `,` or `]`", line: 1, column: 6 },
    { name: "an unclosed object", text: '{"a": 1', message: "unexpected end of input, expected `,` or `}`", line: 1, column: 8 },
    { name: "a missing value", text: '{"a": }', message: "unexpected character `}`, expected a value", line: 1, column: 7 },
    { name: "trailing data", text: "{} {}", message: "unexpected character `{` after the value", line: 1, column: 4 },
    { name: "two strings", text: '"a""b"', message: 'unexpected character `"` after the value', line: 1, column: 4 },
    {
      name: "a non-ASCII character outside a string",
      text: "[😀]",
      message: "unexpected character `😀`, expected a value",
      line: 1,
      column: 2,
    },
    {
      name: "a raw lone surrogate outside a string",
      text: "\udc00",
      message: "unexpected character `\\udc00`, expected a value",
      line: 1,
      column: 1,
    },
  ];

  it.each(refusals)("$name", ({ text, message, line, column }) => {
    const error = refusal(text);
    expect(error.code).toBe("JSON_INVALID");
    expect(error.message).toBe(`${message} at line ${line} column ${column}`);
    expect([error.line, error.column]).toEqual([line, column]);
  });

  it("nesting deeper than maxDepth, at the bracket that is one level too deep", () => {
    expect(refusal("[".repeat(65) + "]".repeat(65)).message).toBe("nesting deeper than the maximum depth of 64 at line 1 column 65");
    expect(refusal('{"a": [{"b": 1}]}', { maxDepth: 2 }).message).toBe("nesting deeper than the maximum depth of 2 at line 1 column 8");
    expect(refusal("[]", { maxDepth: 0 }).message).toBe("nesting deeper than the maximum depth of 0 at line 1 column 1");
  });

  it("very deep input with a StrictJsonError, not a stack overflow", () => {
    expect(refusal("[".repeat(200_000), { maxDepth: 1000 }).column).toBe(1001);
  });

  it.each([-1, 1.5, Number.NaN, 1001])("maxDepth %s as a programming error", (maxDepth) => {
    expect(() => parseStrictJson("1", { maxDepth })).toThrow(RangeError);
  });
});

describe("error positions", () => {
  it.each([
    { name: "LF", text: '[\n\n  "\\x"]', line: 3, column: 4 },
    { name: "CR LF as one line break", text: '[\r\n\r\n  "\\x"]', line: 3, column: 4 },
    { name: "a lone CR", text: '[\r\r  "\\x"]', line: 3, column: 4 },
    { name: "columns in UTF-16 code units", text: '["😀", "é", "\\x"]', line: 1, column: 14 },
  ])("count $name", ({ text, line, column }) => {
    expect(refusal(text)).toMatchObject({ line, column });
  });
});

describe("properties", () => {
  it("agrees with JSON.parse on serialized JSON values, refusing only unsafe numbers", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, 2, "\t"), (value, indent) => {
        const text = JSON.stringify(value, null, indent);
        const expected: unknown = JSON.parse(text);
        if (hasUnsafeNumber(expected)) {
          expect(refusal(text).message).toMatch(/^unsafe number `/);
        } else {
          expect(parseStrictJson(text)).toStrictEqual(expected);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("agrees with JSON.parse on JSON values with safe numbers and any Unicode strings", () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ stringUnit: "binary" }).map((value) => mapNumbers(value, intoSafeRange)),
        (value) => {
          const text = JSON.stringify(value);
          expect(parseStrictJson(text)).toStrictEqual(JSON.parse(text));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("on any string, throws nothing but a well-formed StrictJsonError and accepts only what JSON.parse accepts", () => {
    // Characters that JSON syntax, and the refusals above, turn on.
    const alphabet = [..."{}[],:\"\\/ \t\n\r0123456789-+.eEtrufalsnxu'`", "\ud800", "\udc00", "\u0000", "\u001f", "\u00a0", "\ufeff", "😀"];
    const unit = fc.oneof(
      fc.constantFrom(...alphabet),
      fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
    );
    const mutatedJson = fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.nat(), fc.nat({ max: 2 }), unit).map(([value, at, edit, char]) => {
      const text = JSON.stringify(value);
      const i = at % (text.length + 1);
      // edit 0 inserts `char` at i, 1 deletes the character at i, 2 replaces it.
      return text.slice(0, i) + (edit === 1 ? "" : char) + text.slice(edit === 0 ? i : i + 1);
    });
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit, maxLength: 30 }), mutatedJson), (text) => {
        let result: unknown;
        try {
          result = parseStrictJson(text);
        } catch (error) {
          if (!(error instanceof StrictJsonError)) throw error;
          if (!(Number.isInteger(error.line) && error.line >= 1 && Number.isInteger(error.column) && error.column >= 1)) {
            throw new Error(`bad position ${error.line}:${error.column}`, { cause: error });
          }
          if (/[\p{C}\p{Zl}\p{Zp}]/u.test(error.message)) throw new Error(`unquoted input in ${error.message}`, { cause: error });
          return;
        }
        // JSON.parse must accept it too (it throws otherwise) and agree up to the sign of zero.
        expect(result).toStrictEqual(mapNumbers(JSON.parse(text), withoutNegativeZero));
      }),
      { numRuns: 20_000 },
    );
  });
});
