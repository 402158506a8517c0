/**
 * Calendar fields in a named zone (zones.ts, `calendar` nodes in apply.ts): the 2026 clock changes of Europe/London and
 * America/New_York read from tables written here by hand from the tz database (the compiler's tables are checked
 * against ICU in compiler/test/zones.test.ts), the fault outside the horizon, the explanation's offset, and the tables
 * a runtime refuses when the IR is prepared.
 */
import { describe, expect, it } from "vitest";
import {
  IrUnsupportedError,
  explain,
  offsetAt,
  offsetText,
  preparePolicy,
  prepareZones,
  type CalendarOp,
  type Decision,
  type IrExpr,
  type IrZones,
  type PolicyIr,
} from "../../src/index.js";

const at = (iso: string): number => Date.parse(iso) / 1000;
const HORIZON: [number, number] = [at("2026-01-01T00:00:00Z"), at("2027-01-01T00:00:00Z")];
/** 2026: London forward at 01:00 UTC on 29 March, back at 01:00 UTC on 25 October; New York 07:00 UTC 8 March, 06:00 UTC 1 November. */
const ZONES: IrZones = {
  tzdata: "test",
  horizon: HORIZON,
  tables: {
    "Europe/London": [
      [HORIZON[0], 0],
      [at("2026-03-29T01:00:00Z"), 3600],
      [at("2026-10-25T01:00:00Z"), 0],
    ],
    "America/New_York": [
      [HORIZON[0], -18000],
      [at("2026-03-08T07:00:00Z"), -14400],
      [at("2026-11-01T06:00:00Z"), -18000],
    ],
  },
};

const field = (fn: CalendarOp, zone: string): IrExpr => ({ op: "calendar", fn, arg: { op: "signal", name: "t" }, zone });

function policy(when: IrExpr, zones: IrZones = ZONES): PolicyIr {
  return {
    irVersion: 2,
    policyId: "t",
    version: "1.0.0",
    governs: { action: "a", binding: [] },
    signals: { t: { type: "timestamp", optional: true } },
    rules: [{ id: "r", verdict: "reject", reason: "r", when }],
    otherwise: { verdict: "approve", reason: "ok" },
    zones,
  };
}

/** The value of a calendar field for instant `t`, read through a rule `field == v` for each v (as a policy reads it). */
function valueOf(fn: CalendarOp, zone: string, t: string): number {
  const ir = policy(field(fn, zone));
  const operand = explain(ir, { t }).explanation.rules[0]!.condition;
  const decision = preparePolicy(
    policy({ op: "cmp", cmp: "eq", kind: "number", left: field(fn, zone), right: { op: "lit", value: operand.value! } }),
  ).evaluate({ t });
  expect(decision).toMatchObject({ decided: true, verdict: "reject" });
  return operand.value as number;
}

describe("the 2026 clock changes", () => {
  // [instant, local hour, minute of day, ISO weekday]: the hour before, the skipped or repeated hour, the hour after.
  const CASES: Record<string, readonly (readonly [string, number, number, number])[]> = {
    "Europe/London forward, 29 March 01:00 UTC (01:00 to 02:00 local is skipped)": [
      ["2026-03-29T00:30:00Z", 0, 30, 7],
      ["2026-03-29T00:59:59Z", 0, 59, 7],
      ["2026-03-29T01:00:00Z", 2, 120, 7],
      ["2026-03-29T01:30:00Z", 2, 150, 7],
      ["2026-03-29T02:30:00Z", 3, 210, 7],
    ],
    "Europe/London back, 25 October 01:00 UTC (01:00 to 02:00 local is repeated)": [
      ["2026-10-24T23:30:00Z", 0, 30, 7],
      ["2026-10-25T00:30:00Z", 1, 90, 7],
      ["2026-10-25T00:59:59Z", 1, 119, 7],
      ["2026-10-25T01:00:00Z", 1, 60, 7],
      ["2026-10-25T01:30:00Z", 1, 90, 7],
      ["2026-10-25T02:30:00Z", 2, 150, 7],
    ],
    "America/New_York forward, 8 March 07:00 UTC (02:00 to 03:00 local is skipped)": [
      ["2026-03-08T06:30:00Z", 1, 90, 7],
      ["2026-03-08T06:59:59Z", 1, 119, 7],
      ["2026-03-08T07:00:00Z", 3, 180, 7],
      ["2026-03-08T07:30:00Z", 3, 210, 7],
      ["2026-03-08T08:30:00Z", 4, 270, 7],
    ],
    "America/New_York back, 1 November 06:00 UTC (01:00 to 02:00 local is repeated)": [
      ["2026-11-01T04:30:00Z", 0, 30, 7],
      ["2026-11-01T05:30:00Z", 1, 90, 7],
      ["2026-11-01T05:59:59Z", 1, 119, 7],
      ["2026-11-01T06:00:00Z", 1, 60, 7],
      ["2026-11-01T06:30:00Z", 1, 90, 7],
      ["2026-11-01T07:30:00Z", 2, 150, 7],
    ],
  };
  for (const [change, rows] of Object.entries(CASES)) {
    const zone = change.split(" ")[0]!;
    it(change, () => {
      for (const [t, hour, minute, weekday] of rows) {
        expect([t, valueOf("local_hour", zone, t), valueOf("local_minute_of_day", zone, t), valueOf("weekday", zone, t)]).toEqual([
          t,
          hour,
          minute,
          weekday,
        ]);
      }
    });
  }

  it("the weekday turns at local midnight, not at UTC midnight", () => {
    // Saturday 28 March 2026 23:30 in New York (UTC-04:00) is Sunday 03:30 UTC; in London (UTC+00:00) Saturday.
    expect(valueOf("weekday", "America/New_York", "2026-03-29T03:30:00Z")).toBe(6);
    expect(valueOf("weekday", "Europe/London", "2026-03-28T23:30:00Z")).toBe(6);
    // Sunday 23:30 in London during summer time is Sunday 22:30 UTC; 23:30 UTC is already Monday there.
    expect(valueOf("weekday", "Europe/London", "2026-06-07T22:30:00Z")).toBe(7);
    expect(valueOf("weekday", "Europe/London", "2026-06-07T23:30:00Z")).toBe(1);
  });

  it("an offset in a timestamp does not matter: the instant does", () => {
    expect(valueOf("local_hour", "Europe/London", "2026-07-01T09:00:00+02:00")).toBe(8);
    expect(valueOf("local_hour", "Europe/London", "2026-07-01T07:00:00Z")).toBe(8);
  });
});

describe("outside the horizon, and unknown operands", () => {
  const decide = (t: string | undefined): Decision => {
    const ir = policy({ op: "cmp", cmp: "ge", kind: "number", left: field("weekday", "Europe/London"), right: { op: "lit", value: 6 } });
    const signals = t === undefined ? {} : { t };
    const decision = preparePolicy(ir).evaluate(signals);
    expect(explain(ir, signals).decision).toEqual(decision);
    return decision;
  };

  it("an instant before or at the end of the horizon is a fault (EVAL-004), never a verdict", () => {
    for (const t of ["2025-12-31T23:59:59.999Z", "2027-01-01T00:00:00Z", "9999-12-31T23:59:59Z"]) {
      expect(decide(t)).toEqual({
        decided: false,
        fault: {
          code: "EVAL-004",
          ruleId: "r",
          expr: 'weekday(t, "Europe/London")',
          message: 'instant outside the zone table\'s horizon in `weekday(t, "Europe/London")`',
        },
      });
    }
    expect(decide("2026-12-31T23:59:59.999Z")).toMatchObject({ decided: true, ruleId: "otherwise" });
  });

  it("an absent timestamp leaves the field unknown, so the rule does not fire", () => {
    expect(decide(undefined)).toMatchObject({ decided: true, ruleId: "otherwise" });
  });

  it("the explanation gives the field's value with the offset its local time was read at", () => {
    const ir = policy(field("local_hour", "Europe/London"));
    const condition = explain(ir, { t: "2026-07-01T08:00:00Z" }).explanation.rules[0]!.condition;
    expect(condition).toEqual({
      expr: 'local_hour(t, "Europe/London")',
      value: 9,
      offset: "UTC+01:00",
      operands: [{ expr: "t", value: "2026-07-01T08:00:00Z" }],
    });
    const faulted = explain(ir, { t: "2030-01-01T00:00:00Z" }).explanation.rules[0]!.condition;
    expect(faulted).toMatchObject({ value: null, fault: "EVAL-004" });
    expect(faulted.offset).toBeUndefined();
  });
});

describe("offsets", () => {
  it("are found by binary search at every transition, to the second", () => {
    const table = prepareZones(ZONES).get("Europe/London")!;
    expect(offsetAt(table, Date.parse("2026-03-29T00:59:59.999Z"))).toBe(0);
    expect(offsetAt(table, Date.parse("2026-03-29T01:00:00Z"))).toBe(3600);
    expect(offsetAt(table, Date.parse("2026-10-25T00:59:59Z"))).toBe(3600);
    expect(offsetAt(table, Date.parse("2026-10-25T01:00:00Z"))).toBe(0);
    expect(offsetAt(table, HORIZON[0] * 1000 - 1)).toBeNull();
    expect(offsetAt(table, HORIZON[1] * 1000)).toBeNull();
  });

  it("are written as UTC±hh:mm, with seconds where they have some", () => {
    expect([3600, 0, -18000, -2670, 19800].map(offsetText)).toEqual(["UTC+01:00", "UTC+00:00", "UTC-05:00", "UTC-00:44:30", "UTC+05:30"]);
  });
});

describe("zone tables a runtime refuses when the IR is prepared", () => {
  const when = field("local_hour", "Europe/London");
  const london = ZONES.tables["Europe/London"]!;
  const refused: [string, unknown, RegExp][] = [
    [
      "no table for a zone a condition names",
      { ...ZONES, tables: { "America/New_York": ZONES.tables["America/New_York"] } },
      /`Europe\/London` has no table/,
    ],
    ["an unsorted table", { ...ZONES, tables: { "Europe/London": [london[0], london[2], london[1]] } }, /not sorted/],
    ["a table that does not start at the horizon", { ...ZONES, tables: { "Europe/London": london.slice(1) } }, /not sorted/],
    ["a transition past the horizon", { ...ZONES, tables: { "Europe/London": [...london, [HORIZON[1], 0]] } }, /not sorted/],
    ["an offset beyond 26 hours", { ...ZONES, tables: { "Europe/London": [[HORIZON[0], 100_000]] } }, /malformed pair at 0/],
    ["a pair that is not two whole numbers", { ...ZONES, tables: { "Europe/London": [[HORIZON[0], 0, 1]] } }, /malformed pair at 0/],
    ["an empty table", { ...ZONES, tables: { "Europe/London": [] } }, /hold no transitions/],
    ["no horizon", { ...ZONES, horizon: [5, 5] }, /no horizon/],
    ["no tzdata release", { ...ZONES, tzdata: "" }, /tzdata/],
    ["no zones at all", undefined, /`Europe\/London` has no table/],
  ];
  for (const [what, zones, message] of refused) {
    it(what, () => {
      const ir = { ...policy(when), zones } as PolicyIr;
      let error: unknown;
      try {
        preparePolicy(ir);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(IrUnsupportedError);
      expect((error as Error).message).toMatch(message);
    });
  }
});
