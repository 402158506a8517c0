/**
 * Surface B's timestamps are real instants, by the runtime's `isTimestamp` (the definition Surface A applies): a date
 * that does not exist (`2026-02-30`, `2026-04-31`, February 29 of a common year) matches the ISO 8601 shape but is a
 * 400 `Invalid request` naming each such member, with nothing executed or stored. Before, `POST /execute` sealed
 * `2026-02-30T00:00:00Z` into a signed Trust Record.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TrustRecord } from "@writ/sidecar";
import { businessTransaction, startSurfaceB, type ErrorReply, type Json, type SurfaceB } from "./support.js";

let b: SurfaceB;
beforeAll(async () => {
  b = await startSurfaceB();
});
afterAll(async () => {
  await b.close();
});

const MESSAGE = "must be a date-time that exists, in RFC 3339 with a time zone, e.g. 2026-03-01T10:00:00Z";

const execute = <T = TrustRecord>(body: unknown) => b.call<T>("POST", "/execute", body);

/** The transaction with `section.member` set to `value`. */
function dated(section: string, member: string, value: string, base: Json = businessTransaction()): Json {
  return { ...base, [section]: { ...(base[section] as Json), [member]: value } };
}

const TIMESTAMPS = [
  ["metadata", "createdAt"],
  ["authority", "issuedAt"],
  ["authorization", "authorizedAt"],
  ["intent", "issuedAt"],
] as const;

describe("POST /execute refuses a date that does not exist", () => {
  it.each(TIMESTAMPS)("%s.%s = 2026-02-30T00:00:00Z: 400 with its path; nothing stored; the id stays usable", async (section, member) => {
    const body = dated(section, member, "2026-02-30T00:00:00Z");
    const r = await execute<ErrorReply>(body);
    expect({ status: r.status, body: r.body }).toEqual({
      status: 400,
      body: { error: "Invalid request", details: [{ path: `body/${section}/${member}`, message: MESSAGE }] },
    });
    const id = String(body["businessTransactionId"]);
    expect((await b.call("GET", `/trust-records/${id}`)).status).toBe(404);
    expect((await execute({ ...body, [section]: businessTransaction()[section] })).status).toBe(200);
  });

  it.each([
    ["April 31", "2026-04-31T10:00:00Z"],
    ["June 31", "2026-06-31T10:00:00+02:00"],
    ["February 29 of a common year", "2026-02-29T10:00:00Z"],
    ["February 29 of 2100 (divisible by 100, not by 400)", "2100-02-29T10:00:00Z"],
    ["a leap second", "2026-12-31T23:59:60Z"],
    ["no time zone", "2026-03-01T10:00:00"],
  ])("%s (%s)", async (_name, value) => {
    const r = await execute<ErrorReply>(dated("intent", "issuedAt", value));
    expect({ status: r.status, body: r.body }).toEqual({
      status: 400,
      body: { error: "Invalid request", details: [{ path: "body/intent/issuedAt", message: MESSAGE }] },
    });
  });

  it("names every impossible timestamp of the body at once", async () => {
    const body = dated("metadata", "createdAt", "2026-02-30T00:00:00Z", dated("authority", "issuedAt", "2026-11-31T00:00:00Z"));
    const r = await execute<ErrorReply>(body);
    expect(r.status).toBe(400);
    expect(r.body.details).toEqual([
      { path: "body/metadata/createdAt", message: MESSAGE },
      { path: "body/authority/issuedAt", message: MESSAGE },
    ]);
  });
});

describe("POST /execute keeps real dates as sent", () => {
  it.each([
    ["February 29 of a leap year", "2028-02-29T23:59:59.999Z"],
    ["February 29 of 2000 (divisible by 400)", "2000-02-29T00:00:00Z"],
    ["an offset", "2026-04-30T10:00:00-05:30"],
  ])("%s (%s)", async (_name, value) => {
    const r = await execute(dated("authorization", "authorizedAt", value));
    expect(r.status).toBe(200);
    expect(r.body.authorization?.authorizedAt).toBe(value);
  });
});
