/**
 * Calendar fields in a named zone, from the source: the tables the compiler embeds (taken from ICU, zones/tz.ts), the
 * fields they give against Intl.DateTimeFormat on random instants, the zone names refused (E513), and `writ eval` at
 * each 2026 clock change of Europe/London and America/New_York.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compile } from "@writ/compiler";
import { ZONE_HORIZON, explain, preparePolicy, type CalendarOp, type PolicyIr } from "@writ/runtime";
import { scratchCli } from "./support/cli-run.js";

const header = 'policy "t.zones" version "1.0.0"\ngoverns "deploy"\nsignals {\n  requested_at: timestamp\n}\n';

function irOf(rules: string): PolicyIr {
  const result = compile("t.writ", `${header}${rules}\notherwise approve "ok"\n`);
  expect(result.errors).toEqual([]);
  return result.ir!;
}

const at = (iso: string): number => Date.parse(iso) / 1000;

describe("the tables a bundle embeds", () => {
  it("hold each zone a condition names, once, with the horizon and the tz release they come from", () => {
    const ir = irOf(
      'const HOME = "Europe/London"\nrule a when weekday(requested_at, HOME) >= 6 reject "a"\nrule b when local_hour(requested_at + 1h, "America/New_York") < 9 or local_hour(requested_at, HOME) > 17 escalate "b"',
    );
    expect(ir.zones!.tzdata).toBe(process.versions.tz);
    expect(ir.zones!.horizon).toEqual(ZONE_HORIZON);
    expect(Object.keys(ir.zones!.tables)).toEqual(["America/New_York", "Europe/London"]);
    const pairs = (zone: string, year: number) =>
      ir.zones!.tables[zone]!.filter(([s]) => s >= Date.UTC(year, 0, 1) / 1000 && s < Date.UTC(year + 1, 0, 1) / 1000);
    expect(pairs("Europe/London", 2026)).toEqual([
      [at("2026-03-29T01:00:00Z"), 3600],
      [at("2026-10-25T01:00:00Z"), 0],
    ]);
    expect(pairs("America/New_York", 2026)).toEqual([
      [at("2026-03-08T07:00:00Z"), -14400],
      [at("2026-11-01T06:00:00Z"), -18000],
    ]);
    // 1970: London kept British Standard Time (UTC+01:00) all year, until 31 October 1971.
    expect(ir.zones!.tables["Europe/London"]!.slice(0, 2)).toEqual([
      [0, 3600],
      [at("1971-10-31T02:00:00Z"), 0],
    ]);
  });

  it("a policy that names no zone has no `zones`, and a rule lowering drops does not bring one", () => {
    expect(irOf('rule a when requested_at > "2026-01-01T00:00:00Z" reject "a"').zones).toBeUndefined();
    expect(Object.keys(irOf('rule a when true reject "a"\nrule b when weekday(requested_at, "UTC") == 1 reject "b"'))).not.toContain(
      "zones",
    );
  });
});

const clocks = new Map<string, Intl.DateTimeFormat>();
/** The field as Intl.DateTimeFormat reads the zone's clock. */
function intlField(fn: CalendarOp, ms: number, zone: string): number {
  let clock = clocks.get(zone);
  if (clock === undefined) {
    clock = new Intl.DateTimeFormat("en-US", { timeZone: zone, hourCycle: "h23", weekday: "short", hour: "numeric", minute: "numeric" });
    clocks.set(zone, clock);
  }
  const parts = Object.fromEntries(clock.formatToParts(ms).map((p) => [p.type, p.value]));
  const hour = Number(parts["hour"]);
  if (fn === "local_hour") return hour;
  if (fn === "local_minute_of_day") return hour * 60 + Number(parts["minute"]);
  return ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].indexOf(parts["weekday"]!) + 1;
}

describe("property: the fields equal Intl.DateTimeFormat's", () => {
  // Summer time of 30 minutes, an offset of 5:45, one with seconds until 1972, a skipped day (Apia, 2011), no DST.
  const ZONES = [
    "Europe/London",
    "America/New_York",
    "Australia/Lord_Howe",
    "Asia/Kathmandu",
    "Africa/Monrovia",
    "Pacific/Apia",
    "America/Sao_Paulo",
    "UTC",
  ];
  const FIELDS: CalendarOp[] = ["weekday", "local_hour", "local_minute_of_day"];
  const rules = ZONES.flatMap((z, i) => FIELDS.map((f) => `rule r${i}_${f} when ${f}(requested_at, "${z}") == -1 reject "never"`));
  const ir = irOf(rules.join("\n"));
  /** Each field's value, read from the runtime through the IR's own nodes. */
  const fields = ir.rules.map((r) => {
    const when = r.when as Extract<PolicyIr["rules"][number]["when"], { op: "cmp" }>;
    const node = when.left as Extract<typeof when.left, { op: "calendar" }>;
    const probe: PolicyIr = {
      ...ir,
      rules: [{ id: "p", verdict: "reject", reason: "p", when: { op: "calendar", fn: node.fn, arg: node.arg, zone: node.zone } }],
      zones: { ...ir.zones!, tables: { [node.zone]: ir.zones!.tables[node.zone]! } },
    };
    return { fn: node.fn, zone: node.zone, probe };
  });

  it("for random instants across the horizon", () => {
    const [from, to] = ZONE_HORIZON;
    fc.assert(
      fc.property(fc.integer({ min: from * 1000, max: to * 1000 - 1 }), (ms) => {
        const t = new Date(ms).toISOString();
        for (const { fn, zone, probe } of fields) {
          const value = valueOf(probe, t);
          if (value !== intlField(fn, ms, zone)) return false;
        }
        return true;
      }),
      { numRuns: 2000, seed: 20_261_207 },
    );
  });

  it("around every transition of 2026 to 2027, a second before and at it", () => {
    for (const { fn, zone, probe } of fields) {
      for (const [s] of ir.zones!.tables[zone]!.filter(([s]) => s >= at("2026-01-01T00:00:00Z") && s < at("2028-01-01T00:00:00Z"))) {
        for (const ms of [s * 1000 - 1000, s * 1000])
          expect([zone, fn, ms, valueOf(probe, new Date(ms).toISOString())]).toEqual([zone, fn, ms, intlField(fn, ms, zone)]);
      }
    }
  });
});

/**
 * The value the calendar node computes, read from the runtime's explanation; the evaluator must agree (a rule
 * `field == value` decides).
 */
function valueOf(ir: PolicyIr, t: string): number {
  const value = explain(ir, { requested_at: t }).explanation.rules[0]!.condition.value as number;
  const field = ir.rules[0]!.when;
  const eq = { op: "cmp", cmp: "eq", kind: "number", left: field, right: { op: "lit", value } } as const;
  expect(preparePolicy({ ...ir, rules: [{ ...ir.rules[0]!, when: eq }] }).evaluate({ requested_at: t })).toMatchObject({ ruleId: "p" });
  return value;
}

describe("zones refused at compile time (E513), with the fix", () => {
  const refusal = (zone: string) => {
    const result = compile("t.writ", `${header}const NOT_A_ZONE = 3\nrule a when local_hour(requested_at, ${zone}) > 17 reject "a"\n`);
    return result.errors.map((e) => ({ code: e.code, message: e.message, notes: e.notes }));
  };
  it.each([
    ['"Europe/Londn"', "`Europe/Londn` is not an IANA time-zone name", ["did you mean `Europe/London`?"]],
    ['"europe/london"', "`europe/london` is not an IANA time-zone name", ["write it with its own case: `Europe/London`"]],
    ['"New York"', "`New York` is not an IANA time-zone name", ["a zone is named by its region and city: `America/New_York`"]],
    [
      '"Mars/Olympus"',
      "`Mars/Olympus` is not an IANA time-zone name",
      ["write an IANA time-zone name, such as `Europe/London`, `America/New_York` or `UTC`"],
    ],
  ])("%s", (zone, message, notes) => {
    expect(refusal(zone)).toEqual([{ code: "E513", message, notes }]);
  });

  it("a zone that is not a string literal or constant: the compiler must know it to embed its table", () => {
    for (const zone of ["requested_at", "NOT_A_ZONE"]) {
      expect(refusal(zone)).toEqual([
        expect.objectContaining({
          code: "E513",
          message: expect.stringMatching(/^the zone of `local_hour` must be a string literal or string constant, found /),
        }),
      ]);
    }
  });

  it("a field of something other than a timestamp is E503; links and UTC are names too", () => {
    const bad = compile("t.writ", `${header}rule a when weekday("2026-01-01T00:00:00Z", "UTC") > 5 reject "a"\n`);
    expect(bad.errors.map((e) => [e.code, e.message])).toEqual([["E503", "`weekday` needs a timestamp, found string"]]);
    for (const zone of ["UTC", "Asia/Kolkata", "US/Eastern", "Etc/GMT+5"]) expect(refusal(`"${zone}"`)).toEqual([]);
  });
});

describe("writ eval at the 2026 clock changes", () => {
  const cli = scratchCli();
  const POLICY = `${header}const LONDON = "Europe/London"
const NEW_YORK = "America/New_York"
rule probe when local_hour(requested_at, LONDON) == -1 or weekday(requested_at, NEW_YORK) == -1 or local_minute_of_day(requested_at, LONDON) == -1 or local_hour(requested_at, NEW_YORK) == -1 or weekday(requested_at, LONDON) == -1 reject "never"
otherwise approve "ok"
`;
  /** The explained values of the probe's fields, as `writ eval --explain` prints them. */
  async function fields(t: string): Promise<string[]> {
    writeFileSync(join(cli.cwd, "p.writ"), POLICY);
    writeFileSync(join(cli.cwd, "s.json"), JSON.stringify({ requested_at: t }));
    cli.out.length = 0;
    expect(await cli.run("eval", "p.writ", "--signals", "s.json", "--explain")).toBe(0);
    return cli.out.filter((l) => /^ +(local_|weekday)[^=]*$/.test(l)).map((l) => l.trim());
  }

  it.each([
    // Europe/London forward at 01:00 UTC: 01:00 to 02:00 local is skipped.
    ["2026-03-29T00:30:00Z", 0, 30, 7, "UTC+00:00", 20, 6, "UTC-04:00"],
    ["2026-03-29T01:30:00Z", 2, 150, 7, "UTC+01:00", 21, 6, "UTC-04:00"],
    ["2026-03-29T02:30:00Z", 3, 210, 7, "UTC+01:00", 22, 6, "UTC-04:00"],
    // Europe/London back at 01:00 UTC: 01:00 to 02:00 local is repeated.
    ["2026-10-25T00:30:00Z", 1, 90, 7, "UTC+01:00", 20, 6, "UTC-04:00"],
    ["2026-10-25T01:30:00Z", 1, 90, 7, "UTC+00:00", 21, 6, "UTC-04:00"],
    ["2026-10-25T02:30:00Z", 2, 150, 7, "UTC+00:00", 22, 6, "UTC-04:00"],
    // America/New_York forward at 07:00 UTC: 02:00 to 03:00 local is skipped.
    ["2026-03-08T06:30:00Z", 6, 390, 7, "UTC+00:00", 1, 7, "UTC-05:00"],
    ["2026-03-08T07:30:00Z", 7, 450, 7, "UTC+00:00", 3, 7, "UTC-04:00"],
    ["2026-03-08T08:30:00Z", 8, 510, 7, "UTC+00:00", 4, 7, "UTC-04:00"],
    // America/New_York back at 06:00 UTC: 01:00 to 02:00 local is repeated.
    ["2026-11-01T05:30:00Z", 5, 330, 7, "UTC+00:00", 1, 7, "UTC-04:00"],
    ["2026-11-01T06:30:00Z", 6, 390, 7, "UTC+00:00", 1, 7, "UTC-05:00"],
    ["2026-11-01T07:30:00Z", 7, 450, 7, "UTC+00:00", 2, 7, "UTC-05:00"],
  ])("%s", async (t, hour, minute, londonDay, london, nyHour, nyDay, ny) => {
    expect(await fields(t)).toEqual([
      `local_hour(requested_at, "Europe/London"): ${hour} (${london})`,
      `weekday(requested_at, "America/New_York"): ${nyDay} (${ny})`,
      `local_minute_of_day(requested_at, "Europe/London"): ${minute} (${london})`,
      `local_hour(requested_at, "America/New_York"): ${nyHour} (${ny})`,
      `weekday(requested_at, "Europe/London"): ${londonDay} (${london})`,
    ]);
  });

  it("an instant beyond the horizon faults: nothing is decided", async () => {
    writeFileSync(join(cli.cwd, "p.writ"), POLICY);
    writeFileSync(join(cli.cwd, "s.json"), JSON.stringify({ requested_at: "2100-01-01T00:00:00Z" }));
    cli.out.length = 0;
    await cli.run("eval", "p.writ", "--signals", "s.json");
    expect(cli.out.join("\n")).toContain("EVAL-004");
  });
});
