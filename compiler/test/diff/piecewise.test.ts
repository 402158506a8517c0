/**
 * `writ diff` on `abs`, `min` and `max`: each split into the cases that pick each operand, and each piece read by the
 * layers that read it without them (chains on one signal, octagon relations), so they are exact where those are,
 * faults included (issue 41).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { small } from "./support/versions.js";
import { diffOf, expectEnumerated } from "./support/enumerate.js";

const rule = (name: string, condition: string, verdict = "reject") => `rule ${name} when ${condition} ${verdict} "${name}"`;
const on = (decl: string, a: string, b: string) => diffOf(small(decl, rule("r", a)), small(decl, rule("r", b)));

describe("named examples", () => {
  it.each(["x: integer", "x: number", "x: decimal(2)"])("over `%s`, `abs(x) > 500` is `x > 500 or x < -500`", (decl) => {
    expect(on(`  ${decl}`, "abs(x) > 500", "x > 500 or x < -500").diff).toMatchObject({ result: "equivalent", regions: [], undecided: [] });
  });

  it("`max(a, b) > 10` against `a > 10`: the region where b > 10 >= a, with such a witness", () => {
    const { diff, pairs } = on("  a: integer\n  b: integer", "max(a, b) > 10", "a > 10");
    expect(pairs).toEqual(["r -> otherwise"]);
    expect(diff.undecided).toEqual([]);
    const { a, b } = diff.regions[0]!.witness.signals as { a: number; b: number };
    expect(b > 10 && a <= 10).toBe(true);
  });

  it("`min(amount, balance) > 100` on decimals is both above 100, exactly", () => {
    const decl = "  amount: decimal(2) >= 0 <= 1000000\n  balance: decimal(2) >= 0 <= 1000000";
    const same = on(decl, "min(amount, balance) > 100", "amount > 100 and balance > 100.00");
    expect(same.diff).toMatchObject({ result: "equivalent", undecided: [] });
    const moved = on(decl, "min(amount, balance) > 100", "min(amount, balance) >= 100.01");
    expect(moved.diff).toMatchObject({ result: "equivalent", undecided: [] });
  });

  it("an unknown operand leaves `max` unknown: an optional `b` absent is neither above nor below", () => {
    const { diff, pairs } = on("  a: integer 0..100\n  b?: integer 0..100", "max(a, b) > 10", "a > 10 or b > 10");
    // Absent `b` and `a > 10`: `max` is unknown, the disjunction true.
    expect(pairs).toEqual(["otherwise -> r"]);
    expect(diff.regions[0]!.witness.signals).not.toHaveProperty("b");
    expect(diff.undecided).toEqual([]);
  });

  it("faults are kept: `max(a, b) + 3 > 10` overflows where `max(a, b) > 7` cannot", () => {
    const { diff, pairs } = on("  a: integer\n  b: integer", "max(a, b) + 3 > 10", "max(a, b) > 7");
    expect(diff.undecided).toEqual([]);
    expect(pairs).toEqual(["r (fault) -> r"]);
  });
});

describe("against enumeration", () => {
  // Every request of small integer and decimal(1) spaces, an optional signal among them.
  const spaces = [
    { decl: "  a: integer -6..6\n  b?: integer -6..6", values: Array.from({ length: 13 }, (_, i) => i - 6) },
    { decl: "  a: decimal(1) -0.6..0.6\n  b?: decimal(1) -0.6..0.6", values: Array.from({ length: 13 }, (_, i) => (i - 6) / 10) },
  ];
  const form = fc.constantFrom(
    "abs(a)",
    "abs(b) + a",
    "max(a, b)",
    "min(a, b)",
    "max(a, b) - b",
    "min(a, 2) + b",
    "abs(a - b)",
    "-abs(a)",
    "max(abs(a), b)",
    "min(a, b) + max(a, b)",
    "a",
  );
  const op = fc.constantFrom(">", ">=", "<", "<=", "==", "!=");
  const constant = fc.integer({ min: -8, max: 8 });
  const condition = fc.tuple(form, op, constant).map(([f, o, c]) => `${f} ${o} ${c}`);

  it("on generated pairs, the regions are exactly the pairs every request shows", () => {
    fc.assert(
      fc.property(
        fc.nat(spaces.length - 1),
        fc.array(condition, { minLength: 4, maxLength: 4 }),
        fc.boolean(),
        (s, [p, q, r, t], scaled) => {
          const space = spaces[s]!;
          const k = (text: string) => (s === 1 && scaled ? text.replace(/(-?\d+)$/, (n) => String(Number(n) / 10)) : text);
          const rules = (x: string, y: string) => `${rule("p", k(x))}\n${rule("q", k(y), "escalate")}`;
          const requests = space.values.flatMap((a) => [{ a }, ...space.values.map((b) => ({ a, b }))]);
          expectEnumerated(small(space.decl, rules(p!, q!)), small(space.decl, rules(r!, t!)), requests);
        },
      ),
      { numRuns: 100, seed: 41 },
    );
  });
});
