import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileLinearRegExp, linearPatternRefusal, linearRegExpEngine, MAX_NFA_STATES, PatternRefusedError } from "../../src/index.js";

function refused(pattern: string): PatternRefusedError {
  try {
    compileLinearRegExp(pattern);
  } catch (e) {
    if (e instanceof PatternRefusedError) return e;
    throw e;
  }
  throw new Error(`/${pattern}/ was not refused`);
}

describe("what the engine refuses, naming the construct and what to write instead", () => {
  it.each([
    ["(a)\\1", "\\1", "backreference `\\1` cannot be matched in linear time: repeat the group's pattern instead"],
    ["(?<y>\\d{4})-\\k<y>", "\\k<y>", "backreference `\\k<y>` cannot be matched in linear time: repeat the group's pattern instead"],
    [
      "^(?=.*\\d)\\w+$",
      "(?=.*\\d)",
      "lookahead `(?=.*\\d)` cannot be matched in linear time: a lookahead may test one character or class only, such as `(?=[a-z])`; test for more with a second `matches`",
    ],
    [
      "(?<!ab)c",
      "(?<!ab)",
      "lookbehind `(?<!ab)` cannot be matched in linear time: a lookbehind may test one character or class only, such as `(?<=[a-z])`; test for more with a second `matches`",
    ],
    [
      "x(?=$)",
      "(?=$)",
      "lookahead `(?=$)` cannot be matched in linear time: a lookahead may test one character or class only, such as `(?=[a-z])`; test for more with a second `matches`",
    ],
  ])("/%s/: `%s`", (pattern, construct, message) => {
    const e = refused(pattern);
    expect(e).toMatchObject({ code: "PATTERN_REFUSED", pattern, construct, message: `${message} (pattern \`/${pattern}/\`)` });
    expect(linearPatternRefusal(pattern)).toEqual({ construct, message });
  });

  it(`refuses counted repetitions that expand beyond ${MAX_NFA_STATES} NFA states, naming the outermost`, () => {
    expect(refused("^(\\d{1,100}-){1,100}$")).toMatchObject({
      construct: "(\\d{1,100}-){1,100}",
      message: expect.stringContaining(`\`(\\d{1,100}-){1,100}\` expands to more than ${MAX_NFA_STATES} states`) as unknown,
    });
    expect(refused("x{10001}").construct).toBe("x{10001}");
    // Long, but within the bound: an e-mail address's parts.
    expect(linearPatternRefusal("^[a-z0-9._%+-]{1,64}@[a-z0-9.-]{1,255}\\.[a-z]{2,63}$")).toBeNull();
  });

  it("refuses modifiers, which a newer V8 accepts (this one refuses them first: E303)", () => {
    expect(linearPatternRefusal("(?i:a)b")).toEqual({
      construct: "(?i:",
      message: "modifiers `(?i:` are not supported: write each case out, such as `[aA]`",
    });
  });

  it("refuses groups nested too deep to compile without exhausting the stack", () => {
    expect(linearPatternRefusal(`${"(".repeat(201)}a${")".repeat(201)}`)?.message).toBe(
      "groups nested more than 200 deep are not supported: flatten the pattern",
    );
    expect(linearPatternRefusal(`${"(".repeat(200)}a${")".repeat(200)}`)).toBeNull();
  });

  it("throws V8's SyntaxError for an invalid pattern", () => {
    expect(() => compileLinearRegExp("a(b")).toThrow(SyntaxError);
    expect(() => compileLinearRegExp("\\-")).toThrow(SyntaxError);
  });
});

describe("what it runs", () => {
  it("lookarounds of one character, a class, an alternation of them or nothing", () => {
    const re = compileLinearRegExp("(?<![\\d.])\\d+(?=,|\\s|)(?!%)");
    expect([re.test("a12,"), re.test("1.5%"), re.test("%5%")]).toEqual([true, true, false]);
    expect(compileLinearRegExp("(?!)").test("")).toBe(false);
    expect(compileLinearRegExp("(?=)").test("")).toBe(true);
  });

  it("answers as V8 once its bounded cache of DFA states has been flushed", () => {
    // Which of the last 13 characters are `a`s is a DFA state: 8,192 of them, twice the cache.
    const linear = compileLinearRegExp("a[ab]{12}$");
    const native = new RegExp("a[ab]{12}$", "u");
    fc.assert(
      fc.property(fc.array(fc.constantFrom("a", "b"), { minLength: 2000, maxLength: 4000 }), (chars) => {
        const s = chars.join("");
        expect(linear.test(s)).toBe(native.test(s));
      }),
      { numRuns: 20 },
    );
    expect(linear.work.flushes).toBeGreaterThan(0);
  });

  it("answers as V8 while new classes of code points widen its transition table in the middle of a string", () => {
    const chars = [..."abcdefghijklmnopqrstuvwxyz0123456789éЖ😀_"];
    const pattern = `^(?:${chars.join("|")})+(?:!|(?<=[a-m])\\.)$`;
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...chars, "!", "."), { maxLength: 60 }), (cs) => {
        const s = cs.join("");
        // A fresh matcher each time, so the classes appear as the string goes.
        expect(compileLinearRegExp(pattern).test(s)).toBe(new RegExp(pattern, "u").test(s));
      }),
      { numRuns: 300 },
    );
  });

  it("is ajv's engine for `u` patterns, keyed by its source as a RegExp prints", () => {
    const re = linearRegExpEngine("^[A-Z]{2}$", "u");
    expect([re.test("KP"), re.test("kp"), String(re)]).toEqual([true, false, "/^[A-Z]{2}$/u"]);
    expect(() => linearRegExpEngine("a", "")).toThrow("regular expression flags `` are not supported: writ patterns use `u` alone");
  });
});
