/**
 * The sets `writ diff` computes with, against JavaScript itself: a number set holds exactly the values a comparison
 * accepts, a pattern's language exactly the strings a `u`-flag RegExp finds a match in, and a string set's member is a
 * member, of a length it allows, found however far along the lengths it is.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  COMPARISON_OPERATORS,
  EvaluationFaultSignal,
  UNKNOWN,
  prepareExpression,
  unitsOf,
  type CompareOp,
  type IrExpr,
} from "@writ/runtime";
import { Language } from "../../src/analysis/language.js";
import { NumberSet, nextDown, nextUp } from "../../src/analysis/number-set.js";
import { StringSet } from "../../src/analysis/string-set.js";
import { monotoneSets, monotoneView } from "../../src/diff/monotone.js";
import { DOUBLES, INTEGERS } from "../../src/diff/number-domain.js";
import { STRING_PATTERNS } from "../support/generate-policy.js";

const OPS = Object.keys(COMPARISON_OPERATORS) as CompareOp[];
const number = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
  fc.integer({ min: -20, max: 20 }),
  fc.constantFrom(0, 0.5, -0.5, 5e-324),
);

describe("number sets", () => {
  it("`v op c` holds exactly for the values of compare(op, c), doubles and whole numbers, and never for the complement's", () => {
    fc.assert(
      fc.property(fc.constantFrom(...OPS), number, number, fc.boolean(), (op, c, v0, whole) => {
        const v = whole ? Math.round(v0) : v0;
        const set = NumberSet.compare(whole, op, c);
        expect(set.has(v)).toBe(COMPARISON_OPERATORS[op].test(v, c));
        expect(set.complement().has(v)).toBe(!set.has(v));
      }),
      { numRuns: 2000, seed: 3 },
    );
  });

  it("no double lies strictly between a value and its neighbours, so an open bound is the next double", () => {
    for (const x of [0, 1, -1, 0.1, 1e300, -5e-324, 9007199254740991]) {
      expect(nextUp(x)).toBeGreaterThan(x);
      expect(nextDown(nextUp(x))).toBe(x);
      expect(
        NumberSet.compare(false, "gt", x)
          .intersect(NumberSet.compare(false, "lt", nextUp(x)))
          .isEmpty(),
      ).toBe(true);
    }
  });

  it("picks a member that reads well", () => {
    expect(NumberSet.compare(false, "gt", 10000).pick()).toBe(10001);
    expect(NumberSet.span(false, 0.25, 0.3).pick()).toBe(0.3);
    expect(NumberSet.compare(true, "lt", -2.5).pick()).toBe(-3);
    expect(NumberSet.empty(false).pick()).toBeUndefined();
  });
});

const PATTERNS = [
  ...STRING_PATTERNS.map((p) => p.source),
  "^$",
  "(?:ab)+",
  "^[A-Z]",
  "\\d$",
  "^\\p{Lu}",
  "é",
  "^.{3}$",
  "[\\u{1F600}-\\u{1F64F}]",
  "foo|bar",
  "^(CU|IR|KP|SY)[0-9]{2}",
  "^a|b$",
];
const CHARS = [..."abAB09 -._@/", "é", "😀", "日", "\n", "Σ"];
const text = fc.array(fc.constantFrom(...CHARS), { maxLength: 12 }).map((cs) => cs.join(""));

describe("string languages", () => {
  it("the language of `matches /re/` holds exactly the strings the RegExp finds a match in", () => {
    for (const pattern of PATTERNS) {
      const language = Language.search(pattern);
      if (!(language instanceof Language)) throw new Error(`/${pattern}/ not modelled: ${language.unsupported}`);
      const re = new RegExp(pattern, "u");
      const samples = [...fc.sample(text, { numRuns: 300, seed: 1 }), "CU12", "xCU12", "ab", "AB", "foo.abc", "a", "b", "😀"];
      for (const s of samples) expect(language.has(s), `/${pattern}/ on ${JSON.stringify(s)}`).toBe(re.test(s));
    }
  });

  it("refuses what it does not model: other assertions, unresolvable backreferences", () => {
    expect(Language.search("\\bx\\b")).toEqual({ unsupported: "the assertion `\\b` is not modelled" });
    expect(Language.search("a(?=b)")).toEqual({ unsupported: "the assertion `(?=b)` is not modelled" });
    expect(Language.search("(?:^a)")).toEqual({ unsupported: "the assertion `^` is not modelled" });
    expect(Language.search("(?<w>[a-z]+)-\\k<w>")).toEqual({ unsupported: "a backreference is not modelled" });
  });

  it("starts_with, ends_with, contains, and their converses, as JavaScript's", () => {
    fc.assert(
      fc.property(text, text, (w, s) => {
        expect(Language.around(w, "prefix").has(s)).toBe(s.startsWith(w));
        expect(Language.around(w, "suffix").has(s)).toBe(s.endsWith(w));
        expect(Language.around(w, "infix").has(s)).toBe(s.includes(w));
        expect(Language.partsOf(w, "prefixes").has(s)).toBe(w.startsWith(s));
        expect(Language.partsOf(w, "suffixes").has(s)).toBe(w.endsWith(s));
        expect(Language.partsOf(w, "infixes").has(s)).toBe(w.includes(s));
      }),
      { numRuns: 300, seed: 5 },
    );
  });

  it("a member is a member, of an allowed length, and none is found when the lengths and the language exclude each other", () => {
    const two = new StringSet(Language.search("^[A-Z]{2}$") as Language, null);
    expect(two.member()).toBe("AA");
    expect(two.intersect(StringSet.ofLengths(NumberSet.span(true, 3, 5))).member()).toBeNull();
    const pairs = new StringSet(Language.search("^(?:ab)*$") as Language, null);
    // The walk repeats with period 2: an odd length is decided without walking to it.
    expect(
      pairs.intersect(StringSet.ofLengths(NumberSet.compare(true, "gt", 10_000).intersect(NumberSet.points(true, [10_001])))).member(),
    ).toBeNull();
    const long = pairs.intersect(StringSet.ofLengths(NumberSet.compare(true, "ge", 5_000)));
    expect(long.member()).toBe("ab".repeat(2_500));
    fc.assert(
      fc.property(fc.constantFrom(...STRING_PATTERNS), fc.nat(6), fc.nat(8), (pattern, lo, width) => {
        const set = new StringSet(Language.search(pattern.source) as Language, null).intersect(
          StringSet.ofLengths(NumberSet.span(true, lo, lo + width)),
        );
        const m = set.member();
        // The generator's patterns match a string of every length from minLen to maxLen, and of no other.
        expect(m !== null).toBe(lo <= pattern.maxLen && lo + width >= pattern.minLen);
        if (m !== null) {
          expect(new RegExp(pattern.source, "u").test(m)).toBe(true);
          expect([...m].length).toBeGreaterThanOrEqual(lo);
          expect([...m].length).toBeLessThanOrEqual(lo + width);
        }
      }),
      { numRuns: 200, seed: 9 },
    );
  });
});

describe("arithmetic on one signal", () => {
  const constants = fc.oneof(fc.integer({ min: -50, max: 50 }), fc.constantFrom(0.5, -0.25, 1e300, -1e300, 0, 3e-300, 9007199254740991));
  const step = fc.tuple(fc.constantFrom("add", "sub", "rsub", "mul", "div", "neg"), constants);
  const chain = (leaf: IrExpr, steps: readonly (readonly [string, number])[]): IrExpr =>
    steps.reduce<IrExpr>((e, [fn, c]) => {
      const lit: IrExpr = { op: "lit", value: c };
      if (fn === "neg") return { op: "neg", arg: e };
      if (fn === "rsub") return { op: "arith", fn: "sub", left: lit, right: e };
      return { op: "arith", fn: fn as "add" | "sub" | "mul" | "div", left: e, right: lit };
    }, leaf);

  /** What the runtime makes of a condition: its value, or `fault`. */
  const outcome = (evaluate: ReturnType<typeof prepareExpression>, x: number): unknown => {
    try {
      return evaluate({ x });
    } catch (e) {
      if (e instanceof EvaluationFaultSignal) return "fault";
      throw e;
    }
  };

  it("the values where `chain(x) op c` is true, false, unknown or a fault are exactly the runtime's, at every edge", () => {
    fc.assert(
      fc.property(
        fc.array(step, { maxLength: 4 }),
        fc.constantFrom(...OPS, "in" as const),
        constants,
        fc.boolean(),
        fc.array(number, { maxLength: 30 }),
        (steps, op, c, whole, xs) => {
          const subject = chain({ op: "signal", name: "x" }, steps);
          const view = monotoneView(subject, whole ? INTEGERS : DOUBLES)!;
          expect(view).not.toBeNull();
          const condition: IrExpr =
            op === "in"
              ? { op: "in", kind: "number", value: subject, set: [c, c + 1] }
              : { op: "cmp", cmp: op, kind: "number", left: subject, right: { op: "lit", value: c } };
          const [t, f, u, e] = monotoneSets(view, op, op === "in" ? [c, c + 1] : [c]);
          const evaluate = prepareExpression(condition);
          const edges = [t, f, u, e].flatMap((s) =>
            s.spans.flatMap((sp) => [sp.lo, sp.hi, nextUp(sp.lo), nextDown(sp.hi), sp.lo - 1, sp.hi + 1]),
          );
          for (const x0 of [...xs, ...edges]) {
            const x = whole ? Math.round(x0) : x0;
            if (!Number.isFinite(x) || Math.abs(x) > Number.MAX_SAFE_INTEGER) continue;
            const v = outcome(evaluate, x);
            expect([t.has(x), f.has(x), u.has(x), e.has(x)], `${JSON.stringify(condition)} at ${x}`).toEqual([
              v === true,
              v === false,
              v === UNKNOWN,
              v === "fault",
            ]);
          }
        },
      ),
      { numRuns: 400, seed: 17 },
    );
  });

  it("on a decimal(2), computed exactly, the sets are the runtime's at every edge, in units of 0.01", () => {
    const decimals = fc.oneof(
      fc.integer({ min: -5000, max: 5000 }).map((n) => n / 100),
      fc.constantFrom(0, 0.29, 100, -1.5, 1e12, 9007199254740.99, 25000),
    );
    const exactStep = fc.tuple(fc.constantFrom("add", "sub", "rsub", "mul", "neg"), decimals);
    const signals = { x: { type: "decimal" as const, optional: false, scale: 2 } };
    fc.assert(
      fc.property(
        fc.array(exactStep, { maxLength: 3 }),
        fc.constantFrom(...OPS, "in" as const),
        decimals,
        fc.array(fc.integer({ min: -2_000_000, max: 2_000_000 }), { maxLength: 20 }),
        (steps, op, c, ns) => {
          const subject = steps.reduce<IrExpr>(
            (e, [fn, k]) => {
              const lit: IrExpr = { op: "lit", value: k };
              if (fn === "neg") return { op: "neg", arg: e };
              if (fn === "rsub") return { op: "arith", fn: "sub", kind: "decimal", left: lit, right: e };
              return { op: "arith", fn: fn as "add" | "sub" | "mul", kind: "decimal", left: e, right: lit };
            },
            { op: "signal", name: "x" },
          );
          const view = monotoneView(subject, { whole: true, scale: 2 }, "decimal")!;
          expect(view).not.toBeNull();
          const set = [c, c + 1];
          const condition: IrExpr =
            op === "in"
              ? { op: "in", kind: "decimal", value: subject, set }
              : { op: "cmp", cmp: op, kind: "decimal", left: subject, right: { op: "lit", value: c } };
          const [t, f, u, e] = monotoneSets(view, op, op === "in" ? set : [c]);
          const evaluate = prepareExpression(condition, signals);
          const edges = [t, f, u, e].flatMap((s) => s.spans.flatMap((sp) => [sp.lo, sp.hi, sp.lo - 1, sp.hi + 1]));
          for (const n of [...ns, ...edges]) {
            // Only the values a decimal(2) signal carries: n / 100 written as the decimal of n units.
            if (!Number.isFinite(n) || Math.abs(n) > Number.MAX_SAFE_INTEGER || unitsOf(n / 100, 2) !== BigInt(n)) continue;
            const v = outcome(evaluate, n / 100);
            expect([t.has(n), f.has(n), u.has(n), e.has(n)], `${JSON.stringify(condition)} at ${n / 100}`).toEqual([
              v === true,
              v === false,
              v === UNKNOWN,
              v === "fault",
            ]);
          }
        },
      ),
      { numRuns: 300, seed: 23 },
    );
  });

  it("is not a chain when it reads the signal twice or divides by it", () => {
    expect(
      monotoneView({ op: "arith", fn: "mul", left: { op: "signal", name: "x" }, right: { op: "signal", name: "x" } }, DOUBLES),
    ).toBeNull();
    expect(monotoneView({ op: "arith", fn: "div", left: { op: "lit", value: 1 }, right: { op: "signal", name: "x" } }, DOUBLES)).toBeNull();
  });
});
