/** The matchers of docs/conformance.md: each operator both ways (it holds, it fails with a message at its pointer). */
import { describe, expect, it } from "vitest";
import { checkMatcher, deepEqual, holdsWhenMissing, isIsoTime, match, type MatchContext } from "../src/matchers.js";

const captures: Record<string, unknown> = { att: { a: 1, b: [1, 2] }, id: "abc" };
const ctx: MatchContext = {
  lookup: (name) => (Object.hasOwn(captures, name) ? { found: true, value: captures[name] } : { found: false }),
};
const messages = (expected: unknown, actual: unknown) => match(expected, actual, "", ctx).map((m) => `${m.at || "/"}: ${m.message}`);

describe("structural matching", () => {
  it("scalars match equal scalars only", () => {
    expect(messages("approved", "approved")).toEqual([]);
    expect(messages(200, 200)).toEqual([]);
    expect(messages(false, false)).toEqual([]);
    expect(messages(null, null)).toEqual([]);
    expect(messages("approved", "rejected")).toEqual(['/: expected "approved", got "rejected"']);
    expect(messages(1, "1")).toEqual(['/: expected 1, got "1"']);
    expect(messages(false, null)).toEqual(["/: expected false, got null"]);
  });

  it("an object matches an object with every listed member; extra members are allowed", () => {
    expect(messages({ a: 1 }, { a: 1, b: 2 })).toEqual([]);
    expect(messages({ a: 1, c: { d: "x" } }, { a: 2, c: { d: "y" } })).toEqual(["/a: expected 1, got 2", '/c/d: expected "x", got "y"']);
    expect(messages({ a: { $type: "string" } }, {})).toEqual(["/a: missing, expected string"]);
    expect(messages({ a: 1 }, [1])).toEqual(["/: expected an object, got [1]"]);
  });

  it("member names with / and ~ are escaped in pointers", () => {
    expect(messages({ "a/b": { "c~d": 1 } }, { "a/b": { "c~d": 2 } })).toEqual(["/a~1b/c~0d: expected 1, got 2"]);
  });

  it("an array matches an array of the same length element by element", () => {
    expect(messages([1, { a: 2 }], [1, { a: 2, b: 3 }])).toEqual([]);
    expect(messages([1, 2], [1, 2, 3])).toEqual(["/: expected an array of length 2, got length 3: [1,2,3]"]);
    expect(messages([1, 2], [1, 3])).toEqual(["/1: expected 2, got 3"]);
    expect(messages([], {})).toEqual(["/: expected an array, got {}"]);
  });
});

describe("operators", () => {
  it("$type", () => {
    for (const [type, value] of [
      ["string", "x"],
      ["number", 1.5],
      ["integer", 3],
      ["boolean", true],
      ["object", {}],
      ["array", []],
      ["null", null],
    ] as const) {
      expect(messages({ $type: type }, value)).toEqual([]);
    }
    expect(messages({ $type: "integer" }, 1.5)).toEqual(["/: expected integer, got number 1.5"]);
    expect(messages({ $type: "number" }, 3)).toEqual([]);
    expect(messages({ $type: "object" }, [])).toEqual(["/: expected object, got array []"]);
    expect(messages({ $type: "object" }, null)).toEqual(["/: expected object, got null null"]);
  });

  it("$regex (ECMAScript, unicode)", () => {
    expect(messages({ $regex: "^\\[INV-013@replay\\] " }, "[INV-013@replay] execution already consumed")).toEqual([]);
    expect(messages({ $regex: "^a$" }, "b")).toEqual(['/: expected a string matching /^a$/, got "b"']);
    expect(messages({ $regex: "^1$" }, 1)).toEqual(["/: expected a string matching /^1$/, got 1"]);
  });

  it("$absent as a member value", () => {
    expect(messages({ signature: { $absent: true } }, { a: 1 })).toEqual([]);
    expect(messages({ signature: { $absent: true } }, { signature: "x" })).toEqual(['/signature: expected no such member, got "x"']);
  });

  it("$exact allows no extra members anywhere", () => {
    expect(messages({ $exact: { error: "Unauthorized" } }, { error: "Unauthorized" })).toEqual([]);
    expect(messages({ $exact: { error: "Unauthorized" } }, { error: "Unauthorized", detail: "x" })).toEqual([
      '/: expected exactly {"error":"Unauthorized"}, got {"error":"Unauthorized","detail":"x"}',
    ]);
  });

  it("$oneOf takes matchers", () => {
    expect(messages({ $oneOf: ["env", "disk"] }, "disk")).toEqual([]);
    expect(messages({ $oneOf: [{ $type: "integer" }, "x"] }, 4)).toEqual([]);
    expect(messages({ $oneOf: ["env", "disk"] }, "memory")).toEqual(['/: expected one of ["env","disk"], got "memory"']);
  });

  it("$each, $length, $minLength, $maxLength", () => {
    expect(messages({ $each: { $type: "string" } }, ["a", "b"])).toEqual([]);
    expect(messages({ $each: { $type: "string" } }, [])).toEqual([]);
    expect(messages({ $each: { $type: "string" } }, ["a", 2])).toEqual(["/1: expected string, got integer 2"]);
    expect(messages({ $each: 1 }, "no")).toEqual(['/: expected an array, got "no"']);
    expect(messages({ $length: 2 }, [1, 2])).toEqual([]);
    expect(messages({ $length: 2 }, "abc")).toEqual(["/: expected length 2, got length 3"]);
    expect(messages({ $minLength: 1 }, [])).toEqual(["/: expected length at least 1, got length 0"]);
    expect(messages({ $maxLength: 1 }, [1, 2])).toEqual(["/: expected length at most 1, got length 2"]);
    expect(messages({ $maxLength: 1 }, 5)).toEqual(["/: expected an array or string, got 5"]);
  });

  it("$gte and $lte", () => {
    expect(messages({ $gte: 1, $lte: 3 }, 2)).toEqual([]);
    expect(messages({ $gte: 1, $lte: 3 }, 4)).toEqual(["/: expected a number <= 3, got 4"]);
    expect(messages({ $gte: 1 }, "5")).toEqual(['/: expected a number >= 1, got "5"']);
  });

  it("several operators in one object must all hold", () => {
    expect(messages({ $type: "array", $minLength: 1, $each: { $type: "string" } }, [])).toEqual([
      "/: expected length at least 1, got length 0",
    ]);
  });

  it("$captured compares deeply with a capture", () => {
    expect(messages({ $captured: "att" }, { a: 1, b: [1, 2] })).toEqual([]);
    expect(messages({ $captured: "att" }, { a: 1, b: [1, 2], c: 3 })).toEqual([
      '/: expected {"a":1,"b":[1,2]} (captured `att`), got {"a":1,"b":[1,2],"c":3}',
    ]);
    expect(messages({ $captured: "nothing" }, 1)).toEqual(["/: nothing was captured as `nothing`"]);
  });

  it("$isoTime", () => {
    expect(messages({ $isoTime: true }, "2026-11-22T06:15:53.312Z")).toEqual([]);
    expect(messages({ $isoTime: true }, "2026-11-22")).toEqual(['/: expected ISO 8601 date-time, got "2026-11-22"']);
    expect(isIsoTime("2026-11-22T06:15:53+01:00")).toBe(true);
    expect(isIsoTime("2026-11-22T06:15")).toBe(true);
    expect(isIsoTime("2026-02-30T00:00:00Z")).toBe(false);
    expect(isIsoTime("2026-13-01T00:00:00Z")).toBe(false);
    expect(isIsoTime("yesterday")).toBe(false);
    expect(isIsoTime(1_700_000_000)).toBe(false);
  });

  it("$isoTime: {withinSeconds: N} is a date-time within N seconds of when the request was sent", () => {
    const sentAt = new Date("2026-11-22T06:15:53.000Z");
    const at = (expected: unknown, actual: unknown) =>
      match(expected, actual, "", { ...ctx, sentAt }).map((m) => `${m.at || "/"}: ${m.message}`);
    const within = { $isoTime: { withinSeconds: 120 } };
    expect(at(within, "2026-11-22T06:15:53.000Z")).toEqual([]);
    expect(at(within, "2026-11-22T06:15:53.900Z")).toEqual([]);
    expect(at(within, "2026-11-22T06:17:53.000Z")).toEqual([]);
    expect(at(within, "2026-11-22T06:13:53Z")).toEqual([]);
    expect(at(within, "2026-11-22T07:16:00+01:00")).toEqual([]);
    expect(at(within, "2026-11-22T06:17:53.001Z")).toEqual([
      '/: expected an ISO 8601 date-time within 120 s of when the request was sent (2026-11-22T06:15:53.000Z), got "2026-11-22T06:17:53.001Z", 120.001 s after it',
    ]);
    expect(at(within, "2001-01-01T00:00:00.000Z")).toEqual([
      expect.stringMatching(
        /^\/: expected an ISO 8601 date-time within 120 s of when the request was sent \(2026-11-22T06:15:53.000Z\), got "2001-01-01T00:00:00.000Z", [0-9.]+ s before it$/,
      ),
    ]);
    expect(at({ $isoTime: { withinSeconds: 0 } }, "2026-11-22T06:15:53Z")).toEqual([]);
    expect(at({ $isoTime: { withinSeconds: 0 } }, "2026-11-22T06:15:53.001Z")).toHaveLength(1);
    expect(at(within, "2026-11-22")).toEqual([
      '/: expected an ISO 8601 date-time within 120 s of when the request was sent (2026-11-22T06:15:53.000Z), got "2026-11-22"',
    ]);
    expect(at(within, 1_700_000_000)).toHaveLength(1);
    expect(at({ createdAt: within }, {})).toEqual(['/createdAt: missing, expected $isoTime {"withinSeconds":120}']);
    // Without a request (no send time) it cannot hold; `true` still needs no send time.
    expect(messages(within, "2026-11-22T06:15:53.000Z")).toEqual([
      "/: expected an ISO 8601 date-time within 120 s of when the request was sent, but no request was sent here",
    ]);
    expect(messages({ $isoTime: true }, "2001-01-01T00:00:00.000Z")).toEqual([]);
  });

  it("$not holds when its matcher does not", () => {
    expect(messages({ $not: "x" }, "y")).toEqual([]);
    expect(messages({ $not: "x" }, "x")).toEqual(['/: expected anything but "x", got "x"']);
    expect(messages({ $not: { $captured: "id" } }, "abd")).toEqual([]);
    expect(messages({ $not: { $captured: "id" } }, "abc")).toEqual(['/: expected anything but $captured "id", got "abc"']);
    expect(messages({ $not: { $captured: "att" } }, { a: 1, b: [1, 2], c: 3 })).toEqual([]);
    expect(messages({ $not: { $type: "string" } }, 1)).toEqual([]);
    expect(messages({ $not: { $type: "string" } }, "1")).toEqual(['/: expected anything but string, got "1"']);
    expect(messages({ $not: { $oneOf: ["a", "b"] } }, "c")).toEqual([]);
    expect(messages({ $not: { $oneOf: ["a", "b"] } }, "b")).toEqual(['/: expected anything but $oneOf ["a","b"], got "b"']);
    expect(messages({ $not: { $not: 1 } }, 1)).toEqual([]);
    expect(messages({ $not: { $not: 1 } }, 2)).toEqual(["/: expected anything but $not (1), got 2"]);
    // Beside other operators, all must hold.
    expect(messages({ $type: "string", $not: "2001-01-01T00:00:00.000Z" }, "2026-01-01T00:00:00.000Z")).toEqual([]);
    expect(messages({ $type: "string", $not: "2001-01-01T00:00:00.000Z" }, "2001-01-01T00:00:00.000Z")).toEqual([
      '/: expected anything but "2001-01-01T00:00:00.000Z", got "2001-01-01T00:00:00.000Z"',
    ]);
    expect(messages({ $each: { $not: 0 } }, [1, 0, 2])).toEqual(["/1: expected anything but 0, got 0"]);
  });

  it("$not as a member value: a missing member does not match M, so $not holds (unless M is about absence)", () => {
    expect(messages({ id: { $not: "x" } }, {})).toEqual([]);
    expect(messages({ id: { $not: { $captured: "id" } } }, { other: 1 })).toEqual([]);
    expect(messages({ id: { $not: "x" } }, { id: "x" })).toEqual(['/id: expected anything but "x", got "x"']);
    expect(messages({ id: { $not: "x" } }, { id: "y" })).toEqual([]);
    // `$type` beside `$not` requires the member.
    expect(messages({ id: { $type: "string", $not: { $captured: "id" } } }, {})).toEqual([
      '/id: missing, expected string, $not ($captured "id")',
    ]);
    expect(messages({ id: { $type: "string", $not: { $captured: "id" } } }, { id: "abc" })).toEqual([
      '/id: expected anything but $captured "id", got "abc"',
    ]);
    expect(messages({ id: { $type: "string", $not: { $captured: "id" } } }, { id: "other" })).toEqual([]);
    // `$not` of absence requires the member; `$not` of `$not` of a value requires it too.
    expect(messages({ id: { $not: { $absent: true } } }, {})).toEqual(["/id: missing, expected $not ($absent true)"]);
    expect(messages({ id: { $not: { $absent: true } } }, { id: null })).toEqual([]);
    expect(messages({ id: { $not: { $not: "x" } } }, {})).toEqual(['/id: missing, expected $not ($not ("x"))']);
    expect(messages({ id: { $oneOf: [{ $absent: true }, 1] } }, {})).toEqual([]);
    expect(holdsWhenMissing({ $not: { $type: "string" } })).toBe(true);
    expect(holdsWhenMissing({ $not: { $oneOf: [{ $absent: true }] } })).toBe(false);
    expect(holdsWhenMissing({ $type: "string" })).toBe(false);
    expect(holdsWhenMissing("x")).toBe(false);
    // Nothing at all (no body) is missing too.
    expect(messages({ $not: "x" }, undefined)).toEqual([]);
  });

  it("$json parses a string strictly and matches the value inside", () => {
    expect(messages({ $json: { match: true } }, '{"match":true,"x":1}')).toEqual([]);
    expect(messages({ proof: { $json: { match: true } } }, { proof: '{"match":false}' })).toEqual([
      "/proof(json)/match: expected true, got false",
    ]);
    expect(messages({ $json: {} }, '{"a":1,"a":2}')).toEqual(["/: expected a string of strict JSON: duplicate key `a` at line 1 column 8"]);
    expect(messages({ $json: {} }, {})).toEqual(["/: expected a string of JSON, got {}"]);
  });
});

describe("deepEqual", () => {
  it("ignores member order and nothing else", () => {
    expect(deepEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toBe(true);
    expect(deepEqual({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(deepEqual([1, 2], [2, 1])).toBe(false);
    expect(deepEqual(null, {})).toBe(false);
  });
});

describe("checkMatcher: a case file's matchers are checked when it is loaded", () => {
  const problems = (m: unknown) => checkMatcher(m, "/expect/body").map((p) => `${p.at}: ${p.message}`);

  it("accepts every operator well used", () => {
    expect(
      problems({
        a: { $type: "string", $regex: "^x", $minLength: 1, $maxLength: 3, $length: 2 },
        b: { $absent: true },
        c: { $oneOf: [1, { $type: "null" }] },
        d: { $each: { $gte: 0, $lte: 1 } },
        e: { $captured: "x", $isoTime: true, $exact: { any: ["thing"] } },
        f: { $json: { g: { $type: "boolean" } } },
        h: [{ $type: "array" }],
        i: { $isoTime: { withinSeconds: 120 }, $not: "2001-01-01T00:00:00.000Z" },
        j: { $isoTime: { withinSeconds: 0.5 } },
        k: { $not: { $captured: "uuid:tx" } },
        l: { $not: { $oneOf: [{ $absent: true }, { $not: { a: { $type: "string" } } }] } },
        m: { $isoTime: false, $captured: "uuid:tx_2.b-c" },
      }),
    ).toEqual([]);
  });

  it("names unknown operators, bad arguments and mixed objects with their pointers", () => {
    expect(
      problems({
        a: { $regx: "^x" },
        b: { $type: "text" },
        c: { $regex: "(" },
        d: { $length: -1 },
        e: { $oneOf: [] },
        f: { $type: "string", g: 1 },
        h: [{ $each: { $gte: "1" } }],
      }),
    ).toEqual([
      "/expect/body/a/$regx: is not an operator; known: $type, $regex, $absent, $exact, $oneOf, $each, $length, $minLength, $maxLength, $gte, $lte, $captured, $isoTime, $json, $not",
      "/expect/body/b/$type: must be one of string, number, integer, boolean, object, array, null",
      expect.stringMatching(/^\/expect\/body\/c\/\$regex: is not a valid regular expression: /),
      "/expect/body/d/$length: must be an integer >= 0",
      "/expect/body/e/$oneOf: must be a non-empty array of matchers",
      "/expect/body/f: mixes operators ($type) with members; put the operators in the member they check",
      "/expect/body/h/0/$each/$gte: must be a number",
    ]);
  });

  it("checks $isoTime's withinSeconds, the matcher inside $not, and how $captured names a generated UUID", () => {
    const isoTime = 'must be true, false or {"withinSeconds": N} with a number N >= 0';
    expect(
      problems({
        a: { $isoTime: { withinSeconds: -1 } },
        b: { $isoTime: { withinSeconds: "120" } },
        c: { $isoTime: { within: 120 } },
        d: { $isoTime: { withinSeconds: 120, from: "now" } },
        e: { $isoTime: {} },
        f: { $isoTime: 120 },
        g: { $not: { $regx: "x" } },
        h: { $not: { $not: { $type: "text" } } },
        i: { $not: { $type: "string", x: 1 } },
        j: { $captured: "uuid:tx:1a" },
        k: { $not: { $captured: "uuid:tx:5b:upper" } },
        l: { $captured: "" },
      }),
    ).toEqual([
      `/expect/body/a/$isoTime: ${isoTime}`,
      `/expect/body/b/$isoTime: ${isoTime}`,
      `/expect/body/c/$isoTime: ${isoTime}`,
      `/expect/body/d/$isoTime: ${isoTime}`,
      `/expect/body/e/$isoTime: ${isoTime}`,
      `/expect/body/f/$isoTime: ${isoTime}`,
      expect.stringMatching(/^\/expect\/body\/g\/\$not\/\$regx: is not an operator; known: .*\$not$/),
      "/expect/body/h/$not/$not/$type: must be one of string, number, integer, boolean, object, array, null",
      "/expect/body/i/$not: mixes operators ($type) with members; put the operators in the member they check",
      "/expect/body/j/$captured: `uuid:tx:1a`: a generated UUID is named `uuid:NAME`, without a version, variant or case suffix",
      "/expect/body/k/$not/$captured: `uuid:tx:5b:upper`: a generated UUID is named `uuid:NAME`, without a version, variant or case suffix",
      "/expect/body/l/$captured: must name a capture",
    ]);
  });
});
