/**
 * SERVICE_DATABASE_URL with several hosts, read as libpq reads it (storage/postgres/connection/hosts.ts): each host's
 * own URL is the same URL with that host alone, `target_session_attrs` is one of the supported values, malformed lists
 * are refused naming the variable and never the password, and `redactedUrl` hides the password of any accepted URL.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/env.js";
import { databaseConfig } from "../../../src/storage/postgres/config.js";
import { hostLabel, parseDatabaseUrl, redactedUrl } from "../../../src/storage/postgres/connection/hosts.js";

const SECRET = "s3cret-pass";

function refusal(url: string): string {
  try {
    parseDatabaseUrl(url);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`accepted: ${url}`);
}

describe("parseDatabaseUrl", () => {
  it.each([
    [
      "postgresql://writ@db1:5432,db2:5433/writ?target_session_attrs=read-write",
      "read-write",
      [
        ["db1", 5432, "postgresql://writ@db1:5432/writ?target_session_attrs=read-write"],
        ["db2", 5433, "postgresql://writ@db2:5433/writ?target_session_attrs=read-write"],
      ],
    ],
    [
      `postgres://writ:${SECRET}@db1,db2:6000,db3/writ?sslmode=verify-full&application_name=x`,
      "any",
      [
        ["db1", null, `postgres://writ:${SECRET}@db1/writ?sslmode=verify-full&application_name=x`],
        ["db2", 6000, `postgres://writ:${SECRET}@db2:6000/writ?sslmode=verify-full&application_name=x`],
        ["db3", null, `postgres://writ:${SECRET}@db3/writ?sslmode=verify-full&application_name=x`],
      ],
    ],
    [
      "postgresql://writ@[::1]:5432,[fd00::2]/writ?target_session_attrs=primary",
      "primary",
      [
        ["::1", 5432, "postgresql://writ@[::1]:5432/writ?target_session_attrs=primary"],
        ["fd00::2", null, "postgresql://writ@[fd00::2]/writ?target_session_attrs=primary"],
      ],
    ],
    [
      "postgresql://10.0.0.1,10.0.0.2",
      "any",
      [
        ["10.0.0.1", null, "postgresql://10.0.0.1"],
        ["10.0.0.2", null, "postgresql://10.0.0.2"],
      ],
    ],
  ])("%s", (url, attrs, hosts) => {
    const parsed = parseDatabaseUrl(url);
    expect(parsed.targetSessionAttrs).toBe(attrs);
    expect(parsed.hosts.map((h) => [h.host, h.port, h.url])).toEqual(hosts);
  });

  it("keeps a URL of one host exactly as written, as node-postgres reads it", () => {
    for (const url of [
      "postgresql://writ@db.internal:5432/writ?sslmode=verify-full",
      `postgres://writ:${SECRET}@db/writ`,
      "postgresql://writ@[::1]/writ",
      "postgresql:///writ?host=/var/run/postgresql",
      "postgresql://writ@db/writ?target_session_attrs=read-write",
    ]) {
      expect(parseDatabaseUrl(url).hosts.map((h) => h.url)).toEqual([url]);
    }
    expect(parseDatabaseUrl("postgresql://writ@[::1]:6543/writ").hosts[0]).toMatchObject({ host: "::1", port: 6543 });
    expect(parseDatabaseUrl("postgresql://writ@db/writ?target_session_attrs=read-write").targetSessionAttrs).toBe("read-write");
  });

  it.each([
    ["not a url", /^SERVICE_DATABASE_URL is not a URL/],
    [`http://writ:${SECRET}@db/writ`, /^SERVICE_DATABASE_URL must be a postgresql:\/\/ URL, not http:\/\/…$/],
    [`postgresql://writ:${SECRET}@db1,,db2/writ`, /^SERVICE_DATABASE_URL: host 2 of its host list is empty/],
    [`postgresql://writ:${SECRET}@db1,/writ`, /^SERVICE_DATABASE_URL: host 2 of its host list is empty/],
    [`postgresql://writ:${SECRET}@db1:0,db2/writ`, /^SERVICE_DATABASE_URL: host 1 of its host list is not a host\[:port\]/],
    [`postgresql://writ:${SECRET}@db1,db2:65536/writ`, /host 2 of its host list is not a host\[:port\]/],
    [`postgresql://writ:${SECRET}@db1,db2:port/writ`, /host 2 of its host list is not a host\[:port\]/],
    [`postgresql://writ:${SECRET}@db1,::1/writ`, /host 2 of its host list is not a host\[:port\]/],
    [`postgresql://writ:${SECRET}@db1,[::1/writ`, /host 2 of its host list is not a host\[:port\]/],
    [`postgresql://writ:${SECRET}@db1,db2/writ?host=db3`, /lists several hosts and also sets `host`/],
    [`postgresql://writ:${SECRET}@db1,db2/writ?port=5433`, /lists several hosts and also sets `port`/],
    [
      `postgresql://writ:${SECRET}@db1,db2/writ?target_session_attrs=read-only`,
      /^SERVICE_DATABASE_URL: target_session_attrs must be one of `any`, `read-write`, `primary`, not `read-only`$/,
    ],
    [`postgresql://writ:${SECRET}@db/writ?target_session_attrs=standby`, /target_session_attrs must be one of/],
    [`postgresql://writ:${SECRET}@db:99999/writ`, /^SERVICE_DATABASE_URL is not a URL/],
  ])("refuses %s", (url, message) => {
    const text = refusal(url);
    expect(text).toMatch(message);
    expect(text).not.toContain(SECRET);
  });

  it("names the variable it was given", () => {
    expect(() => parseDatabaseUrl("nope", "SERVICE_DATABASE_URL_FILE's content")).toThrow(
      /^SERVICE_DATABASE_URL_FILE's content is not a URL/,
    );
  });

  it("is what the configuration reads: several hosts accepted, malformed ones refused", () => {
    const url = "postgresql://writ@db1:5432,db2:5432/writ?target_session_attrs=read-write";
    expect(databaseConfig({ SERVICE_DATABASE_URL: url }).url).toBe(url);
    expect(() => databaseConfig({ SERVICE_DATABASE_URL: `postgresql://writ:${SECRET}@db1,,db2/writ` })).toThrow(/host 2 of its host list/);
  });

  it("property: any list of hosts and ports gives each host its own URL, in order, the rest of the URL kept", () => {
    const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}(\.[a-z][a-z0-9-]{0,10}){0,2}$/);
    const v6 = fc.ipV6().map((a) => ({ host: a, written: `[${a}]` }));
    const host = fc.oneof(
      name.map((n) => ({ host: n, written: n })),
      fc.ipV4().map((a) => ({ host: a, written: a })),
      v6,
    );
    const entry = fc.record({ host, port: fc.option(fc.integer({ min: 1, max: 65_535 }), { nil: null }) });
    const attrs = fc.constantFrom(null, "any", "read-write", "primary");
    fc.assert(
      fc.property(fc.array(entry, { minLength: 2, maxLength: 5 }), attrs, fc.boolean(), (entries, attr, withPassword) => {
        const list = entries.map((e) => `${e.host.written}${e.port === null ? "" : `:${e.port}`}`);
        const userinfo = withPassword ? `writ:${SECRET}@` : "writ@";
        const query = `?sslmode=require${attr === null ? "" : `&target_session_attrs=${attr}`}`;
        const parsed = parseDatabaseUrl(`postgresql://${userinfo}${list.join(",")}/writ${query}`);
        expect(parsed.targetSessionAttrs).toBe(attr ?? "any");
        expect(parsed.hosts).toHaveLength(entries.length);
        parsed.hosts.forEach((h, i) => {
          expect(h.url).toBe(`postgresql://${userinfo}${list[i]}/writ${query}`);
          // What node-postgres will read from the host's URL.
          const read = new URL(h.url);
          expect(read.hostname.replace(/^\[(.*)\]$/, "$1")).toBe(
            new URL(`postgresql://${entries[i]!.host.written}`).hostname.replace(/^\[(.*)\]$/, "$1"),
          );
          expect(h.port).toBe(entries[i]!.port);
          expect(hostLabel(h)).toBe(`${entries[i]!.host.written}:${entries[i]!.port ?? 5432}`);
        });
        const redacted = redactedUrl(`postgresql://${userinfo}${list.join(",")}/writ${query}`);
        expect(redacted).not.toContain(SECRET);
        expect(redacted).toBe(`postgresql://${withPassword ? "writ:***@" : "writ@"}${list.join(",")}/writ${query}`);
      }),
    );
  });
});

describe("redactedUrl", () => {
  it.each([
    [`postgresql://writ:${SECRET}@db:5432/writ`, "postgresql://writ:***@db:5432/writ"],
    [
      `postgresql://writ:${SECRET}@db1:5432,db2:5432/writ?target_session_attrs=read-write`,
      "postgresql://writ:***@db1:5432,db2:5432/writ?target_session_attrs=read-write",
    ],
    [`postgresql://writ@db/writ?sslmode=require&password=${SECRET}`, "postgresql://writ@db/writ?sslmode=require&password=***"],
    ["postgresql://writ@db/writ", "postgresql://writ@db/writ"],
    ["postgresql://writ:@db/writ", "postgresql://writ:@db/writ"],
    [`not a url ${SECRET}`, "(unparsable URL)"],
    [`postgresql://writ:${SECRET}@db1,,db2/writ`, "(unparsable URL)"],
  ])("%s", (url, shown) => {
    expect(redactedUrl(url)).toBe(shown);
  });
});
