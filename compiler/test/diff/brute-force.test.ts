/**
 * `writ diff` against brute force, on generated pairs of policy versions (a generated policy, then one or two author's
 * edits of it). For every pair: each region it reports is shown by its witness, decided as reported by both versions;
 * every request the brute force finds decided differently falls in a reported (or undecided) region; and when the
 * conditions compare signals only with constants, the boundary grid meets every region, so the regions reported are
 * exactly the pairs of outcomes the grid finds, none undecided: "equivalent" exactly when the grid finds no difference.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { diffPolicies, type PolicyDiff } from "../../src/diff/diff.js";
import { policyModel, renderPolicy } from "../support/generate-policy.js";
import { bruteForce, compileVersion, only, pairKey, type Version } from "./support/brute-force.js";
import { mutate, mutationsArb, type Parts } from "./support/mutate.js";

interface Case {
  readonly old: Version;
  readonly next: Version;
  readonly edits: string;
  /** How fast-check prints a counterexample: the edits and both sources. */
  readonly [fc.toStringMethod]: () => string;
}

/** Generated versions that compile, or null (fc.pre skips them). */
function caseArb(exactAtoms: boolean) {
  return fc
    .tuple(policyModel({ rules: { min: 1, max: 5 }, signals: { min: 1, max: 3 }, exactAtoms }), mutationsArb)
    .map(([model, edits]): Case | null => {
      let parts: Parts = model;
      for (const [kind, a, b] of edits) parts = mutate(parts, kind, a, b);
      const [before, after] = [renderPolicy(model), renderPolicy(parts)];
      const old = compileVersion(before);
      const next = compileVersion(after);
      const names = edits.map(([k]) => k).join("+");
      return old && next ? { old, next, edits: names, [fc.toStringMethod]: () => `${names}\n--- old\n${before}--- new\n${after}` } : null;
    });
}

/** Checks one pair; says whether it was one whose grid provably meets every region. */
function check(c: Case, exactAtoms: boolean): boolean {
  const diff = diffPolicies({ old: c.old, new: c.next });
  const reported = new Set(diff.regions.map((r) => pairKey(r.old, r.new)));
  const undecided = new Set(diff.undecided.map((u) => pairKey(u.old, u.new)));
  for (const r of diff.regions) {
    const witness = r.witness.oldSignals ?? r.witness.signals;
    const [a, b] = [c.old.decide(only(witness, c.old.ir)), c.next.decide(only(r.witness.signals, c.next.ir))];
    expect(a, `old decides the witness of ${pairKey(r.old, r.new)}`).toBe(JSON.stringify([r.old.rule, r.old.verdict, r.old.reason]));
    expect(b, `new decides the witness of ${pairKey(r.old, r.new)}`).toBe(JSON.stringify([r.new.rule, r.new.verdict, r.new.reason]));
  }
  const brute = bruteForce(c.old, c.next, { maxGrid: 3000, samples: 60, seed: 11 });
  for (const [key, request] of brute.pairs) {
    expect(
      reported.has(key) || undecided.has(key),
      `${c.edits}: brute force found ${key} on ${JSON.stringify(request)}; diff: ${summary(diff)}`,
    ).toBe(true);
  }
  if (diff.result === "equivalent") expect(brute.pairs.size).toBe(0);
  if (!exactAtoms || !brute.complete) return false;
  expect(diff.undecided, `${c.edits}: nothing is undecided when every condition compares a signal with constants`).toEqual([]);
  expect([...reported].sort(), `${c.edits}: the grid meets every region reported`).toEqual([...brute.pairs.keys()].sort());
  expect(diff.regions.length === 0).toBe(brute.pairs.size === 0);
  return true;
}

function summary(d: PolicyDiff): string {
  return JSON.stringify({ regions: d.regions.map((r) => pairKey(r.old, r.new)), undecided: d.undecided });
}

describe("writ diff agrees with brute force", () => {
  it("on 300+ generated pairs whose conditions compare signals with constants, exactly", () => {
    let exact = 0;
    let runs = 0;
    fc.assert(
      fc.property(caseArb(true), (c) => {
        fc.pre(c !== null);
        runs++;
        if (check(c, true)) exact++;
      }),
      { numRuns: 340, seed: 20_251_117 },
    );
    expect(exact, `${exact} of ${runs} pairs had a complete grid`).toBeGreaterThanOrEqual(300);
  });

  it("on generated pairs using every construct: no false difference, no difference missed", () => {
    fc.assert(
      fc.property(caseArb(false), (c) => {
        fc.pre(c !== null);
        check(c, false);
      }),
      { numRuns: 150, seed: 4_711 },
    );
  });
});
