/**
 * What the playground shows, computed by the compiler in memory: every shipped policy's test cases decided by
 * `signalsDecider` as `writ test` expects them (refused cases with their VAL codes), the explanation laid out with one
 * deciding rule, and the highlighting of each policy read from the lexer and the lexicon.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lossyNumbersOf } from "@writ/runtime";
import { checkSource, highlightSpans, KEYWORD_INFO, KEYWORDS, parseTestFile, signalsDecider } from "../../src/index.js";

const repo = new URL("../../../", import.meta.url).pathname;
const policies = readdirSync(join(repo, "policies"), { recursive: true, encoding: "utf8" })
  .filter((p) => p.endsWith("policy.writ"))
  .map((p) => {
    const dir = join(repo, "policies", p, "..");
    return {
      path: p,
      text: readFileSync(join(dir, "policy.writ"), "utf8"),
      tests: parseTestFile(readFileSync(join(dir, "policy.test.json"), "utf8")),
    };
  });

/** The signals as JSON text, a number the test file wrote with more digits than a double holds kept as written. */
function signalsText(signals: Readonly<Record<string, unknown>>): string {
  const lossy = lossyNumbersOf(signals);
  return `{${Object.entries(signals)
    .map(([name, value]) => `${JSON.stringify(name)}: ${lossy?.get(name) ?? JSON.stringify(value)}`)
    .join(", ")}}`;
}

describe("signalsDecider", () => {
  it.each(policies.map((p) => [p.path, p] as const))("decides every case of %s as its policy.test.json expects", (_, policy) => {
    const decide = signalsDecider(checkSource(policy.path, policy.text, { until: "lower" }))!;
    for (const c of policy.tests.cases) {
      const outcome = decide(signalsText(c.signals), c.now);
      if ("invalid" in c.expect) {
        expect({
          name: c.name,
          codes: outcome.kind === "refused" ? [...new Set(outcome.errors.map((e) => e.code))].sort() : outcome.kind,
        }).toEqual({
          name: c.name,
          codes: [...new Set(c.expect.invalid)].sort(),
        });
        continue;
      }
      if (outcome.kind !== "decided") throw new Error(`${c.name}: ${JSON.stringify(outcome)}`);
      const d = outcome.decision;
      const got = d.decided ? { verdict: d.verdict, rule: d.ruleId, reason: d.reason } : { verdict: "undecided" };
      expect({ name: c.name, ...got }).toMatchObject({ name: c.name, ...c.expect });
      const explained = outcome.explanation;
      const deciders = [
        ...explained.rules.filter((r) => r.decides).map((r) => r.rule),
        ...(explained.otherwise?.decides ? ["otherwise"] : []),
      ];
      expect(deciders).toEqual(d.decided ? [d.ruleId] : []);
      // Each rule before the decider is not true; the decider's condition is; every rule keeps its source text.
      const at = explained.rules.findIndex((r) => r.decides);
      for (const [i, r] of explained.rules.entries()) {
        if (at === -1 || i < at) expect(r.result).not.toBe("true");
        expect(r.written).not.toBeNull();
      }
      if (at !== -1) expect(explained.rules[at]!.condition.truth).toBe("true");
    }
  });

  it("says where signals text stops being strict JSON", () => {
    const decide = signalsDecider(checkSource(policies[0]!.path, policies[0]!.text, { until: "lower" }))!;
    expect(decide('{\n  "amount": 1,\n}')).toEqual({
      kind: "not-json",
      message: "trailing comma in object at line 2 column 14",
      line: 2,
      column: 14,
    });
    expect(decide("[]")).toMatchObject({ kind: "refused", errors: [{ code: "VAL-001" }] });
  });

  it("is null for a policy with errors, and checkSource lowers only on request", () => {
    const broken = checkSource("p.writ", policies[0]!.text.replace(/(rule \w+\s+when )/, "$1nope and "), { until: "lower" });
    expect(broken.diagnostics.some((d) => d.severity === "error")).toBe(true);
    expect({ ir: broken.ir, decider: signalsDecider(broken) }).toEqual({ ir: null, decider: null });
    expect(checkSource("p.writ", policies[0]!.text).ir).toBeNull();
    expect(checkSource("p.writ", policies[0]!.text, { until: "lower" }).ir).not.toBeNull();
  });
});

describe("highlightSpans", () => {
  it.each(policies.map((p) => [p.path, p.text] as const))(
    "colours %s from the lexer: every keyword by its lexicon role, in order, without overlap",
    (_, text) => {
      const spans = highlightSpans(text);
      for (const [i, s] of spans.entries()) {
        expect(s.to).toBeGreaterThan(s.from);
        if (i > 0) expect(s.from).toBeGreaterThanOrEqual(spans[i - 1]!.to);
        const word = text.slice(s.from, s.to);
        if ((KEYWORDS as readonly string[]).includes(word))
          expect({ word, kind: s.kind }).toEqual({ word, kind: `keyword-${KEYWORD_INFO[word as keyof typeof KEYWORD_INFO].role}` });
        if (s.kind === "comment") expect(word.startsWith("#")).toBe(true);
        if (s.kind === "string") expect(word).toMatch(/^".*"$/);
      }
      // Everything but whitespace is coloured: the spans and the blanks between them make up the text.
      const uncovered = spans.reduce((rest, s) => rest.slice(0, s.from) + " ".repeat(s.to - s.from) + rest.slice(s.to), text);
      expect(uncovered.trim()).toBe("");
    },
  );

  it("tells rule names, built-in functions and other names apart", () => {
    const text = 'rule r when not present(x) and y > 1 reject "no"';
    const kinds = highlightSpans(text).map((s) => [text.slice(s.from, s.to), s.kind]);
    expect(kinds).toEqual([
      ["rule", "keyword-declaration"],
      ["r", "rule-name"],
      ["when", "keyword-declaration"],
      ["not", "keyword-logical"],
      ["present", "builtin"],
      ["(", "operator-bracket"],
      ["x", "name"],
      [")", "operator-bracket"],
      ["and", "keyword-logical"],
      ["y", "name"],
      [">", "operator-comparison"],
      ["1", "number"],
      ["reject", "keyword-verdict"],
      ['"no"', "string"],
    ]);
  });
});
