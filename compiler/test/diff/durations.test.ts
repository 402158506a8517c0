/**
 * `writ diff` on arithmetic on time (issue 41 item 1): `timestamp ± duration` and `timestamp - timestamp` are linear
 * forms in milliseconds, so a changed duration is found exactly, with a witness run through both versions.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { preparePolicy, type Decision } from "@writ/runtime";
import { diffPolicies } from "../../src/diff/diff.js";
import { small, versionOf } from "./support/versions.js";

const DAY = 86_400_000;
const SIGNALS = "  amount: integer >= 0\n  requested_at: timestamp\n  account_opened_at: timestamp";
const newAccount = (window: string): string =>
  small(SIGNALS, `rule new_account when requested_at < ${window} and amount >= 1000 escalate "new account"`);

const decided = (d: Decision): string => (d.decided ? d.ruleId : d.fault ? "fault" : "undecided");

function diffOf(oldSource: string, newSource: string) {
  const [old, next] = [versionOf(oldSource), versionOf(newSource)];
  const diff = diffPolicies({ old, new: next });
  for (const r of diff.regions) {
    expect(decided(preparePolicy(old.ir).evaluate(r.witness.oldSignals ?? r.witness.signals))).toBe(r.old.rule);
    expect(decided(preparePolicy(next.ir).evaluate(r.witness.signals))).toBe(r.new.rule);
  }
  return diff;
}

/** The milliseconds between the witness's two instants. */
const apart = (signals: Readonly<Record<string, unknown>>): number =>
  Date.parse(signals["requested_at"] as string) - Date.parse(signals["account_opened_at"] as string);

describe("durations in writ diff", () => {
  it("`+ 30d` against `+ 31d`: one region, its witness's instants 30 to 31 days apart, nothing undecided", () => {
    const diff = diffOf(newAccount("account_opened_at + 30d"), newAccount("account_opened_at + 31d"));
    expect(diff.result).toBe("different");
    expect(diff.undecided).toEqual([]);
    expect(diff.regions.map((r) => `${r.old.rule} -> ${r.new.rule}`)).toEqual(["otherwise -> new_account"]);
    const ms = apart(diff.regions[0]!.witness.signals);
    expect(ms).toBeGreaterThanOrEqual(30 * DAY);
    expect(ms).toBeLessThan(31 * DAY);
  });

  it("any two windows, in any unit: the witness lies between them", () => {
    const units = [
      ["ms", 1],
      ["s", 1000],
      ["m", 60_000],
      ["h", 3_600_000],
      ["d", DAY],
    ] as const;
    fc.assert(
      fc.property(fc.constantFrom(...units), fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 1, max: 5000 }), ([unit, ms], a, b) => {
        fc.pre(a !== b);
        const diff = diffOf(newAccount(`account_opened_at + ${a}${unit}`), newAccount(`account_opened_at + ${b}${unit}`));
        expect(diff.undecided).toEqual([]);
        expect(diff.regions).toHaveLength(1);
        const between = apart(diff.regions[0]!.witness.signals);
        expect(between).toBeGreaterThanOrEqual(Math.min(a, b) * ms);
        expect(between).toBeLessThan(Math.max(a, b) * ms);
      }),
      { numRuns: 15 },
    );
  });

  it("the same window written three ways is equivalent, nothing undecided", () => {
    const base = newAccount("account_opened_at + 30d");
    for (const same of ["account_opened_at + 720h", "30d + account_opened_at"]) {
      expect(diffOf(base, newAccount(same)), same).toMatchObject({ result: "equivalent", regions: [], undecided: [] });
    }
    const rule = (condition: string) => small(SIGNALS, `rule new_account when ${condition} and amount >= 1000 escalate "new account"`);
    for (const same of ["requested_at - account_opened_at < 30d", "requested_at - 30d < account_opened_at"]) {
      expect(diffOf(base, rule(same)), same).toMatchObject({ result: "equivalent", regions: [], undecided: [] });
    }
  });

  it("one signal and a duration: exact at the instant, nothing undecided", () => {
    const rule = (condition: string) => small("  requested_at: timestamp", `rule late when ${condition} reject "late"`);
    const same = diffOf(rule('requested_at - 1h > "2026-06-01T00:00:00Z"'), rule('requested_at > "2026-06-01T01:00:00Z"'));
    expect(same).toMatchObject({ result: "equivalent", regions: [], undecided: [] });
    const moved = diffOf(rule('requested_at - 1h > "2026-06-01T00:00:00Z"'), rule('requested_at - 1h >= "2026-06-01T00:00:00Z"'));
    expect(moved.undecided).toEqual([]);
    expect(moved.regions.map((r) => r.witness.signals["requested_at"])).toEqual(["2026-06-01T01:00:00Z"]);
  });
});

describe("a duration in a range", () => {
  it("`requested_at - account_opened_at in 1h..2h` is `>= 1h and <= 2h`, and `1h..3h` differs by the third hour", () => {
    const rule = (c: string) => small(SIGNALS, `rule r when ${c} escalate "r"`);
    const same = diffOf(
      rule("requested_at - account_opened_at in 1h..2h"),
      rule("requested_at - account_opened_at >= 1h and requested_at - account_opened_at <= 2h"),
    );
    expect(same).toMatchObject({ result: "equivalent", undecided: [] });
    const wider = diffOf(rule("requested_at - account_opened_at in 1h..2h"), rule("requested_at - account_opened_at in 1h..3h"));
    expect(wider.undecided).toEqual([]);
    expect(wider.regions.map((r) => `${r.old.rule} -> ${r.new.rule}`)).toEqual(["otherwise -> r"]);
    const ms = apart(wider.regions[0]!.witness.signals);
    expect(ms > 2 * 3_600_000 && ms <= 3 * 3_600_000).toBe(true);
  });
});
