/**
 * Issue 39: the patterns a backtracking engine takes super-linear time on (nested quantifiers, overlapping
 * alternations under a star, trailing runs in an unanchored search, CVE patterns; fixtures/regex/hostile-shapes.json)
 * are each refused, or decided on their 64-character attack string with work linear in it: the engine counts the NFA
 * states it visits, at most one closure of the whole NFA per code point, where backtracking tries exponentially or
 * polynomially many paths. Wall-clock figures are bench/regex.ts's (docs/benchmarks.md), not a test's.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compileLinearRegExp, PatternRefusedError } from "../../src/index.js";

interface Shape {
  readonly pattern: string;
  readonly shape: string;
  readonly attack: { readonly prefix: string; readonly pump: string; readonly suffix: string };
  /** What `test` answers on the 64-character attack string. */
  readonly answer?: boolean;
  /** The construct the engine refuses, for a refused shape. */
  readonly refused?: string;
}

const { shapes } = JSON.parse(readFileSync(new URL("../fixtures/regex/hostile-shapes.json", import.meta.url), "utf8")) as {
  shapes: Shape[];
};

/** The attack string with the pump repeated `times`. */
const attack = ({ attack: { prefix, pump, suffix } }: Shape, times: number): string => prefix + pump.repeat(times) + suffix;
const LENGTH = 64;
/** The short forms compared with V8: at most C(64, 4), about 635,000 backtracking paths, for the worst shape. */
const SHORT = 4;
const timesFor = (s: Shape): number => (LENGTH - s.attack.prefix.length - s.attack.suffix.length) / s.attack.pump.length;

describe("patterns that backtrack super-linearly", () => {
  it("are 23 shapes, each with an attack string of 64 characters", () => {
    expect(shapes).toHaveLength(23);
    for (const s of shapes) expect(attack(s, timesFor(s))).toHaveLength(LENGTH);
  });

  describe.each(shapes.filter((s) => s.refused === undefined))("$shape: /$pattern/", (s) => {
    it("answers as V8 on the attack string's short forms", () => {
      const linear = compileLinearRegExp(s.pattern);
      const native = new RegExp(s.pattern, "u");
      // Up to SHORT pumps only: V8 backtracks on these shapes too, and whether it finds a shortcut is its own affair.
      // `^(a?){64}a{64}$` on eight a's is C(64, 8), billions of paths, when it does not: that froze a unit-test worker
      // in which V8 had compiled the pattern before, where a fresh process answers in microseconds.
      for (let times = 0; times <= SHORT; times++) expect(linear.test(attack(s, times))).toBe(native.test(attack(s, times)));
    });

    it("decides the 64-character attack string visiting at most one closure of its NFA per code point, and a warm match visits none", () => {
      const linear = compileLinearRegExp(s.pattern);
      const input = attack(s, timesFor(s));
      expect(linear.test(input)).toBe(s.answer);
      const cold = linear.work;
      // One transition per code point, each closing the NFA at most once; the end of the input, whether a restart can
      // match, and whether the pattern matches inside a surrogate pair once each.
      expect(cold.nfaVisits).toBeLessThanOrEqual((LENGTH + 3) * cold.nfaStates);
      expect(cold.dfaStates).toBeLessThanOrEqual(LENGTH + 1);
      expect(cold.flushes).toBe(0);
      expect(linear.test(input)).toBe(s.answer);
      expect(linear.work).toEqual(cold);
    });
  });

  it.each(shapes.filter((s) => s.refused !== undefined))("$shape: /$pattern/ is refused, naming $refused", (s) => {
    const e = (() => {
      try {
        compileLinearRegExp(s.pattern);
      } catch (err) {
        return err;
      }
      return null;
    })();
    expect(e).toBeInstanceOf(PatternRefusedError);
    expect((e as PatternRefusedError).construct).toBe(s.refused);
    expect((e as PatternRefusedError).message).toContain(`\`${s.refused!}\``);
  });
});
