/**
 * INVARIANT (the fast path is the strict parser's answer): whenever `parseCommonJson` answers a value, the strict
 * parser alone (`parseByGrammar`) answers an equal one; and it takes the fast path on the plain JSON requests are made of.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseCommonJson } from "../../src/json/common-json.js";
import { parseByGrammar } from "../../src/json/strict-parse.js";

const DEPTH = 64;

/** Agrees with the strict parser: the same value (`-0` and `0` told apart), or the strict parser decides. */
function agrees(text: string, maxDepth = DEPTH): void {
  const fast = parseCommonJson(text, maxDepth);
  if (fast === null) return;
  expect(fast.value).toStrictEqual(parseByGrammar(text, maxDepth));
}

/** Texts made to be refused or rewritten by the strict parser, in places JSON.parse accepts them. */
const troublesome = fc.constantFrom(
  '{"a":1,"a":2}',
  '{"a":{"b":1},"c":{"b":2,"b":3}}',
  '[{"__proto__":1,"__proto__":2}]',
  "-0",
  "[-0.0]",
  "0.0",
  "0e5",
  "1e-400",
  "0.00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001",
  "1e400",
  "-1e400",
  "9007199254740992",
  "9007199254740993",
  "1e300",
  '"\\ud800"',
  '"\\udc00"',
  '"\\ud83d\\ude00"',
  '{"\\ud800":1}',
  "\ufeff{}",
);

/** Texts with what the checks look for inside strings only: the fast path takes them. */
const harmless = fc.constantFrom('{"a:b":1}', '{"a":"x:y","b":"\\":"}', '["-1e5","1e400","-0"]', '{"\\u0041":"\\ud7ff"}');

/** A JSON text with one of `troublesome`'s pieces spliced into a value position. */
const spliced = fc.tuple(fc.json({ maxDepth: 3 }), troublesome).map(([json, piece]) => `{"x":${json},"y":${piece}}`);

describe("parseCommonJson", () => {
  it("answers what the strict parser answers on arbitrary JSON texts", () => {
    fc.assert(
      fc.property(fc.json({ maxDepth: 6 }), (text) => agrees(text)),
      { numRuns: 2000 },
    );
  });

  it("answers what the strict parser answers on JSON with any Unicode strings and numbers", () => {
    const value = fc.jsonValue({ maxDepth: 4 });
    const unicode = fc.dictionary(fc.string({ unit: "binary" }), fc.oneof(fc.string({ unit: "binary" }), fc.double(), value), {
      maxKeys: 6,
    });
    fc.assert(
      fc.property(unicode, (v) => agrees(JSON.stringify(v))),
      { numRuns: 2000 },
    );
  });

  it("leaves to the strict parser every duplicate key, unsafe or rewritten number and escaped surrogate", () => {
    fc.assert(
      fc.property(spliced, (text) => {
        agrees(text);
        expect(parseCommonJson(text, DEPTH)).toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  it("takes the fast path when such things are inside strings only", () => {
    fc.assert(
      fc.property(fc.tuple(fc.json({ maxDepth: 3 }), harmless), ([json, piece]) => {
        fc.pre(parseCommonJson(json, DEPTH) !== null);
        const text = `{"x":${json},"y":${piece}}`;
        agrees(text);
        expect(parseCommonJson(text, DEPTH)).not.toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  it("answers what the strict parser answers on texts with duplicates made from any object", () => {
    const object = fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1, maxKeys: 5 });
    fc.assert(
      fc.property(object, fc.nat(), (o, pick) => {
        const keys = Object.keys(o);
        const key = keys[pick % keys.length]!;
        const text = `${JSON.stringify(o).slice(0, -1)},${JSON.stringify(key)}:null}`;
        expect(parseCommonJson(text, DEPTH)).toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  it("leaves nesting deeper than maxDepth to the strict parser, and takes the fast path up to it", () => {
    for (const depth of [0, 1, 2, 5, 64]) {
      const at = "[".repeat(depth) + "]".repeat(depth);
      const over = "[".repeat(depth + 1) + "]".repeat(depth + 1);
      if (depth > 0) expect(parseCommonJson(at, depth)).not.toBeNull();
      expect(parseCommonJson(over, depth)).toBeNull();
      agrees(at, depth);
    }
  });

  it("handles long strings of escapes without overflowing, and leaves texts over a MiB to the strict parser", () => {
    const escapes = (n: number) => JSON.stringify({ s: '\\"'.repeat(n) });
    expect(parseCommonJson(escapes(200_000), DEPTH)).toEqual({ value: JSON.parse(escapes(200_000)) });
    expect(parseCommonJson(escapes(400_000), DEPTH)).toBeNull();
  });

  it("takes the fast path on a request body of plain JSON", () => {
    const body =
      '{"executionId":"e-1","policyId":"payments.transfer","policyVersion":"1.2.0","verifiedSignals":{"amount":250.5,"currency":"EUR","risk":0,"tags":["a:b","c\\"d"],"nested":{"ok":true,"none":null}}}';
    expect(parseCommonJson(body, DEPTH)).toEqual({ value: JSON.parse(body) });
  });
});
