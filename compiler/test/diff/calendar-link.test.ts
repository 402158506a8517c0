/**
 * `writ diff` where a timestamp is read both directly and through calendar fields (diff/calendar-link.ts): the shipped
 * versions that read `now` so (payments.transfer 1.4.0, deploy.production 1.1.0) against the versions they replaced
 * leave nothing undecided, and every witness is decided as reported at its instant.
 */
import { describe, expect, it } from "vitest";
import { preparePolicy, type Decision } from "@writ/runtime";
import { diffPolicies } from "../../src/diff/diff.js";
import { shippedSource, small, versionOf } from "./support/versions.js";

const decided = (d: Decision): string => (d.decided ? d.ruleId : d.fault ? `${d.fault.ruleId} (fault)` : "undecided");
const named = (o: { rule: string; verdict: string }): string => (o.verdict === "fault" ? `${o.rule} (fault)` : o.rule);

function shippedDiff(policy: string, from: string, to: string) {
  const [old, next] = [from, to].map((v) => versionOf(shippedSource(`policies/${policy}/${v}/policy.writ`))) as [
    ReturnType<typeof versionOf>,
    ReturnType<typeof versionOf>,
  ];
  const diff = diffPolicies({ old, new: next });
  for (const r of diff.regions) {
    const at = r.witness.now === undefined ? undefined : new Date(r.witness.now);
    expect(decided(preparePolicy(old.ir).evaluate(r.witness.oldSignals ?? r.witness.signals, at))).toBe(named(r.old));
    expect(decided(preparePolicy(next.ir).evaluate(r.witness.signals, at))).toBe(named(r.new));
  }
  return diff;
}

const local = (t: string, zone: string) =>
  new Intl.DateTimeFormat("en-GB", { timeZone: zone, weekday: "short", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(
    Date.parse(t),
  );

describe("a timestamp read directly and through calendar fields", () => {
  it("payments.transfer 1.3.0 -> 1.4.0: every region has a witness, nothing undecided", () => {
    const diff = shippedDiff("payments.transfer", "1.3.0", "1.4.0");
    expect(diff.undecided).toEqual([]);
    expect(diff.regions).toHaveLength(20);
    expect(diff.result).toBe("different");
    // The old version's new-account rule against the new one's after-hours rule: a young account, outside London hours.
    const afterHours = diff.regions.filter((r) => r.new.rule === "after_hours" && r.new.verdict !== "fault");
    expect(afterHours.length).toBeGreaterThan(0);
    for (const r of afterHours) expect(local(r.witness.now!, "Europe/London")).toMatch(/^(Sat|Sun)|\b(0\d|1[7-9]|2\d):/);
  });

  it("deploy.production 1.0.0 -> 1.1.0: every region has a witness, nothing undecided, the freeze's and the window's included", () => {
    const diff = shippedDiff("deploy.production", "1.0.0", "1.1.0");
    expect(diff.undecided).toEqual([]);
    expect(diff.regions).toHaveLength(57);
    const pairs = diff.regions.map((r) => `${named(r.old)} -> ${named(r.new)}`);
    expect(pairs).toEqual(expect.arrayContaining(["window_closed -> friday_afternoon", "freeze -> friday_afternoon"]));
    for (const r of diff.regions.filter((r) => r.new.rule === "friday_afternoon"))
      expect(local(r.witness.now!, "Europe/Berlin")).toMatch(/^Fri (1[2-9]|2\d):/);
    // The old version's freeze reads `requested_at`, the new one's `now`: a request inside the old freeze, decided at a
    // Friday afternoon outside the new one.
    const frozen = diff.regions.find((r) => r.old.rule === "freeze" && r.new.rule === "friday_afternoon")!;
    const requested = Date.parse((frozen.witness.oldSignals ?? frozen.witness.signals)["requested_at"] as string);
    expect(requested).toBeGreaterThanOrEqual(Date.parse("2025-12-19T17:00:00Z"));
    expect(requested).toBeLessThan(Date.parse("2026-01-05T07:00:00Z"));
  });

  it("an interval across a spring-forward night reaches no skipped hour: 01:00 in London on 29 March 2026 is no instant", () => {
    const night = (hours: string) =>
      versionOf(
        small(
          "  t: timestamp",
          `rule r when t >= "2026-03-29T00:00:00Z" and t < "2026-03-29T03:00:00Z" and local_hour(t, "Europe/London") in ${hours} reject "r"`,
        ),
      );
    // 00:00 to 00:59 GMT, then 02:00 to 03:59 BST: an hour 1 is never read, so `in 1..1` against `in 0..0` differs only at 0.
    const skipped = diffPolicies({ old: night("1..1"), new: night("0..0") });
    expect(skipped.undecided).toEqual([]);
    expect(skipped.regions.map((r) => `${r.old.rule} -> ${r.new.rule}`)).toEqual(["otherwise -> r"]);
    const after = diffPolicies({ old: night("3..3"), new: night("0..0") });
    expect(after.undecided).toEqual([]);
    const late = after.regions.find((r) => r.old.rule === "r")!;
    expect(local(late.witness.signals["t"] as string, "Europe/London")).toBe("Sun 03:00");
  });
});
