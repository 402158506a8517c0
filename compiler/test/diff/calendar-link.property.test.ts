/**
 * The link of a timestamp and its calendar fields (diff/calendar-link.ts) against enumeration: generated pairs of
 * policies that bound `t` directly (an interval shorter than a day, one across a clock change of Europe/London or
 * America/New_York, or one longer than a week) and read its weekday, hour and minute of the day. Every constant falls
 * on a quarter hour and the zones' offsets are whole hours, so each condition is constant on each quarter hour: the
 * quarter hours from a week and a day before the interval to a week and a day after it, and instants beyond the zone
 * tables' horizon, meet every region, and the regions the diff reports must be exactly those they find.
 */
import { describe, expect, it } from "vitest";
import { preparePolicy, type Decision, type PreparedPolicy } from "@writ/runtime";
import { diffPolicies } from "../../src/diff/diff.js";
import { random } from "../../src/diff/witness.js";
import { small, versionOf } from "./support/versions.js";

const QUARTER = 900_000;
const DAY = 86_400_000;
const ZONES = ["Europe/London", "America/New_York"] as const;
/** Clock changes of 2026 (UTC): London's spring and autumn, New York's. */
const CHANGES: Record<(typeof ZONES)[number], number[]> = {
  "Europe/London": [Date.parse("2026-03-29T01:00:00Z"), Date.parse("2026-10-25T01:00:00Z")],
  "America/New_York": [Date.parse("2026-03-08T07:00:00Z"), Date.parse("2026-11-01T06:00:00Z")],
};
/** Beyond the horizon (1970 to 2100), where every field faults, and the quarter hours an hour either side of its ends. */
const EDGES = [Date.parse("1970-01-01T00:00:00Z"), Date.parse("2100-01-01T00:00:00Z")];
const BEYOND = [
  "1950-06-01T12:00:00Z",
  "2150-06-01T12:00:00Z",
  ...EDGES.flatMap((e) => [-4, -3, -2, -1, 0, 1, 2, 3].map((q) => new Date(e + q * 900_000).toISOString())),
];

const decided = (d: Decision): string => (d.decided ? d.ruleId : d.fault ? `${d.fault.ruleId} (fault)` : "otherwise");
const named = (o: { rule: string; verdict: string }): string => (o.verdict === "fault" ? `${o.rule} (fault)` : o.rule);
const iso = (ms: number): string => new Date(ms).toISOString();

interface Case {
  readonly zone: string;
  readonly lo: number;
  readonly hi: number;
  readonly old: string;
  readonly new: string;
}

function generate(next: () => number, n: number): Case {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const int = (a: number, b: number): number => a + Math.floor(next() * (b - a + 1));
  const zone = pick(ZONES);
  const kind = n % 3;
  const start = Date.parse("2026-01-01T00:00:00Z") + int(0, 360 * 96) * QUARTER;
  const [lo, hi] =
    kind === 0
      ? [start, start + int(4, 95) * QUARTER]
      : kind === 1
        ? ((c: number) => [c - int(1, pick([8, 120])) * QUARTER, c + int(1, pick([8, 120])) * QUARTER])(pick(CHANGES[zone]))
        : [start, start + int(7 * 96, 12 * 96) * QUARTER];
  // Mostly one reading (`t` in the interval's zone); sometimes `t + 30m`, or the other zone, read together with it.
  const reading = (): [string, string] => [pick(["t", "t", "t", "t + 30m"]), next() < 0.8 ? zone : pick(ZONES)];
  // Across a clock change, hours and minutes near the change's local time (01:00 to 03:00), where an offset wrong by
  // an hour would show.
  const [hours, quarters] =
    kind === 1
      ? [
          [0, 4],
          [0, 16],
        ]
      : [
          [0, 15],
          [0, 95],
        ];
  const calendar = (): string => {
    const [instant, zone] = reading();
    const field = pick([
      ...(kind === 1 ? [] : [() => `weekday(${instant}, "${zone}") ${pick(["==", ">=", "<="])} ${int(1, 7)}`]),
      () => `local_hour(${instant}, "${zone}") in ${((a) => `${a}..${a + int(0, kind === 1 ? 1 : 8)}`)(int(hours[0]!, hours[1]!))}`,
      () => `local_minute_of_day(${instant}, "${zone}") ${pick(["<", ">="])} ${int(quarters[0]!, quarters[1]!) * 15}`,
    ])();
    return next() < 0.25 ? `not (${field})` : field;
  };
  const inside = (): number => lo + int(0, (hi - lo) / QUARTER) * QUARTER;
  // Across a clock change every rule holds only within the interval, so the regions are there or nowhere.
  const bound = (): string =>
    pick([
      () => `t >= "${iso(lo)}" and t < "${iso(hi)}"`,
      () => (kind === 1 ? `t >= "${iso(lo)}" and t < "${iso(inside())}"` : `t ${pick(["<", ">="])} "${iso(inside())}"`),
      () => `t >= "${iso(inside())}" and t < "${iso(hi)}"`,
    ])();
  const rule = (i: number): string => {
    const when = kind === 1 || next() < 0.8 ? `${bound()} and ${calendar()}` : calendar();
    return `rule r${i} when ${when} ${pick(["reject", "escalate"])} "r${i}"`;
  };
  const rules = [rule(0), rule(1), ...(next() < 0.5 ? [rule(2)] : [])];
  // The new version: a rule rewritten, or one dropped, or two swapped.
  const edited = [...rules];
  const at = int(0, rules.length - 1);
  const edit = int(0, 2);
  if (edit === 0) edited[at] = rule(at);
  else if (edit === 1) edited.splice(at, 1);
  else edited.reverse();
  return { zone, lo, hi, old: rules.join("\n"), new: edited.join("\n") };
}

/** The pairs of outcomes that differ somewhere on the quarter hours around the interval and beyond the horizon. */
function enumerated(c: Case, a: PreparedPolicy, b: PreparedPolicy): string[] {
  const found = new Set<string>();
  const instants = [...BEYOND];
  for (let t = c.lo - 8 * DAY; t <= c.hi + 8 * DAY; t += QUARTER) instants.push(iso(t));
  for (const t of instants) {
    const [x, y] = [a.evaluate({ t }), b.evaluate({ t })];
    // A rule whose verdict or reason changed decides differently under the same name.
    if (decided(x) !== decided(y) || (x.decided && y.decided && (x.verdict !== y.verdict || x.reason !== y.reason)))
      found.add(`${decided(x)} -> ${decided(y)}`);
  }
  return [...found].sort();
}

describe("calendar fields linked to a direct bound, against enumeration", () => {
  it("generated pairs: the regions are exactly those enumeration finds, every witness decided as reported, none undecided", () => {
    const next = random(20261207);
    let shown = 0;
    for (let n = 0; n < 48; n++) {
      const c = generate(next, n);
      const [old, neu] = [versionOf(small("  t: timestamp", c.old)), versionOf(small("  t: timestamp", c.new))];
      const diff = diffPolicies({ old, new: neu });
      const [a, b] = [preparePolicy(old.ir), preparePolicy(neu.ir)];
      const context = `${c.zone} ${iso(c.lo)} to ${iso(c.hi)}\nold:\n${c.old}\nnew:\n${c.new}`;
      expect(diff.undecided, context).toEqual([]);
      for (const r of diff.regions) {
        expect(decided(a.evaluate(r.witness.signals)), context).toBe(named(r.old));
        expect(decided(b.evaluate(r.witness.signals)), context).toBe(named(r.new));
      }
      const reported = diff.regions.map((r) => `${named(r.old)} -> ${named(r.new)}`).sort();
      expect(reported, context).toEqual(enumerated(c, a, b));
      shown += reported.length;
    }
    // The generator makes differences, not only equivalent pairs.
    expect(shown).toBeGreaterThan(30);
  });
});
