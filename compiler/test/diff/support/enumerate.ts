/**
 * A diff checked against enumeration: both versions evaluated on every request of a finite universe that meets every
 * region the diff can report, so the pairs it reports must be exactly those the requests show.
 */
import { createSignalValidator, preparePolicy, type Decision } from "@writ/runtime";
import { expect } from "vitest";
import { diffPolicies, type Outcome, type PolicyDiff } from "../../../src/diff/diff.js";
import type { PolicyVersion } from "../../../src/diff/space.js";
import { versionOf } from "./versions.js";

/** The outcome a version gives, named as a region names it. */
const decided = (d: Decision): string => (d.decided ? d.ruleId : d.fault ? `${d.fault.ruleId} (fault)` : "otherwise");
const named = (o: Outcome): string => (o.verdict === "fault" ? `${o.rule} (fault)` : o.rule);

/** The diff of two sources, and its pairs (`old -> new`), each witness run through both versions. */
export function diffOf(oldSource: string, newSource: string): { diff: PolicyDiff; pairs: string[] } {
  const [old, next] = [versionOf(oldSource), versionOf(newSource)];
  const diff = diffPolicies({ old, new: next });
  const pairs = diff.regions.map((r) => {
    expect(decide(old, r.witness.oldSignals ?? r.witness.signals)).toBe(named(r.old));
    expect(decide(next, r.witness.signals)).toBe(named(r.new));
    return `${named(r.old)} -> ${named(r.new)}`;
  });
  return { diff, pairs };
}

/** The outcome `version` gives `request`, or null when its schema refuses it. */
function decide(version: PolicyVersion, request: Record<string, unknown>): string | null {
  if (!createSignalValidator(version.schema as object)(request).valid) return null;
  return decided(preparePolicy(version.ir).evaluate(request));
}

/**
 * The diff of two policies whose rules keep their verdicts and reasons by name, checked against `requests`: nothing
 * undecided, and the pairs reported exactly those on which the two decide by different rules.
 */
export function expectEnumerated(oldSource: string, newSource: string, requests: readonly Record<string, unknown>[]): void {
  const { diff, pairs } = diffOf(oldSource, newSource);
  const [old, next] = [versionOf(oldSource), versionOf(newSource)];
  const expected = new Set<string>();
  for (const request of requests) {
    const [o, n] = [decide(old, request), decide(next, request)];
    if (o === null || n === null) throw new Error(`a request of the universe is refused: ${JSON.stringify(request)}`);
    if (o !== n) expected.add(`${o} -> ${n}`);
  }
  const context = `${oldSource}\n${newSource}`;
  expect(diff.undecided, context).toEqual([]);
  expect([...new Set(pairs)].sort(), context).toEqual([...expected].sort());
}
