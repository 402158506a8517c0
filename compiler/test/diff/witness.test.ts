/**
 * `writ diff` witnesses read well: where a search found a request with `5e-324` in it, the witness shows the shortest
 * whole number or decimal that is decided the same (`0`, `1`, `0.01`), and is still run through both versions.
 */
import { describe, expect, it } from "vitest";
import { preparePolicy, type Decision, type Scalar } from "@writ/runtime";
import { NumberSet } from "../../src/analysis/number-set.js";
import { diffPolicies } from "../../src/diff/diff.js";
import { DOUBLES, INTEGERS } from "../../src/diff/number-domain.js";
import { MAX_NUMBER, type SignalsSchema } from "../../src/diff/signal-domain.js";
import type { Variable } from "../../src/diff/space.js";
import type { Box } from "../../src/diff/search.js";
import { ABSENT, readability, simplify, type Assignment, type State } from "../../src/diff/witness.js";
import { checkSource } from "../../src/editor/check.js";
import { signalsSchema } from "../../src/emit/signals-schema.js";

const policy = (signals: string, rules: string) =>
  `policy "p" version "1.0.0"\ngoverns "a"\nsignals {\n${signals}\n}\n${rules}\notherwise approve "o"\n`;

function version(text: string) {
  const check = checkSource("policy.writ", text, { until: "lower" });
  if (!check.ir || !check.ast) throw new Error(`does not compile: ${check.diagnostics.map((d) => d.message).join("; ")}`);
  return { ir: check.ir, schema: signalsSchema(check.ast) as unknown as SignalsSchema };
}

/**
 * A number written without an exponent, in at most four characters: `1`, `-1`, `0.01`; or an end of the range
 * (±9007199254740991), which a witness of an overflow needs.
 */
const readable = (v: Scalar): boolean =>
  typeof v !== "number" || Math.abs(v) === MAX_NUMBER || (!String(v).includes("e") && String(v).length <= 4);

/** The outcome a version gives, as a region names it: the deciding rule, or the rule that faulted. */
const outcomeOf = (d: Decision): string => (d.decided ? d.ruleId : d.fault ? `${d.fault.ruleId} (fault)` : "otherwise");
const named = (o: { rule: string; verdict: string }): string => (o.verdict === "fault" ? `${o.rule} (fault)` : o.rule);

describe("writ diff witnesses", () => {
  // Conditions on two signals at once are opaque to the exact analysis: their witnesses come from a search over
  // the spans' ends and their neighbours, the next double after 0 among them.
  it.each([
    ["x: number\n  y: number", 'rule r when x + y > 0 reject "r"', 'rule r when x + y > 1 reject "r"'],
    ["x: number\n  y: number", 'rule r when x / y > 0 reject "r"', 'rule r when x > 0 reject "r"'],
    ["x: number\n  y: number", 'rule r when x * y > 1 reject "r"', 'rule r when x * y >= 1 reject "r"'],
    ["x: number > 0\n  y: number", 'rule r when x - y > 0 and x < 1 reject "r"', 'rule r when x < 1 reject "r"'],
    ["x: number", 'rule r when x > 0 reject "r"', 'rule r when x >= 1 reject "r"'],
    ["x: number", 'rule r when x > 0 and x < 0.5 escalate "r"', 'rule r when x > 0 and x < 0.5 reject "r"'],
  ])("%s: `%s` against `%s` show short numbers, decided as reported", (signals, before, after) => {
    const [old, next] = [version(policy(signals, before)), version(policy(signals, after))];
    const diff = diffPolicies({ old, new: next });
    expect(diff.regions.length).toBeGreaterThan(0);
    for (const r of diff.regions) {
      const signalsSent = r.witness.signals;
      expect(Object.values(signalsSent).every(readable), JSON.stringify(signalsSent)).toBe(true);
      const [a, b] = [preparePolicy(old.ir).evaluate(r.witness.oldSignals ?? signalsSent), preparePolicy(next.ir).evaluate(signalsSent)];
      expect(outcomeOf(a)).toBe(named(r.old));
      expect(outcomeOf(b)).toBe(named(r.new));
    }
  });

  it("x + y: a request the search found with the next double after 0 reads `{x: 1, y: 0}` or `{x: 0, y: 1}`", () => {
    const [old, next] = [
      version(policy("x: number\n  y: number", 'rule r when x + y > 0 reject "r"')),
      version(policy("x: number\n  y: number", 'rule r when x + y > 1 reject "r"')),
    ];
    const region = diffPolicies({ old, new: next }).regions.find((r) => r.old.rule === "r" && r.new.rule === "otherwise");
    expect([JSON.stringify({ x: 1, y: 0 }), JSON.stringify({ x: 0, y: 1 })]).toContain(JSON.stringify(region?.witness.signals));
  });
});

describe("simplify", () => {
  const number = (id: string, values: NumberSet): Variable => ({
    id,
    kind: "number",
    universe: { absent: false, values },
    numbers: values.whole ? INTEGERS : DOUBLES,
    names: { old: id, new: id },
  });
  const x = number("x", NumberSet.span(false, -MAX_NUMBER, MAX_NUMBER));
  const at = (a: Assignment) => a.get("x") as number;
  const NO_ATOMS: Box = { states: new Map(), opaque: new Map(), linear: [] };

  it.each([
    ["x > 0", 5e-324, 1, (v: number) => v > 0],
    ["0 < x < 0.5", 5e-324, 0.1, (v: number) => v > 0 && v < 0.5],
    ["0 < x < 0.01", 5e-324, 0.001, (v: number) => v > 0 && v < 0.01],
    ["x < 0", -5e-324, -1, (v: number) => v < 0],
    ["x > 1000", 1000.0000000000001, 1001, (v: number) => v > 1000],
    ["x == 0.3", 0.3, 0.3, (v: number) => v === 0.3],
    ["only a tiny x will do", 5e-324, 5e-324, (v: number) => v > 0 && v < 1e-300],
  ])("%s: %s becomes %s", (_, from, to, holds) => {
    const out = simplify(new Map([["x", from]]), NO_ATOMS, [x], (a) => holds(at(a)));
    expect(at(out)).toBe(to);
    expect(holds(at(out))).toBe(true);
  });

  it("keeps to the values the signal accepts: an integer stays whole, a bound is kept", () => {
    const whole = number("x", NumberSet.span(true, -MAX_NUMBER, MAX_NUMBER));
    expect(simplify(new Map([["x", MAX_NUMBER]]), NO_ATOMS, [whole], (a) => at(a) > 2.5 && at(a) < 7)).toEqual(new Map([["x", 5]]));
    const bounded = number("x", NumberSet.span(false, 2.5, 9));
    expect(simplify(new Map([["x", 8.999999999999998]]), NO_ATOMS, [bounded], (a) => at(a) > 8).get("x")).toBe(9);
    expect(simplify(new Map([["x", 2.5000000000000004]]), NO_ATOMS, [bounded], (a) => at(a) < 2.6).get("x")).toBe(2.5);
  });

  it("leaves what is not a number, and an absent signal, as they are", () => {
    const s: Variable = {
      id: "s",
      kind: "string",
      universe: { absent: true, values: NumberSet.empty(false) },
      numbers: DOUBLES,
      names: { old: "s", new: "s" },
    };
    const assignment: Assignment = new Map<string, State>([
      ["x", ABSENT],
      ["s", "a"],
    ]);
    expect(simplify(assignment, NO_ATOMS, [x, s], () => true)).toEqual(assignment);
  });

  it("reads shorter text as better, and an exponent worst", () => {
    expect([1, 0.5, 10, 0.01, 1234.5, 5e-324].sort((a, b) => readability(a) - readability(b))).toEqual([1, 10, 0.5, 0.01, 1234.5, 5e-324]);
  });
});
