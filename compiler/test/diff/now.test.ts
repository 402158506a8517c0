/**
 * `writ diff` on the decision instant (issue 41 item 2): `now` is one more timestamp, shared by both versions, so a
 * change at its edge is found exactly and the witness says the instant it was decided at.
 */
import { describe, expect, it } from "vitest";
import { preparePolicy, type Decision } from "@writ/runtime";
import { diffPolicies } from "../../src/diff/diff.js";
import { diffLines } from "../../src/cli/diff-text.js";
import { small, versionOf } from "./support/versions.js";

const SIGNALS = "  deadline: timestamp\n  account_opened_at: timestamp\n  amount: integer >= 0";
const decided = (d: Decision): string => (d.decided ? d.ruleId : d.fault ? "fault" : "undecided");

function diffOf(oldSource: string, newSource: string) {
  const [old, next] = [versionOf(oldSource), versionOf(newSource)];
  const diff = diffPolicies({ old, new: next });
  // Every witness is run through both versions at its own instant.
  for (const r of diff.regions) {
    const at = r.witness.now === undefined ? undefined : new Date(r.witness.now);
    expect(decided(preparePolicy(old.ir).evaluate(r.witness.oldSignals ?? r.witness.signals, at))).toBe(r.old.rule);
    expect(decided(preparePolicy(next.ir).evaluate(r.witness.signals, at))).toBe(r.new.rule);
  }
  return diff;
}

const window = (condition: string): string => small(SIGNALS, `rule late when ${condition} escalate "late"`);

describe("now in writ diff", () => {
  it("`now < deadline` against `now <= deadline`: one region, at now equal to the deadline, nothing undecided", () => {
    const diff = diffOf(window("now < deadline"), window("now <= deadline"));
    expect(diff.result).toBe("different");
    expect(diff.undecided).toEqual([]);
    expect(diff.signals).toEqual([]);
    expect(diff.regions.map((r) => `${r.old.rule} -> ${r.new.rule}`)).toEqual(["otherwise -> late"]);
    const { now, signals } = diff.regions[0]!.witness;
    expect(now).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(now!)).toBe(Date.parse(signals["deadline"] as string));
    expect(signals).not.toHaveProperty("now");
  });

  it("the witness text shows the instant it chose", () => {
    const diff = diffOf(window("now < deadline"), window("now <= deadline"));
    const text = diffLines(diff).join("\n");
    expect(text).toContain(`at now = "${diff.regions[0]!.witness.now!}"`);
  });

  it("`now - account_opened_at < 30d` against `< 31d`: the witness's instant 30 to 31 days after the opening", () => {
    const diff = diffOf(window("now - account_opened_at < 30d"), window("now - account_opened_at < 31d"));
    expect(diff.undecided).toEqual([]);
    expect(diff.regions).toHaveLength(1);
    const { now, signals } = diff.regions[0]!.witness;
    const apart = Date.parse(now!) - Date.parse(signals["account_opened_at"] as string);
    expect(apart).toBeGreaterThanOrEqual(30 * 86_400_000);
    expect(apart).toBeLessThan(31 * 86_400_000);
  });

  it("`now + 15m > deadline` against `now + 16m > deadline`: exact, a minute's difference", () => {
    const diff = diffOf(window("now + 15m > deadline"), window("now + 16m > deadline"));
    expect(diff.undecided).toEqual([]);
    expect(diff.regions).toHaveLength(1);
    const { now, signals } = diff.regions[0]!.witness;
    const ahead = Date.parse(signals["deadline"] as string) - Date.parse(now!);
    expect(ahead).toBeGreaterThanOrEqual(15 * 60_000);
    expect(ahead).toBeLessThan(16 * 60_000);
  });

  it("a policy that reads `now` against one that does not: `now` is no signal added, and the witness has an instant", () => {
    const diff = diffOf(window("amount > 100"), window("amount > 100 and now > deadline"));
    expect(diff.signals).toEqual([]);
    expect(diff.undecided).toEqual([]);
    expect(diff.regions.map((r) => `${r.old.rule} -> ${r.new.rule}`)).toEqual(["late -> otherwise"]);
    expect(diff.regions[0]!.witness.now).toBeDefined();
  });

  it("the same condition on `now` on both sides is equivalent; policies without `now` have no instant in their witnesses", () => {
    expect(diffOf(window("now > deadline"), window("deadline < now")).result).toBe("equivalent");
    const plain = diffOf(window("amount > 100"), window("amount > 200"));
    expect(plain.regions[0]!.witness).not.toHaveProperty("now");
  });
});
