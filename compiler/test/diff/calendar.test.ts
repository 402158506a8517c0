/**
 * `writ diff` on calendar fields in a zone (diff/calendar.ts): the fields of one instant in one zone are its minute of
 * the local week, so windows of weekdays, hours and minutes are compared exactly, with witnesses run through both
 * versions; other readings are listed as undecided with the reason.
 */
import { describe, expect, it } from "vitest";
import { preparePolicy, type Decision, type PolicyIr } from "@writ/runtime";
import { diffPolicies } from "../../src/diff/diff.js";
import type { PolicyVersion } from "../../src/diff/space.js";
import { small, versionOf } from "./support/versions.js";

const SIGNALS = "  amount: integer >= 0\n  requested_at: timestamp\n  opened_at: timestamp";
const decided = (d: Decision): string => (d.decided ? d.ruleId : d.fault ? `${d.fault.ruleId} (fault)` : "undecided");
const named = (o: { rule: string; verdict: string }): string => (o.verdict === "fault" ? `${o.rule} (fault)` : o.rule);

function diffOf(oldRules: string, newRules: string, signals = SIGNALS) {
  const [old, next] = [versionOf(small(signals, oldRules)), versionOf(small(signals, newRules))];
  const diff = diffPolicies({ old, new: next });
  for (const r of diff.regions) {
    expect(decided(preparePolicy(old.ir).evaluate(r.witness.oldSignals ?? r.witness.signals))).toBe(named(r.old));
    expect(decided(preparePolicy(next.ir).evaluate(r.witness.signals))).toBe(named(r.new));
  }
  return diff;
}

const pairs = (diff: ReturnType<typeof diffOf>) => diff.regions.map((r) => `${named(r.old)} -> ${named(r.new)}`).sort();
const local = (t: unknown, zone: string) =>
  new Intl.DateTimeFormat("en-GB", { timeZone: zone, weekday: "short", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(
    Date.parse(t as string),
  );

describe("calendar fields in writ diff", () => {
  const HOURS = (lo: number, hi: number) =>
    `rule after_hours when local_hour(requested_at, "America/New_York") not in ${lo}..${hi} escalate "after hours"`;

  it("a business-hours window moved by an hour: both edges found, each witness at the local hour between", () => {
    const diff = diffOf(HOURS(9, 16), HOURS(10, 17));
    expect(diff.undecided).toEqual([]);
    expect(pairs(diff)).toEqual(["after_hours -> otherwise", "otherwise -> after_hours"]);
    const at = Object.fromEntries(
      diff.regions.map((r) => [`${r.old.rule} -> ${r.new.rule}`, local(r.witness.signals["requested_at"], "America/New_York")]),
    );
    expect(at["after_hours -> otherwise"]).toMatch(/ 17:\d\d$/);
    expect(at["otherwise -> after_hours"]).toMatch(/ 09:\d\d$/);
  });

  it("the same window written with other fields is equivalent: `local_hour in 9..16` is minutes 540 to 1019", () => {
    const diff = diffOf(
      HOURS(9, 16),
      'rule after_hours when local_minute_of_day(requested_at, "America/New_York") not in 540..1019 escalate "after hours"',
    );
    expect(diff.result).toBe("equivalent");
  });

  it("weekday and hour of one instant are related exactly: a weekend rule added before an hours rule", () => {
    const weekend = 'rule weekend when weekday(requested_at, "Europe/London") >= 6 reject "weekend"';
    const hours = 'rule hours when local_hour(requested_at, "Europe/London") in 9..16 approve "hours"';
    const diff = diffOf(hours, `${weekend}\n${hours}`);
    expect(diff.undecided).toEqual([]);
    // Beyond the horizon the first rule faults: in the new version that is the weekend rule.
    expect(pairs(diff)).toEqual(["hours (fault) -> weekend (fault)", "hours -> weekend", "otherwise -> weekend"]);
    for (const r of diff.regions.filter((r) => r.new.verdict !== "fault"))
      expect(local(r.witness.signals["requested_at"], "Europe/London")).toMatch(/^(Sat|Sun)/);
    const inHours = diff.regions.find((r) => r.old.rule === "hours")!;
    expect(local(inHours.witness.signals["requested_at"], "Europe/London")).toMatch(/ (09|1[0-6]):/);
  });

  it("one instant is one weekday: Monday against Tuesday differs only where one of them holds", () => {
    const diff = diffOf(
      'rule r when weekday(requested_at + 30d, "UTC") == 1 reject "monday"',
      'rule r when weekday(requested_at + 30d, "UTC") == 2 reject "tuesday"',
    );
    expect(diff.undecided).toEqual([]);
    // Monday in one and Tuesday in the other is no instant: the two rules never both decide; beyond the horizon both fault alike.
    expect(pairs(diff)).toEqual(["otherwise -> r", "r -> otherwise"]);
  });

  it("a timestamp also compared with an instant: its fields and the comparison are linked, decided exactly", () => {
    const old = 'rule r when local_hour(requested_at, "UTC") < 9 and requested_at > "2026-01-01T00:00:00Z" escalate "early"';
    const diff = diffOf(old, old.replace("< 9", "< 10"));
    expect(diff.undecided).toEqual([]);
    expect(pairs(diff)).toEqual(["otherwise -> r"]);
    const at = diff.regions[0]!.witness.signals["requested_at"] as string;
    expect(Date.parse(at)).toBeGreaterThan(Date.parse("2026-01-01T00:00:00Z"));
    expect(local(at, "UTC")).toMatch(/ 09:/);
  });

  it("one timestamp read in two zones and at two instants: the readings are decided together", () => {
    const rule = (h: number) =>
      `rule r when local_hour(requested_at, "UTC") < ${h} and weekday(requested_at, "America/New_York") == 1 and local_hour(requested_at + 1h, "Europe/London") >= 8 escalate "early"`;
    const diff = diffOf(rule(9), rule(10));
    expect(diff.undecided).toEqual([]);
    expect(pairs(diff)).toEqual(["otherwise -> r"]);
    const at = diff.regions[0]!.witness.signals["requested_at"] as string;
    expect(local(at, "UTC")).toMatch(/ 09:/);
    expect(local(at, "America/New_York")).toMatch(/^Mon/);
    // Tuesday in UTC and Monday in New York (UTC-5, or -4 in summer) is 00:00 to 04:59 UTC at most: from 06:00 none,
    // from 04:00 the winter's last hour.
    const never = diffOf(
      'rule r when weekday(requested_at, "UTC") == 2 and weekday(requested_at, "America/New_York") == 1 and local_hour(requested_at, "UTC") >= 6 escalate "x"',
      'rule r when weekday(requested_at, "UTC") == 2 and weekday(requested_at, "America/New_York") == 1 and local_hour(requested_at, "UTC") >= 4 escalate "x"',
    );
    expect(never.undecided).toEqual([]);
    expect(pairs(never)).toEqual(["otherwise -> r"]);
    expect(local(never.regions[0]!.witness.signals["requested_at"] as string, "UTC")).toMatch(/^Tue 04:/);
  });

  it("a reading that is not modelled is listed as undecided, with the reason", () => {
    const old =
      'rule r when local_hour(requested_at, "UTC") < 9 and local_hour(requested_at, "UTC") == local_hour(opened_at, "UTC") escalate "x"';
    const diff = diffOf(old, old.replace("< 9", "< 10"));
    expect(diff.result === "different" || diff.undecided.length > 0).toBe(true);
    const reasons = diff.undecided.flatMap((u) => u.reasons).join("\n");
    expect(reasons).toContain("a calendar field read so is not modelled: it relates two or more signals");
  });

  it("a new tz release that moves a zone's clock change: the fields differ, found at the change", () => {
    const source = small(SIGNALS, 'rule r when local_hour(requested_at, "Europe/London") < 9 escalate "early"');
    const old = versionOf(source);
    const tables = old.ir.zones!.tables;
    const moved: PolicyIr = {
      ...old.ir,
      zones: { ...old.ir.zones!, tzdata: "2099z", tables: { "Europe/London": [...tables["Europe/London"]!.slice(0, -1)] } },
    };
    const diff = diffPolicies({ old, new: { ...old, ir: moved } as PolicyVersion });
    expect(diff.result).toBe("different");
    // Without the last change (back to UTC+00:00 in October 2099) London stays on summer time: 08:30 there is 07:30
    // UTC, so the new version calls 08:00 to 09:00 UTC early where the old does not; witnesses are found at the change.
    const last = tables["Europe/London"]!.at(-1)![0] * 1000;
    for (const r of diff.regions) expect(Date.parse(r.witness.signals["requested_at"] as string)).toBeGreaterThanOrEqual(last);
    expect(diff.regions.map((r) => [r.old.rule, r.new.rule]).sort()).toEqual([
      ["otherwise", "r"],
      ["r", "otherwise"],
    ]);
    expect(diff.undecided).toEqual([]);
  });
});
