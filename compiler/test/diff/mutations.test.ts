/**
 * Every shipped policy diffed against itself, and against single-operator mutations of it (support/mutation-tables.ts):
 * each against itself is equivalent; each mutation is different (or, where the rewrite keeps every decision,
 * equivalent), every witness is decided as reported by both versions, every difference a brute force finds on the
 * boundary grid of the two versions is in a reported region, and no region is undecided but where the table says why.
 */
import { readFileSync } from "node:fs";
import { preparePolicy, type Decision } from "@writ/runtime";
import { describe, expect, it } from "vitest";
import { diffPolicies, type Outcome } from "../../src/diff/diff.js";
import { bruteForce, compileVersion, only, pairKey, type Version } from "./support/brute-force.js";
import { MUTATION_TABLES } from "./support/mutation-tables.js";

const source = (policy: string): string => readFileSync(new URL(`../../../policies/${policy}/policy.writ`, import.meta.url), "utf8");

function version(text: string): Version {
  const v = compileVersion(text);
  if (!v) throw new Error(`does not compile:\n${text}`);
  return v;
}

const decided = (d: Decision): string => (d.decided ? d.ruleId : d.fault ? `${d.fault.ruleId} (fault)` : "otherwise");
const named = (o: Outcome): string => (o.verdict === "fault" ? `${o.rule} (fault)` : o.rule);

describe.each(Object.entries(MUTATION_TABLES))("%s", (policy, { mutations, strings }) => {
  const text = source(policy);
  const old = version(text);

  it("against itself: equivalent, nothing undecided", () => {
    expect(diffPolicies({ old, new: old })).toMatchObject({ result: "equivalent", regions: [], undecided: [] });
  });

  it.each(mutations.map((m) => [m.to, m] as const))("`%s`", (_, m) => {
    expect(text.split(m.from), `\`${m.from}\` once in ${policy}`).toHaveLength(2);
    const next = version(text.replace(m.from, m.to));
    const diff = diffPolicies({ old, new: next });
    for (const r of diff.regions) {
      expect(decided(preparePolicy(old.ir).evaluate(only(r.witness.oldSignals ?? r.witness.signals, old.ir)))).toBe(named(r.old));
      expect(decided(preparePolicy(next.ir).evaluate(only(r.witness.signals, next.ir)))).toBe(named(r.new));
    }
    const reported = new Set([...diff.regions, ...diff.undecided].map((r) => pairKey(r.old, r.new)));
    const brute = bruteForce(old, next, { maxGrid: 3000, samples: 0, seed: 39, strings });
    for (const [key, request] of brute.pairs) expect(reported.has(key), `${key} on ${JSON.stringify(request)}`).toBe(true);
    if (m.undecided === undefined) expect(diff.undecided).toEqual([]);
    else expect(diff.undecided.length).toBeGreaterThan(0);
    expect(diff.result).toBe(m.same ? "equivalent" : diff.undecided.length > 0 && diff.regions.length === 0 ? "undecided" : "different");
  });
});
